package proto

import (
	"errors"
	"fmt"
)

// ErrorCode classifies an operation error so that callers (the control
// socket, `subdash ctl`, the MCP server) can map it without parsing text.
type ErrorCode string

// The error codes of the operations of SPEC §3.
const (
	CodeInvalid    ErrorCode = "invalid"       // bad argument: empty message, empty ids, bad timeout
	CodeNotFound   ErrorCode = "not_found"     // unknown agent id
	CodeLimit      ErrorCode = "limit"         // concurrency limit reached
	CodeBusy       ErrorCode = "busy"          // agent running and interrupt not set
	CodeClosed     ErrorCode = "closed"        // agent closed
	CodeNotRunning ErrorCode = "not_running"   // interrupt of an agent that runs nothing
	CodeShutdown   ErrorCode = "shutdown"      // the supervisor is shutting down
	CodeNested     ErrorCode = "nested"        // a subagent asked for agents of its own without --allow-nested
	CodeInternal   ErrorCode = "internal"      // I/O failure of ours (state directory, log file)
	CodeNotPending ErrorCode = "not_pending"   // an approval answer for no pending request (SPEC §12)
	CodeNoQueue    ErrorCode = "no_queue"      // cancel of a queued message where none is queued
	CodeExists     ErrorCode = "exists"        // a spawn's agent path is held by another agent (SPEC §14)
	CodeNoSteer    ErrorCode = "not_steerable" // steer of an agent that reads its message once (SPEC §11)
	CodeBudget     ErrorCode = "budget"        // the agent's or the host's budget is spent (SPEC §11 "Budgets")
	CodeTooLarge   ErrorCode = "too_large"     // a message or a request body over its limit (SPEC §3, §6)
)

// Error is the error type of every operation. Its message is exactly the
// text of SPEC §3, e.g. "agent not found: <id>": make it with the
// constructors below (ErrNotFound, ErrBusy, …), which hold the texts in one
// place for the supervisor, the clients and the tests.
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

// MaxMessageBytes is the longest message Spawn and Send take, in bytes
// (64 MiB). A task that long belongs in a file the message names; the limit
// keeps one request from taking the supervisor's memory.
const MaxMessageBytes = 64 << 20

// The errors whose texts SPEC §3 (and §9-§11) fixes: programs match on
// them, so every front-end returns them unchanged. Each returns a new
// *Error.

// MaxWindowItems is the most lines or transcript entries one window call
// of the control socket asks for (GET /v1/agents/{id}/window and
// .../transcript, their n): a host refuses more with ErrWindowCount.
const MaxWindowItems = 100000

// ErrWindowCount is a window call's error for a count n (as it came, so
// "n=abc" shows abc) that is not a number of 0 to MaxWindowItems.
func ErrWindowCount(n string) *Error {
	return &Error{CodeInvalid, fmt.Sprintf("n must be a count of 0 to %d, not %q", MaxWindowItems, n)}
}

// ErrEmptyMessage is spawn's and send's error for a message that is empty
// once trimmed (SPEC §3): "message must not be empty".
func ErrEmptyMessage() *Error { return &Error{CodeInvalid, "message must not be empty"} }

// ErrMessageTooLong is the error for a message of size bytes, over
// MaxMessageBytes (SPEC §3); exact is false when size is only how much was
// read before giving up ("more than size bytes").
func ErrMessageTooLong(size int64, exact bool) *Error {
	what := fmt.Sprintf("%d bytes", size)
	if !exact {
		what = fmt.Sprintf("more than %d bytes", size)
	}
	return &Error{CodeTooLarge, fmt.Sprintf("message is %s, longer than the limit of %d (64 MiB); put the task in a file and send its path", what, MaxMessageBytes)}
}

// ErrNotFound is the error for an unknown agent id (SPEC §3): "agent not
// found: <id>".
func ErrNotFound(id string) *Error { return &Error{CodeNotFound, "agent not found: " + id} }

// ErrLimit is spawn's and send's error at the limit of limit running
// submissions (SPEC §3): "subagent concurrency limit reached (<limit>)".
func ErrLimit(limit int) *Error {
	return &Error{CodeLimit, fmt.Sprintf("subagent concurrency limit reached (%d)", limit)}
}

// ErrClosed is send's error for a closed agent (SPEC §3).
func ErrClosed(id string) *Error {
	return &Error{CodeClosed, fmt.Sprintf("agent %s is closed; run resume_agent first", id)}
}

// ErrBusy is send's error for a running agent without interrupt (SPEC §3).
func ErrBusy(id string) *Error {
	return &Error{CodeBusy, fmt.Sprintf("agent %s is busy; set interrupt=true to cancel current submission", id)}
}

// ErrNotRunning is interrupt's error for an agent that runs nothing
// (SPEC §3).
func ErrNotRunning(id string) *Error {
	return &Error{CodeNotRunning, fmt.Sprintf("agent %s is not running", id)}
}

// ErrEmptyIDs is wait's error for no ids (SPEC §3).
func ErrEmptyIDs() *Error { return &Error{CodeInvalid, "ids must not be empty"} }

// ErrTimeoutNotPositive is wait's error for a timeout_ms of zero or less
// (SPEC §3).
func ErrTimeoutNotPositive() *Error {
	return &Error{CodeInvalid, "timeout_ms must be greater than zero"}
}

// ErrShutdown is the error of an operation that would start a submission
// while the host shuts down (SPEC §4).
func ErrShutdown() *Error {
	return &Error{CodeShutdown, "supervisor is shutting down; no new submissions are accepted"}
}

// ErrNoQueue is cancel-queue's error for an agent with no queued message
// (SPEC §11).
func ErrNoQueue(id string) *Error {
	return &Error{CodeNoQueue, fmt.Sprintf("agent %s has no queued message", id)}
}

// ErrForgetRunning is forget's error for an agent that still runs (SPEC
// §10).
func ErrForgetRunning(id string) *Error {
	return &Error{CodeBusy, fmt.Sprintf("agent %s is running; interrupt or close it before forgetting it", id)}
}

// ErrReadOnly is the error of operation op on a viewer attached with
// --read-only (SPEC §9).
func ErrReadOnly(op string) *Error {
	return &Error{CodeInvalid, fmt.Sprintf("read-only viewer: %s refused; attach without --read-only to change anything", op)}
}

// ErrNoPendingApproval is the error of an answer without a request id to
// an agent that has no pending tool permission request (SPEC §12).
func ErrNoPendingApproval(id string) *Error {
	return &Error{CodeNotPending, fmt.Sprintf("agent %s has no pending approval request", id)}
}

// ErrNotPending is the error of an answer to request requestID of agent
// id that was answered already, how ("allowed", "denied", …) saying
// how (SPEC §12): nothing is sent to the agent.
func ErrNotPending(id, requestID, how string) *Error {
	return &Error{CodeNotPending, fmt.Sprintf("approval request %s of agent %s is no longer pending (%s); nothing was sent", requestID, id, how)}
}

// ErrNoApprovalRequest is the error of an answer to a request id that
// agent id never had (SPEC §12).
func ErrNoApprovalRequest(id, requestID string) *Error {
	return &Error{CodeNotFound, fmt.Sprintf("agent %s has no approval request %s", id, requestID)}
}

// ErrBudget is the refusal of a spawn, send, queue or steer once a budget
// is spent (SPEC §11 "Budgets"): why says which, with the figures, e.g.
// "fleet budget reached: $10.02 of $10.00 spent since this host started;
// raise --fleet-budget-usd".
func ErrBudget(why string) *Error { return &Error{CodeBudget, why} }
