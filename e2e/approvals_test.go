package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// pendingViaCtl polls `ctl list` until agent id has n pending approval
// requests and returns them.
func pendingViaCtl(t *testing.T, w workspace, id string, n int) []proto.PendingApproval {
	t.Helper()
	return testkit.Poll(t, 90*time.Second, fmt.Sprintf("agent %s to have %d pending requests", id, n), func() ([]proto.PendingApproval, bool) {
		var l proto.ListResult
		ctlOK(t, w, &l, "list")
		for _, a := range l.Agents {
			if a.AgentID != id {
				continue
			}
			if len(a.PendingApprovals) != n && a.Status != proto.StatusRunning {
				t.Fatalf("agent ended (%s) while waiting for %d pending requests", a.Status, n)
			}
			return a.PendingApprovals, len(a.PendingApprovals) == n
		}
		return nil, false
	})
}

// TestApprovalsThroughCtl runs `subdash serve --preset claude --approvals`
// with the stand-in claude of testdata/fakecli, which speaks the recorded
// control protocol over a stdin kept open, and answers through `subdash
// ctl`: two requests pending at once, approve without --request (the
// oldest, named in the result), deny by id with a message, a stale answer
// refused, and an interrupt while a request is pending.
func TestApprovalsThroughCtl(t *testing.T) {
	w := newWorkspace(t)
	env, _ := fakeCLIs(t, w.base)
	serveWith(t, w, env, "--preset", "claude", "--approvals", "--grace", "200ms")

	a, b := filepath.Join(w.dir, "A"), filepath.Join(w.dir, "B")
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "ask "+a+" "+b)
	pend := pendingViaCtl(t, w, sp.AgentID, 2)
	if pend[0].Tool != "Bash" || pend[0].Summary != "touch "+a || pend[1].Summary != "touch "+b {
		t.Fatalf("pending = %+v", pend)
	}
	// wait keeps SPEC §3: a pending request is not final.
	var wr proto.WaitResult
	if r := runCtl(t, nil, "", "wait", sp.AgentID, "--timeout-ms", "10000", "--socket", w.socket); r.code != 0 || !strings.Contains(r.stdout, `"timed_out": true`) {
		t.Fatalf("wait while pending: %+v", r)
	}
	var res proto.ApprovalResult
	ctlOK(t, w, &res, "approve", sp.AgentID)
	if res.RequestID != pend[0].RequestID || res.Decision != "allow" || res.Summary != "touch "+a {
		t.Fatalf("approve without --request answered %+v", res)
	}
	ctlFails(t, w, "approve failed: approval request "+pend[0].RequestID+" of agent "+sp.AgentID+" is no longer pending (allowed); nothing was sent",
		"approve", sp.AgentID, "--request", pend[0].RequestID)
	ctlOK(t, w, &res, "deny", sp.AgentID, "--request", pend[1].RequestID, "--message", "not B")
	if res.RequestID != pend[1].RequestID || res.Decision != "deny" || res.Message != "not B" {
		t.Fatalf("deny answered %+v", res)
	}
	ctlOK(t, w, &wr, "wait", sp.AgentID, "--timeout-ms", "60000")
	if d := wr.Details[sp.AgentID]; d.Status != proto.StatusCompleted || !fileExists(a) || fileExists(b) {
		t.Fatalf("after the answers: %s, A %v, B %v", d.Status, fileExists(a), fileExists(b))
	}
	ctlFails(t, w, "approve failed: agent "+sp.AgentID+" has no pending approval request", "approve", sp.AgentID)

	// An interrupt while a request is pending denies it and ends the
	// submission as interrupted; nothing is allowed.
	c := filepath.Join(w.dir, "C")
	ctlOK(t, w, nil, "send", sp.AgentID, "ask "+c)
	pend = pendingViaCtl(t, w, sp.AgentID, 1)
	ctlOK(t, w, nil, "interrupt", sp.AgentID)
	ctlOK(t, w, &wr, "wait", sp.AgentID, "--timeout-ms", "60000")
	if d := wr.Details[sp.AgentID]; d.Status != proto.StatusErrored || *d.LastError != "interrupted" || fileExists(c) {
		t.Fatalf("after the interrupt: %s %v, C %v", d.Status, d.LastError, fileExists(c))
	}
	ctlFails(t, w, "deny failed: approval request "+pend[0].RequestID+" of agent "+sp.AgentID+" is no longer pending (denied: interrupted); nothing was sent",
		"deny", sp.AgentID, "--request", pend[0].RequestID)

	// The raw log holds the request; the logs as text say it in words.
	out := ctlOK(t, w, nil, "logs", sp.AgentID, "--submission", "1", "--raw")
	if !strings.Contains(out, `"subtype":"can_use_tool"`) {
		t.Errorf("raw logs lack the control request: %s", out)
	}
	out = ctlOK(t, w, nil, "logs", sp.AgentID, "--submission", "1")
	if !strings.Contains(out, "⚠ needs approval: Bash") || strings.Contains(out, `"subtype"`) {
		t.Errorf("logs as text lack the approval in words, or hold JSON: %s", out)
	}
}

