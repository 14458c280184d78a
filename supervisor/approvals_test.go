package supervisor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// approvalSupervisor runs the claude preset with --approvals against the
// fake claude of testdata/fakecli, which speaks the recorded control
// protocol over a stdin kept open. Files the agent may touch go in dir.
func approvalSupervisor(t *testing.T) (s *Supervisor, log, dir string) {
	t.Helper()
	s, log = presetSupervisor(t, "claude")
	s.cfg.Preset.Approvals = true
	return s, log, t.TempDir()
}

// pendingOf polls until agent id has n pending requests and returns them.
func pendingOf(t *testing.T, s *Supervisor, id string, n int) []proto.PendingApproval {
	t.Helper()
	info := testkit.Poll(t, 10*time.Second, fmt.Sprintf("%d pending requests", n), func() (proto.AgentInfo, bool) {
		info, _ := s.Agent(id)
		return info, len(info.PendingApprovals) == n
	})
	return info.PendingApprovals
}

// stdinLines returns what the fake CLI read on its stdin, one JSON value
// per line.
func stdinLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "stdin\t"); ok {
			var v map[string]any
			if err := json.Unmarshal([]byte(rest), &v); err != nil {
				t.Fatalf("stdin line is not JSON: %q", rest)
			}
			out = append(out, v)
		}
	}
	return out
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestApprovalAllowAndDeny(t *testing.T) {
	s, log, dir := approvalSupervisor(t)
	a, b := filepath.Join(dir, "A"), filepath.Join(dir, "B")
	id := spawn(t, s, "ask "+a+" "+b)
	p := pendingOf(t, s, id, 2)
	if p[0].Tool != "Bash" || p[0].Summary != "touch "+a || p[1].Summary != "touch "+b {
		t.Fatalf("pending = %+v", p)
	}
	info, _ := s.Agent(id)
	if info.Status != proto.StatusRunning || info.Activity != "needs approval: Bash touch "+a {
		t.Fatalf("status %s, activity %q", info.Status, info.Activity)
	}
	if l := listOf(s); len(l[0].PendingApprovals) != 2 || l[0].PendingApprovals[0].RequestID != p[0].RequestID {
		t.Fatalf("list pending = %+v", l[0].PendingApprovals)
	}
	// Answer the second one first, by id; then the oldest (the first).
	r, err := s.Deny(t.Context(), id, p[1].RequestID, "not B")
	if err != nil || r.Decision != proto.DecisionDeny || r.RequestID != p[1].RequestID {
		t.Fatalf("deny: %+v %v", r, err)
	}
	r, err = s.Approve(t.Context(), id, "", false)
	if err != nil || r.RequestID != p[0].RequestID || r.Decision != proto.DecisionAllow {
		t.Fatalf("approve oldest: %+v %v", r, err)
	}
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusCompleted || !exists(a) || exists(b) {
		t.Fatalf("status %s, A exists %v, B exists %v", d.Status, exists(a), exists(b))
	}
	// What the CLI read: initialize, the message as a user message, then
	// the two answers as control responses bound to their request ids.
	in := stdinLines(t, log)
	if len(in) != 4 {
		t.Fatalf("stdin lines = %v", in)
	}
	if req := in[0]["request"].(map[string]any); in[0]["type"] != "control_request" || req["subtype"] != "initialize" {
		t.Fatalf("first stdin line = %v", in[0])
	}
	if msg := in[1]["message"].(map[string]any); in[1]["type"] != "user" || msg["content"] != "ask "+a+" "+b || msg["role"] != "user" {
		t.Fatalf("second stdin line = %v", in[1])
	}
	deny := in[2]["response"].(map[string]any)
	if in[2]["type"] != "control_response" || deny["subtype"] != "success" || deny["request_id"] != p[1].RequestID {
		t.Fatalf("deny line = %v", in[2])
	}
	if body := deny["response"].(map[string]any); body["behavior"] != "deny" || body["message"] != "not B" {
		t.Fatalf("deny body = %v", body)
	}
	allow := in[3]["response"].(map[string]any)["response"].(map[string]any)
	if allow["behavior"] != "allow" || allow["updatedInput"].(map[string]any)["command"] != "touch "+a {
		t.Fatalf("allow body = %v", allow)
	}
	// The transcript shows each request whole and each answer.
	w, _, _ := s.Transcript(t.Context(), id, 0, 0, 100)
	var got []string
	for _, e := range w.Entries {
		switch e.Kind {
		case transcript.KindApproval:
			if !strings.Contains(e.Text, `"command": "touch `) {
				t.Errorf("approval entry lacks the input: %q", e.Text)
			}
			got = append(got, "ask "+e.Summary)
		case transcript.KindApprovalAnswer:
			got = append(got, e.Summary+": "+e.Text)
		}
	}
	want := []string{"ask touch " + a, "ask touch " + b, "touch " + b + ": denied: not B", "touch " + a + ": allowed"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("transcript:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The journal has every request and answer.
	j, _ := os.ReadFile(filepath.Join(s.RunDir(), "journal.jsonl"))
	if n := strings.Count(string(j), `"event":"approval_requested"`); n != 2 {
		t.Errorf("journal has %d approval_requested", n)
	}
	if !strings.Contains(string(j), `"decision":"deny"`) || !strings.Contains(string(j), `"decision":"allow"`) {
		t.Errorf("journal lacks the answers:\n%s", j)
	}
}

func TestApprovalStaleAnswer(t *testing.T) {
	s, _, dir := approvalSupervisor(t)
	a, b := filepath.Join(dir, "A"), filepath.Join(dir, "B")
	id := spawn(t, s, "ask "+a+" "+b)
	p := pendingOf(t, s, id, 2)
	if _, err := s.Approve(t.Context(), id, p[0].RequestID, false); err != nil {
		t.Fatal(err)
	}
	// A second answer to the same request (another viewer, ctl) is refused
	// and not applied to the next request.
	_, err := s.Deny(t.Context(), id, p[0].RequestID, "")
	if proto.CodeOf(err) != proto.CodeNotPending || !strings.Contains(errText(err), "is no longer pending (allowed)") {
		t.Fatalf("stale answer: %v", err)
	}
	if left := pendingOf(t, s, id, 1); left[0].RequestID != p[1].RequestID {
		t.Fatalf("pending = %+v", left)
	}
	if _, err := s.Approve(t.Context(), id, "no-such-request", false); proto.CodeOf(err) != proto.CodeNotFound {
		t.Fatalf("unknown request: %v", err)
	}
	if _, err := s.Deny(t.Context(), id, "", ""); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted || exists(b) {
		t.Fatalf("status %s, B exists %v", d.Status, exists(b))
	}
	if _, err := s.Approve(t.Context(), id, "", false); proto.CodeOf(err) != proto.CodeNotPending {
		t.Fatalf("answer with none pending: %v", err)
	}
}

func TestApprovalInterruptDeniesPending(t *testing.T) {
	s, _, dir := approvalSupervisor(t)
	a := filepath.Join(dir, "A")
	id := spawn(t, s, "ask "+a)
	p := pendingOf(t, s, id, 1)
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusErrored || *d.LastError != "interrupted" || exists(a) {
		t.Fatalf("status %s %v, A exists %v", d.Status, d.LastError, exists(a))
	}
	if info, _ := s.Agent(id); len(info.PendingApprovals) != 0 {
		t.Fatalf("pending after interrupt: %+v", info.PendingApprovals)
	}
	_, err := s.Approve(t.Context(), id, p[0].RequestID, false)
	if proto.CodeOf(err) != proto.CodeNotPending || !strings.Contains(errText(err), "denied: interrupted") {
		t.Fatalf("answer after interrupt: %v", err)
	}
	j, _ := os.ReadFile(filepath.Join(s.RunDir(), "journal.jsonl"))
	if !strings.Contains(string(j), `"decision":"deny","note":"subdash: interrupted"`) {
		t.Fatalf("journal lacks the denial:\n%s", j)
	}
}

// allowAlways spawns an agent of s that asks to use Bash (touching A in
// dir), allows it always and waits for its end; it returns the agent and
// the path (B in dir) its next submission touches.
func allowAlways(t *testing.T, s *Supervisor, dir string) (id, b string) {
	t.Helper()
	id = spawn(t, s, "ask "+filepath.Join(dir, "A"))
	pendingOf(t, s, id, 1)
	if _, err := s.Approve(t.Context(), id, "", true); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
	return id, filepath.Join(dir, "B")
}

func TestApprovalAllowAlwaysCarriesOver(t *testing.T) {
	s, log, dir := approvalSupervisor(t)
	id, b := allowAlways(t, s, dir)
	// The next submission resumes the session; Bash stays allowed.
	if _, err := s.Send(t.Context(), id, "ask "+b, false); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted || !exists(b) {
		t.Fatalf("second submission: %s, B exists %v", d.Status, exists(b))
	}
	in := stdinLines(t, log)
	first := in[2]["response"].(map[string]any)["response"].(map[string]any)
	rules, _ := json.Marshal(first["updatedPermissions"])
	if string(rules) != `[{"behavior":"allow","destination":"session","rules":[{"toolName":"Bash"}],"type":"addRules"}]` {
		t.Fatalf("updatedPermissions = %s", rules)
	}
	last := ""
	for _, c := range calls(t, log) {
		if strings.HasPrefix(c, "claude ") {
			last = c
		}
	}
	if !strings.Contains(last, "--resume "+id+" "+ApprovalArgs) {
		t.Fatalf("second call = %q", last)
	}
}

func TestApprovalsNeedTheClaudeOrCodexPreset(t *testing.T) {
	st := t.TempDir()
	for _, o := range []Options{{Command: "true", Approvals: true}, {Preset: "codex-exec", Approvals: true}, {Preset: "gemini", Approvals: true}} {
		o.StateDir = st
		_, err := Resolve(o, Environment{})
		if err == nil || !strings.Contains(err.Error(), "--approvals works with --preset claude or codex only") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	c, err := Resolve(Options{Preset: "claude", Approvals: true, StateDir: st}, Environment{})
	if err != nil || !strings.Contains(c.Command, ApprovalArgs) {
		t.Fatalf("claude --approvals: %q %v", c.Command, err)
	}
}

// TestPendingApprovalsTravelToViewers: the agent snapshot a host sends its
// viewers (SPEC §9) carries the pending requests, so a viewer's keys answer
// the request its screen shows, and its activity.
func TestPendingApprovalsTravelToViewers(t *testing.T) {
	s, _, dir := approvalSupervisor(t)
	id := spawn(t, s, "ask "+filepath.Join(dir, "A"))
	p := pendingOf(t, s, id, 1)
	info, _ := s.Agent(id)
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	var got proto.AgentInfo
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := p[0]
	want.RequestedAt = proto.Time{Time: want.RequestedAt.Truncate(time.Millisecond)} // RFC 3339 with milliseconds
	if len(got.PendingApprovals) == 1 {
		got.PendingApprovals[0].RequestedAt = proto.Time{Time: got.PendingApprovals[0].RequestedAt.UTC()}
		want.RequestedAt = proto.Time{Time: want.RequestedAt.UTC()}
	}
	if len(got.PendingApprovals) != 1 || got.PendingApprovals[0] != want || got.Activity != info.Activity {
		t.Fatalf("after JSON: %+v, activity %q; want %+v, %q", got.PendingApprovals, got.Activity, p, info.Activity)
	}
	if _, err := s.Deny(t.Context(), id, "", ""); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
}

// TestApprovalAllowAlwaysSurvivesARestart: "allow for the
// session" is kept in the record and the journal, so after the host
// restarts the agent's next submission, which resumes the same claude
// session, has the tool allowed without asking (it asked again).
func TestApprovalAllowAlwaysSurvivesARestart(t *testing.T) {
	s, _, dir := approvalSupervisor(t)
	id, b := allowAlways(t, s, dir)
	cfg := s.cfg
	cfg.RestoreWindow = DefaultRestoreWindow
	shutdownNow(t, s)
	s2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdownNow(t, s2) })
	if _, err := s2.Send(t.Context(), id, "ask "+b, false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the restored agent's submission to end or ask", func() bool {
		info, _ := s2.Agent(id)
		return len(info.PendingApprovals) > 0 || !info.Running()
	})
	if info, _ := s2.Agent(id); len(info.PendingApprovals) > 0 || info.Status != proto.StatusCompleted || !exists(b) {
		t.Fatalf("after the restart: %s, pending %+v, B exists %v; want Bash still allowed", info.Status, info.PendingApprovals, exists(b))
	}
}
