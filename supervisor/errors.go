package supervisor

import (
	"errors"
	"fmt"
	"strings"
)

// ErrorCode classifies an operation error so that callers (the control
// socket, `subdash ctl`, the MCP server) can map it without parsing text.
type ErrorCode string

// The error codes of the operations of SPEC §3.
const (
	CodeInvalid    ErrorCode = "invalid"     // bad argument: empty message, empty ids, bad timeout
	CodeNotFound   ErrorCode = "not_found"   // unknown agent id
	CodeLimit      ErrorCode = "limit"       // concurrency limit reached
	CodeBusy       ErrorCode = "busy"        // agent running and interrupt not set
	CodeClosed     ErrorCode = "closed"      // agent closed
	CodeNotRunning ErrorCode = "not_running" // interrupt of an agent that runs nothing
	CodeShutdown   ErrorCode = "shutdown"    // the supervisor is shutting down
	CodeNested     ErrorCode = "nested"      // a subagent asked for agents of its own without --allow-nested
	CodeInternal   ErrorCode = "internal"    // I/O failure of ours (state directory, log file)
	CodeNotPending ErrorCode = "not_pending" // an approval answer for no pending request (SPEC §12)
	CodeNoQueue    ErrorCode = "no_queue"    // cancel of a queued message where none is queued
)

// Error is the error type of every operation. Its message is exactly the
// text of SPEC §3, e.g. "agent not found: <id>".
type Error struct {
	Code    ErrorCode
	Message string
}

// Error returns the spec's message.
func (e *Error) Error() string { return e.Message }

// CodeOf returns the ErrorCode of err, or CodeInternal when err is not an
// *Error.
func CodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

func errEmptyMessage() error {
	return &Error{CodeInvalid, "message must not be empty"}
}

// MaxMessageBytes is the longest message Spawn and Send take, in bytes
// (64 MiB). A task that long belongs in a file the message names; the limit
// keeps one request from taking the supervisor's memory.
const MaxMessageBytes = 64 << 20

// checkMessage returns message without surrounding white space, or the
// error for an empty or too long one.
func checkMessage(message string) (string, error) {
	msg := strings.TrimSpace(message)
	switch {
	case msg == "":
		return "", errEmptyMessage()
	case len(msg) > MaxMessageBytes:
		return "", &Error{CodeInvalid, fmt.Sprintf("message is %d bytes, longer than the limit of %d (64 MiB); put the task in a file and send its path", len(msg), MaxMessageBytes)}
	}
	return msg, nil
}

func errNotFound(id string) error {
	return &Error{CodeNotFound, "agent not found: " + id}
}

func errLimit(max int) error {
	return &Error{CodeLimit, fmt.Sprintf("subagent concurrency limit reached (%d)", max)}
}

func errClosed(id string) error {
	return &Error{CodeClosed, fmt.Sprintf("agent %s is closed; run resume_agent first", id)}
}

func errBusy(id string) error {
	return &Error{CodeBusy, fmt.Sprintf("agent %s is busy; set interrupt=true to cancel current submission", id)}
}

func errNotRunning(id string) error {
	return &Error{CodeNotRunning, fmt.Sprintf("agent %s is not running", id)}
}

func errShutdown() error {
	return &Error{CodeShutdown, "supervisor is shutting down; no new submissions are accepted"}
}
