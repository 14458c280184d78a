package proto

import (
	"errors"
	"fmt"
	"testing"
)

// The constructors give the texts of SPEC §3 (and §9-§11) letter for
// letter, with their codes: programs match on the texts, and every other
// test and fake uses the constructors, so this is where the texts are
// checked against the SPEC.
func TestErrorTextsAreTheSpecs(t *testing.T) {
	id := "3fa2c1d0-1111-4222-8333-444455556666"
	for _, c := range []struct {
		err  *Error
		code ErrorCode
		text string
	}{
		{ErrEmptyMessage(), CodeInvalid, "message must not be empty"},
		{ErrMessageTooLong(70000000, true), CodeTooLarge, "message is 70000000 bytes, longer than the limit of 67108864 (64 MiB); put the task in a file and send its path"},
		{ErrMessageTooLong(MaxMessageBytes, false), CodeTooLarge, "message is more than 67108864 bytes, longer than the limit of 67108864 (64 MiB); put the task in a file and send its path"},
		{ErrNotFound(id), CodeNotFound, "agent not found: " + id},
		{ErrLimit(4), CodeLimit, "subagent concurrency limit reached (4)"},
		{ErrClosed(id), CodeClosed, "agent " + id + " is closed; run resume_agent first"},
		{ErrBusy(id), CodeBusy, "agent " + id + " is busy; set interrupt=true to cancel current submission"},
		{ErrNotRunning(id), CodeNotRunning, "agent " + id + " is not running"},
		{ErrEmptyIDs(), CodeInvalid, "ids must not be empty"},
		{ErrTimeoutNotPositive(), CodeInvalid, "timeout_ms must be greater than zero"},
		{ErrShutdown(), CodeShutdown, "supervisor is shutting down; no new submissions are accepted"},
		{ErrNoQueue(id), CodeNoQueue, "agent " + id + " has no queued message"},
		{ErrForgetRunning(id), CodeBusy, "agent " + id + " is running; interrupt or close it before forgetting it"},
		{ErrNoPendingApproval(id), CodeNotPending, "agent " + id + " has no pending approval request"},
		{ErrNotPending(id, "r1", "denied"), CodeNotPending, "approval request r1 of agent " + id + " is no longer pending (denied); nothing was sent"},
		{ErrNoApprovalRequest(id, "r1"), CodeNotFound, "agent " + id + " has no approval request r1"},
		{ErrReadOnly("spawn"), CodeInvalid, "read-only viewer: spawn refused; attach without --read-only to change anything"},
	} {
		if c.err.Error() != c.text || c.err.Code != c.code {
			t.Errorf("got %q (%s), want %q (%s)", c.err.Error(), c.err.Code, c.text, c.code)
		}
		if wrapped := fmt.Errorf("spawn_agent failed: %w", c.err); CodeOf(wrapped) != c.code {
			t.Errorf("CodeOf(wrapped %q) = %s, want %s", c.text, CodeOf(wrapped), c.code)
		}
	}
	if CodeOf(errors.New("disk full")) != CodeInternal {
		t.Error("an error that is not an *Error is not internal")
	}
}
