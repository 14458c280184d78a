package proto

import (
	"bytes"
	"encoding/json"
	"time"
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
	// the layout's bytes need no escaping: one allocation, not three
	b := make([]byte, 0, len(timeLayout)+4)
	b = append(t.UTC().AppendFormat(append(b, '"'), timeLayout), '"')
	return b, nil
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

// StatusForgotten is the status Forget reports for the agent it removed.
const StatusForgotten Status = "forgotten"
