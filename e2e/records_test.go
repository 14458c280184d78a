package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestServeKilledAndRestartedRestoresItsAgents (SPEC §10): serve with
// three agents (completed, errored, sleeping) is killed with SIGKILL; the
// next serve lists all three with honest statuses, the sleep is gone, each
// one's log reads back, and send to the completed one starts submission 2.
func TestServeKilledAndRestartedRestoresItsAgents(t *testing.T) {
	w := newWorkspace(t)
	p1 := startServe(t, w)
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "hello")
	done := sp.AgentID
	ctlOK(t, w, &sp, "spawn", "fail now")
	failed := sp.AgentID
	ctlOK(t, w, &sp, "spawn", "sleep long")
	slept := sp.AgentID
	pgid := readPID(t, w, slept)
	var wr proto.WaitResult
	ctlOK(t, w, &wr, "wait", done)
	ctlOK(t, w, &wr, "wait", failed)
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p1.wait(t)
	if groupGone(pgid) {
		t.Fatal("the sleep ended with its host; the test needs it left behind")
	}

	// The new host runs another command; restored agents keep theirs.
	p2 := serveWith(t, w, nil, "--command", "echo other-host", "--grace", "200ms")
	var ls proto.ListResult
	ctlOK(t, w, &ls, "list")
	want := []struct {
		id      string
		status  proto.Status
		lastErr string
	}{{done, proto.StatusCompleted, ""}, {failed, proto.StatusErrored, "submission failed with exit code 3"},
		{slept, proto.StatusErrored, "interrupted (host ended)"}}
	if len(ls.Agents) != 3 {
		t.Fatalf("list after restart: %+v", ls.Agents)
	}
	for i, a := range ls.Agents {
		if a.AgentID != want[i].id || a.Status != want[i].status || !a.Restored {
			t.Errorf("agent %d: %s %s restored=%v; want %s %s", i, a.AgentID, a.Status, a.Restored, want[i].id, want[i].status)
		}
		ctlOK(t, w, &wr, "wait", a.AgentID)
		d := wr.Details[a.AgentID]
		if le := ""; d.LastError != nil && *d.LastError != want[i].lastErr || d.LastError == nil && want[i].lastErr != le {
			t.Errorf("agent %d: last_error %v, want %q", i, d.LastError, want[i].lastErr)
		}
	}
	testkit.Eventually(t, 10*time.Second, "the sleep left by the killed host to be gone", func() bool { return groupGone(pgid) })
	if out := ctlOK(t, w, nil, "logs", done); out != "got: hello\n" {
		t.Errorf("logs of the completed agent: %q", out)
	}
	if out := ctlOK(t, w, nil, "logs", failed); out != "oops\n" {
		t.Errorf("logs of the errored agent: %q", out)
	}
	var sr proto.SendResult
	ctlOK(t, w, &sr, "send", done, "again")
	ctlOK(t, w, &wr, "wait", done)
	if out := ctlOK(t, w, nil, "logs", done, "--submission", "2"); out != "got: again\n" {
		t.Errorf("submission 2 ran %q; want the agent's own command", out)
	}

	// forget: refused while running, then gone for good, also after a
	// restart; its log stays.
	ctlOK(t, w, &sr, "send", slept, "sleep again")
	ctlFails(t, w, "forget failed: agent "+slept+" is running; interrupt or close it before forgetting it", "forget", slept)
	var st proto.StatusResult
	ctlOK(t, w, &st, "forget", failed)
	if st.Status != "forgotten" {
		t.Errorf("forget answered %+v", st)
	}
	ctlFails(t, w, "logs failed: agent not found: "+failed, "logs", failed)
	if err := p2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p2.wait(t)
	p3 := startServe(t, w)
	ctlOK(t, w, &ls, "list")
	for _, a := range ls.Agents {
		if a.AgentID == failed {
			t.Fatal("a forgotten agent came back after a restart")
		}
	}
	if len(ls.Agents) != 2 {
		t.Errorf("after forget and restart: %d agents, want 2", len(ls.Agents))
	}
	_ = p3
}