func TestApprovalsNeedClaudeOrCodex(t *testing.T) {
	w := newWorkspace(t)
	for _, args := range [][]string{{"--preset", "codex-exec"}, {"--command", "cat"}} {
		p := start(t, nil, append(append([]string{"serve", "--approvals"}, args...), w.flags()...)...)
		code, stderr := p.wait(t)
		if code == 0 || !strings.Contains(stderr, "--approvals works with --preset claude or codex only") {
			t.Errorf("serve --approvals %v: exit %d, %q", args, code, stderr)
		}
	}
}

// TestApprovalsRealClaude runs the real claude CLI (AGENTCLI_ROOT) with
// --approvals against the local fake Anthropic server, whose "RUN_BASH:"
// prompt makes it ask for the Bash tool: approve → the file exists and the
// agent completes; deny --message no → no file, the model's next request
// carries the denial, the agent completes; interrupt while pending →
// errored, interrupted, no file. Skipped where the CLI is not installed.
func TestApprovalsRealClaude(t *testing.T) {
	bin, stubs := realCLI(t, "claude", "fake_anthropic.py")
	stubLog := filepath.Join(t.TempDir(), "stub.jsonl")
	port := startStub(t, stubs, "fake_anthropic.py", "--log", stubLog)
	env := realCLIEnv(t, "claude", bin, port)
	w := newWorkspace(t)
	serveWith(t, w, env, "--preset", "claude", "--approvals", "--timeout", "2m")

	run := func(name string, answer func(id string, pend proto.PendingApproval)) (proto.WaitDetail, string) {
		file := filepath.Join(w.dir, name)
		var sp proto.SpawnResult
		ctlOK(t, w, &sp, "spawn", "RUN_BASH: touch "+file)
		pend := pendingViaCtl(t, w, sp.AgentID, 1)
		if pend[0].Tool != "Bash" || !strings.Contains(pend[0].Summary, "touch "+file) {
			t.Fatalf("%s: pending = %+v", name, pend)
		}
		answer(sp.AgentID, pend[0])
		wr := waitDone(t, w, sp.AgentID)
		return wr.Details[sp.AgentID], file
	}

	d, file := run("ALLOWED", func(id string, _ proto.PendingApproval) { ctlOK(t, w, nil, "approve", id) })
	if d.Status != proto.StatusCompleted || !fileExists(file) {
		t.Fatalf("approve: %s %v, file %v", d.Status, d.LastError, fileExists(file))
	}

	d, file = run("DENIED", func(id string, p proto.PendingApproval) {
		ctlOK(t, w, nil, "deny", id, "--request", p.RequestID, "--message", "no")
	})
	if d.Status != proto.StatusCompleted || fileExists(file) || !strings.Contains(*d.LastOutput, "output was: 'no'") {
		t.Fatalf("deny: %s %v, file %v, output %q", d.Status, d.LastError, fileExists(file), *d.LastOutput)
	}
	if b, _ := os.ReadFile(stubLog); !strings.Contains(string(b), `"content": "no", "is_error": true`) &&
		!strings.Contains(string(b), `"content":"no","is_error":true`) {
		t.Fatalf("the model's next request does not carry the denial:\n%s", b)
	}

	d, file = run("INTERRUPTED", func(id string, _ proto.PendingApproval) { ctlOK(t, w, nil, "interrupt", id) })
	if d.Status != proto.StatusErrored || *d.LastError != "interrupted" || fileExists(file) {
		t.Fatalf("interrupt: %s %v, file %v", d.Status, d.LastError, fileExists(file))
	}
}

// TestDashboardApprovalKeys answers approvals with the dashboard's keys in
// tmux (SPEC §12), with the stand-in claude of testdata/fakecli: the help
// line names the request on screen, y allows it (the file appears), d with
// a reason typed in the input line denies the next one (no file, the
// transcript shows the denial), and the agent completes.
func TestDashboardApprovalKeys(t *testing.T) {
	d := startDash(t, 240, 40, []string{"PATH=" + fakeCLIPath() + ":" + os.Getenv("PATH")}, "--preset", "claude", "--approvals")
	d.waitText("no agents yet")
	a, b := filepath.Join(d.dir, "A"), filepath.Join(d.dir, "B")
	msg := "ask " + a + " " + b
	d.keys("n")
	d.typeText(msg)
	d.keys("Enter")
	id := d.agentID(msg)
	d.waitText("y allow Bash touch "+a+" (1 of 2)", "⚠ 2 need approval", "⚠ needs approval: Bash  touch "+a)
	d.keys("y")
	d.waitText("y allow Bash touch "+b, "⚠ 1 needs approval")
	d.waitFor("the allowed request's file "+a, func(string) bool { return fileExists(a) })
	d.keys("d")
	d.waitText("deny " + id[:8] + " Bash touch " + b + " › ")
	d.typeText("not B")
	d.keys("Enter")
	s := d.waitRow(id, "✓ completed")
	d.waitText("denied: not B", "touch "+a+": allowed")
	if fileExists(b) {
		t.Fatalf("d did not deny the second request: %s exists\n%s", b, s)
	}
}
