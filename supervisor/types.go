package supervisor

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// Status is the status of an agent (SPEC §1).
type Status string

// The statuses of an agent. Completed, Errored, Closed and NotFound are final.
const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusErrored   Status = "errored"
	StatusClosed    Status = "closed"
	// StatusNotFound is reported by Wait only, for an unknown id.
	StatusNotFound Status = "not_found"
)

// Final reports whether s is a final status: completed, errored, closed or
// not_found (SPEC §1).
func (s Status) Final() bool {
	switch s {
	case StatusCompleted, StatusErrored, StatusClosed, StatusNotFound:
		return true
	}
	return false
}

// Time is a time.Time that encodes to JSON as RFC 3339 in UTC with
// millisecond precision, e.g. "2026-11-30T13:45:00.123Z".
type Time struct{ time.Time }

// timeLayout is RFC 3339 with a fixed three-digit fraction.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON encodes t as an RFC 3339 string, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(timeLayout))
}

// UnmarshalJSON decodes an RFC 3339 string or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	if n := len(b); n > 2 && b[0] == '"' && b[n-1] == '"' && bytes.IndexByte(b[1:n-1], '\\') < 0 {
		// the common case, without a second decode: records hold
		// thousands of times (SPEC §10 start-up)
		v, err := time.Parse(time.RFC3339Nano, string(b[1:n-1]))
		t.Time = v
		return err
	}
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == nil {
		t.Time = time.Time{}
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, *s)
	t.Time = v
	return err
}

// Summary is an agent's summary as returned by list (SPEC §3): the spawn
// result's fields without submission_id. SessionID is the agent CLI's session
// or thread id for presets (SPEC §8), omitted when there is none.
type Summary struct {
	AgentID          string `json:"agent_id"`
	Status           Status `json:"status"`
	CreatedAt        Time   `json:"created_at"`
	UpdatedAt        Time   `json:"updated_at"`
	LastMessage      string `json:"last_message"`
	LastSubmissionID string `json:"last_submission_id"`
	HasLastOutput    bool   `json:"has_last_output"`
	HasLastError     bool   `json:"has_last_error"`
	SessionID        string `json:"session_id,omitempty"`
	// Restored is true for an agent restored from an earlier run of its
	// host (SPEC §10).
	Restored bool `json:"restored,omitempty"`
	// PendingApprovals are the tool permission requests that wait for an
	// answer, oldest first (--approvals, SPEC §12); omitted when none.
	PendingApprovals []PendingApproval `json:"pending_approvals,omitempty"`
	// NeedsYou says why the agent needs the user (SPEC §11); omitted when
	// it does not.
	NeedsYou *Attention `json:"needs_you,omitempty"`
	// QueuedMessage is the message queued to start when the running
	// submission ends (SPEC §11), cut as LastMessage in JSON; omitted when
	// none is queued.
	QueuedMessage string `json:"queued_message,omitempty"`
	// Pod and Node say where the agent's latest submission runs with the
	// Kubernetes runner (SPEC §13); omitted for the local runner.
	Pod  string `json:"pod,omitempty"`
	Node string `json:"node,omitempty"`
	// Failure says in words, with the path, what subdash failed to do for
	// this agent: its latest submission's log file or the journal could
	// not be written (SPEC §5); omitted when nothing failed.
	Failure string `json:"failure,omitempty"`
}

// SpawnResult is the result of Spawn (SPEC §3 spawn): the new agent's summary
// plus the id of its first submission.
type SpawnResult struct {
	Summary
	SubmissionID string `json:"submission_id"`
}

// MaxJSONMessage is the length, in characters, at which last_message is cut
// in JSON results (list, wait, spawn): a message may be megabytes (a diff
// sent with `ctl send ID -`), and an orchestrating model reads these results
// into its context. The cut keeps the head and ends with "...[truncated]".
// Go callers (the dashboard's resend) get the whole message.
const MaxJSONMessage = 2000

// summaryFields is Summary without its methods, for encoding.
type summaryFields Summary

// MarshalJSON encodes the summary with last_message cut at MaxJSONMessage.
func (s Summary) MarshalJSON() ([]byte, error) {
	f := summaryFields(s)
	f.LastMessage = capMessage(f.LastMessage)
	f.QueuedMessage = capMessage(f.QueuedMessage)
	return json.Marshal(f)
}

// MarshalJSON encodes the spawn result with last_message cut at
// MaxJSONMessage.
func (r SpawnResult) MarshalJSON() ([]byte, error) {
	f := struct {
		summaryFields
		SubmissionID string `json:"submission_id"`
	}{summaryFields(r.Summary), r.SubmissionID}
	f.LastMessage = capMessage(f.LastMessage)
	f.QueuedMessage = capMessage(f.QueuedMessage)
	return json.Marshal(f)
}

// capMessage cuts s to MaxJSONMessage characters, marking the cut.
func capMessage(s string) string {
	if utf8.RuneCountInString(s) <= MaxJSONMessage {
		return s
	}
	const marker = "...[truncated]"
	n := MaxJSONMessage - len(marker)
	for i := range s {
		if n == 0 {
			return s[:i] + marker
		}
		n--
	}
	return s
}

// SendResult is the result of Send (SPEC §3 send) and Queue. Queued is
// true when Queue kept the message to start after the running submission
// (SubmissionID is then ""); DroppedQueued is set when a send with
// interrupt dropped a queued message (SPEC §11).
type SendResult struct {
	AgentID       string `json:"agent_id"`
	Status        Status `json:"status"`
	SubmissionID  string `json:"submission_id"`
	Queued        bool   `json:"queued,omitempty"`
	DroppedQueued bool   `json:"dropped_queued_message,omitempty"`
}

// StatusResult is the result of Interrupt, Close, Resume and CancelQueue:
// the agent's id and its status after the operation. DroppedQueued is set
// when the operation dropped (or, for CancelQueue, cancelled) a queued
// message (SPEC §11).
type StatusResult struct {
	AgentID       string `json:"agent_id"`
	Status        Status `json:"status"`
	DroppedQueued bool   `json:"dropped_queued_message,omitempty"`
}

// WaitDetail is what Wait reports for one final id (SPEC §3 wait). For an
// unknown id every field but Status is null.
type WaitDetail struct {
	Status           Status  `json:"status"`
	LastMessage      *string `json:"last_message"`
	LastOutput       *string `json:"last_output"`
	LastError        *string `json:"last_error"`
	LastSubmissionID *string `json:"last_submission_id"`
	UpdatedAt        *Time   `json:"updated_at"`
	SessionID        string  `json:"session_id,omitempty"`
	// Failure is Summary.Failure (SPEC §5).
	Failure string `json:"failure,omitempty"`
}

// waitDetailFields is WaitDetail without its methods, for encoding.
type waitDetailFields WaitDetail

// MarshalJSON encodes the detail with last_message cut at MaxJSONMessage.
func (d WaitDetail) MarshalJSON() ([]byte, error) {
	f := waitDetailFields(d)
	if f.LastMessage != nil {
		m := capMessage(*f.LastMessage)
		f.LastMessage = &m
	}
	return json.Marshal(f)
}

// WaitResult is the result of Wait. Status and Details hold only the final
// ids; on timeout both are empty (never null) and TimedOut is true.
type WaitResult struct {
	Status   map[string]Status     `json:"status"`
	Details  map[string]WaitDetail `json:"details"`
	TimedOut bool                  `json:"timed_out"`
}