// TestRestoreWindowZeroRestoresNothing: --restore-window 0 restores
// nothing, and a bad value is refused with what to give.
func TestRestoreWindowZeroRestoresNothing(t *testing.T) {
	w := newWorkspace(t)
	p1 := startServe(t, w)
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "hello")
	var wr proto.WaitResult
	ctlOK(t, w, &wr, "wait", sp.AgentID)
	_ = p1.cmd.Process.Signal(syscall.SIGTERM)
	p1.wait(t)
	p2 := serveWith(t, w, nil, "--command", e2eCommand, "--restore-window", "0")
	var ls proto.ListResult
	ctlOK(t, w, &ls, "list")
	if len(ls.Agents) != 0 {
		t.Fatalf("--restore-window 0 restored %+v", ls.Agents)
	}
	_ = p2.cmd.Process.Signal(syscall.SIGTERM)
	p2.wait(t)
	bad := start(t, nil, append([]string{"serve", "--restore-window", "a week"}, w.flags()...)...)
	code, stderr := bad.wait(t)
	if code != 2 || !strings.Contains(stderr, `"a week" is not a duration: give days (7d), hours (36h) or 0`) {
		t.Errorf("bad --restore-window: exit %d, %q", code, stderr)
	}
}

// TestMCPTakingOverRestoresTheRecords (SPEC §10): subdash mcp drives a
// serve; the serve ends; the orchestrator's next send_input to the agent
// it spawned works, on the records mcp restored when it took over, with
// the agent's own command.
func TestMCPTakingOverRestoresTheRecords(t *testing.T) {
	w := newWorkspace(t)
	serve := startServe(t, w)
	cs, _, stderr := startMCP(t, nil, append([]string{"--command", "false"}, w.flags()...)...)
	var sp proto.SpawnResult
	toolOK(t, cs, "spawn_agent", map[string]any{"message": "first"}, &sp)
	var wr proto.WaitResult
	toolOK(t, cs, "wait", map[string]any{"ids": []string{sp.AgentID}}, &wr)
	_ = serve.cmd.Process.Signal(syscall.SIGTERM)
	serve.wait(t)

	var sr proto.SendResult
	toolOK(t, cs, "send_input", map[string]any{"id": sp.AgentID, "message": "second"}, &sr)
	toolOK(t, cs, "wait", map[string]any{"ids": []string{sp.AgentID}}, &wr)
	d := wr.Details[sp.AgentID]
	if d.Status != proto.StatusCompleted || *d.LastOutput != "got: second" || *d.LastSubmissionID != sr.SubmissionID {
		t.Fatalf("after the takeover: %s %q (stderr %s)", d.Status, *d.LastOutput, stderr)
	}
	if out := ctlOK(t, w, nil, "logs", sp.AgentID, "--submission", "1"); out != "got: first\n" {
		t.Errorf("submission 1 after the takeover: %q", out)
	}
}

