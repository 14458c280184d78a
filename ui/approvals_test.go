package ui

import (
	"context"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// Approve answers a pending request of the fake (SPEC §12): like the
// supervisor, a request that is no longer pending is an error.
func (f *fakeSup) Approve(ctx context.Context, id, requestID string, always bool) (proto.ApprovalResult, error) {
	f.noIO("Approve")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("approve %s %s always=%v", id[:8], requestID, always)
	return f.answer(id, requestID, map[bool]string{true: proto.DecisionAllowAlways, false: proto.DecisionAllow}[always], "")
}

// Deny refuses a pending request of the fake.
func (f *fakeSup) Deny(ctx context.Context, id, requestID, message string) (proto.ApprovalResult, error) {
	f.noIO("Deny")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("deny %s %s %q", id[:8], requestID, message)
	return f.answer(id, requestID, proto.DecisionDeny, message)
}

func (f *fakeSup) answer(id, rid, decision, message string) (proto.ApprovalResult, error) {
	a := f.find(id)
	for i, p := range a.info.PendingApprovals {
		if p.RequestID == rid {
			a.info.PendingApprovals = append(a.info.PendingApprovals[:i:i], a.info.PendingApprovals[i+1:]...)
			f.changed(id)
			return proto.ApprovalResult{AgentID: id, RequestID: rid, Tool: p.Tool, Summary: p.Summary, Decision: decision, Message: message}, nil
		}
	}
	return proto.ApprovalResult{}, proto.ErrNotPending(id, rid, "allowed")
}

// ask adds a pending request to agent id of the fake.
func (f *fakeSup) ask(id, rid, tool, summary string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.find(id)
	a.info.PendingApprovals = append(a.info.PendingApprovals, proto.PendingApproval{RequestID: rid, Tool: tool, Summary: summary})
	a.info.Activity = proto.ApprovalActivity(a.info.PendingApprovals[0])
}

func approvalsFake() *fakeSup {
	f := threeAgents()
	f.cfg.PresetName, f.cfg.PresetFormat, f.cfg.Approvals = "claude", "claude", true
	f.ask(idA, "req-1", "Bash", "touch FILE")
	f.ask(idA, "req-2", "Write", "notes.md")
	return f
}

func TestApprovalOnScreen(t *testing.T) {
	h := newHarness(t, approvalsFake(), 140, 30)
	h.wantScreen("y allow Bash touch FILE (1 of 2)")
	h.wantScreen("Y allow Bash for the session")
	h.wantScreen("d deny")
	h.wantScreen("⚠ 2 need approval")
	h.wantScreen("→ needs approval: Ba")
	// Another agent selected: its help line, no request on screen.
	h.keys("j")
	h.noScreen("y allow")
	h.keys("y")
	h.wantScreen("agent 7b9e4c21: no tool permission request is pending")
	h.wantCalls()
}

func TestApprovalKeysAnswerTheRequestOnScreen(t *testing.T) {
	f := approvalsFake()
	h := newHarness(t, f, 140, 30)
	h.keys("y")
	h.wantCalls("approve 3fa2c1d0 req-1 always=false")
	h.wantScreen("3fa2c1d0: allowed Bash touch FILE")
	h.sync(idA)
	h.wantScreen("y allow Write notes.md")
	h.noScreen("(1 of")
	h.wantScreen("⚠ 1 needs approval")
	h.keys("Y")
	h.wantCalls("approve 3fa2c1d0 req-1 always=false", "approve 3fa2c1d0 req-2 always=true")
	h.wantScreen("and Write for the rest of its session")
	h.sync(idA)
	h.noScreen("need approval")
	h.noScreen("needs approval ")
}

func TestDenyWithReason(t *testing.T) {
	f := approvalsFake()
	h := newHarness(t, f, 140, 30)
	h.keys("d")
	h.wantScreen("deny 3fa2c1d0 Bash touch FILE › ")
	// A request that arrives meanwhile does not change what d answers.
	f.ask(idA, "req-0", "Read", "/etc/passwd")
	h.sync(idA)
	h.typeText("use a temp dir")
	h.keys("enter")
	h.wantCalls(`deny 3fa2c1d0 req-1 "use a temp dir"`)
	h.wantScreen("3fa2c1d0: denied Bash touch FILE")

	// Esc cancels without answering; enter alone denies without a reason.
	h.sync(idA)
	h.keys("d", "esc", "d", "enter")
	h.wantCalls(`deny 3fa2c1d0 req-1 "use a temp dir"`, `deny 3fa2c1d0 req-2 ""`)
}

func TestStaleAnswerIsAnError(t *testing.T) {
	f := approvalsFake()
	h := newHarness(t, f, 140, 30)
	// Answered elsewhere (ctl, a viewer) after this screen last drew.
	if _, err := f.Approve(t.Context(), idA, "req-1", false); err != nil {
		t.Fatal(err)
	}
	h.keys("y")
	h.wantScreen("answer: approval request req-1 of agent 3fa2c1d0 is no longer pending")
	// It was not applied to the next request.
	h.wantCalls("approve 3fa2c1d0 req-1 always=false", "approve 3fa2c1d0 req-1 always=false")
	h.sync(idA)
	h.wantScreen("y allow Write notes.md")
}