// TestBuiltinAgentsOutliveTheBinaryThatSpawnedThem (SPEC §10): agents of
// the built-in agent, by --preset builtin and as the default agent, were
// spawned by a subdash binary that is gone when the next host starts (as
// go run's temporary build is); the new host continues them with its own
// binary instead of refusing them.
func TestBuiltinAgentsOutliveTheBinaryThatSpawnedThem(t *testing.T) {
	w := newWorkspace(t)
	if err := os.WriteFile(filepath.Join(w.dir, "notes.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(w.base, "go-build", "exe", "subdash")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, binPath, old)
	serveOld := func(extra ...string) *process {
		cmd := exec.Command(old, append(append([]string{"serve"}, extra...), w.flags()...)...)
		// no memo nor SUBDASH_COMMAND: the default agent is the built-in one
		cmd.Env = append(testEnv(), "PATH=/usr/bin:/bin", "SUBDASH_COMMAND=")
		p := startCmd(t, cmd)
		waitListening(t, p, w.socket)
		return p
	}
	var ids []string
	for _, flags := range [][]string{{"--preset", "builtin"}, nil} {
		p := serveOld(flags...)
		var sp proto.SpawnResult
		ctlOK(t, w, &sp, "spawn", "summarize .")
		var wr proto.WaitResult
		ctlOK(t, w, &wr, "wait", sp.AgentID)
		if wr.Details[sp.AgentID].Status != proto.StatusCompleted {
			t.Fatalf("%v: first submission %+v", flags, wr.Details[sp.AgentID])
		}
		ids = append(ids, sp.AgentID)
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		p.wait(t)
	}
	if err := os.RemoveAll(filepath.Join(w.base, "go-build")); err != nil {
		t.Fatal(err)
	}

	startServe(t, w) // another command; restored agents keep the built-in one
	for _, id := range ids {
		var sr proto.SendResult
		ctlOK(t, w, &sr, "send", id, "summarize .")
		var wr proto.WaitResult
		ctlOK(t, w, &wr, "wait", id)
		if d := wr.Details[id]; d.Status != proto.StatusCompleted {
			t.Errorf("agent %s after its binary is gone: %s %v", id, d.Status, d.LastError)
		}
		if out := ctlOK(t, w, nil, "logs", id, "--submission", "2"); !strings.Contains(out, "summary of .: 1 file") {
			t.Errorf("agent %s, submission 2 printed %q; want the built-in agent's summary", id, out)
		}
	}
}

// TestDashboardRestoresAfterQuit (SPEC §10): after a clean quit, the next
// dashboard in the same folder shows the agents with their ages, the
// status line says how many were restored, each submission's log is
// there; x forgets one (after a question), for good.
func TestDashboardRestoresAfterQuit(t *testing.T) {
	cmd := `read m; case "$m" in fail*) echo oops >&2; exit 3;; esac; echo "got: $m"`
	d := startDash(t, 120, 30, nil, "--command", cmd)
	d.waitText("no agents yet")
	var ids []string
	for _, m := range []string{"hello", "fail now"} {
		d.keys("n")
		d.typeText(m)
		d.keys("Enter")
		ids = append(ids, d.agentID(m))
	}
	hello, failed := ids[0], ids[1]
	// The journal names an agent before the dashboard has its spawn's
	// answer, which moves the selection to it: wait for that, or k could
	// come first and s go to the wrong agent. The spawn typed last keeps
	// the selection whatever order the two answers arrive in.
	d.waitText(failed[:8] + " · #1/1")
	d.keys("k") // the first one, as a new agent takes the selection
	d.waitText(hello[:8] + " · #1/1")
	d.waitRow(hello, "✓ completed")
	d.waitRow(failed, "✗ errored")
	d.waitRow(failed, "exit 3")
	d.keys("s")
	d.typeText("again")
	d.keys("Enter")
	d.waitText(hello[:8]+" · #2/2", "got: again")
	d.waitRow(hello, "✓ completed")
	d.keys("q")
	if code := d.waitExit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}

	d.restart()
	d.waitFor("both agents restored, with their age, status and submissions", func(s string) bool {
		h, f := tableRow(s, hello), tableRow(s, failed)
		return strings.Contains(s, "↺ 2 restored") && strings.Contains(h, "↺ ") && strings.Contains(f, "↺ ") &&
			strings.Contains(f, "✗ errored") && strings.Contains(f, "exit 3") && strings.Contains(h, "✓ completed") && strings.Contains(h, " 2 ")
	})
	d.waitText(hello[:8]+" · #2/2", "got: again") // read back from the log file
	d.keys("[")
	d.waitText(hello[:8]+" · #1/2", "got: hello")
	d.keys("j")
	d.waitText(failed[:8]+" · #1/1", "oops")

	// forget the errored one
	d.keys("x")
	d.waitText("Forget " + failed[:8] + " for good?")
	d.keys("y")
	d.waitFor("the forgotten row to go", func(s string) bool { return tableRow(s, failed) == "" })
	d.waitText("↺ 1 restored")
	d.keys("q")
	d.waitExit()
	d.restart()
	d.waitFor("the restored agent without the forgotten one", func(s string) bool {
		return strings.Contains(s, "↺ 1 restored") && tableRow(s, hello) != "" && tableRow(s, failed) == ""
	})
	d.keys("q")
	d.waitExit()
}
