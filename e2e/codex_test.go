package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// The codex preset on the real `codex app-server` (codex 0.171.0, under
// AGENTCLI_ROOT) against the local fake OpenAI server of
// ../shared/tools/agent-clis, whose "RUN_SHELL: <cmd>" prompt makes codex
// run cmd with its shell tool. Skipped where codex is not installed; the
// stand-in app-server of testdata/fakecli covers the same in
// supervisor.TestCodex*.

// realCodex starts the fake OpenAI server with args and returns the
// environment of a real codex talking to it, and the server's request log.
func realCodex(t *testing.T, args ...string) (env []string, stubLog string) {
	t.Helper()
	bin, stubs := realCLI(t, "codex", "fake_openai.py")
	stubLog = filepath.Join(t.TempDir(), "stub.jsonl")
	port := startStub(t, stubs, "fake_openai.py", append([]string{"--log", stubLog}, args...)...)
	return realCLIEnv(t, "codex", bin, port), stubLog
}

// modelCalls counts the model requests the fake server got.
func modelCalls(t *testing.T, stubLog string) int {
	t.Helper()
	b, err := os.ReadFile(stubLog)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte(`"method": "POST"`))
}

// procsRunning returns the live processes whose arguments are cmd split
// at its spaces: the command itself, not a shell or tool that names it.
func procsRunning(cmd string) []int {
	want := strings.Join(strings.Fields(cmd), "\x00") + "\x00"
	var out []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && string(b) == want {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			out = append(out, pid)
		}
	}
	return out
}

// waitProc waits until the command cmd runs.
func waitProc(t *testing.T, cmd string) {
	t.Helper()
	testkit.Poll(t, 60*time.Second, "a process running "+cmd, func() ([]int, bool) {
		p := procsRunning(cmd)
		return p, len(p) > 0
	})
}

// TestCodexRealSteerInDashboard steers the real codex from the dashboard
// while its command runs (SPEC §11 steer): s, the message, s again; the
// steer is folded into the running turn (the row and the transcript say
// so), the model's next request carries it: one turn, two model calls.
func TestCodexRealSteerInDashboard(t *testing.T) {
	env, stubLog := realCodex(t)
	d := startDash(t, 160, 40, env, "--preset", "codex", "--timeout", "2m")
	d.waitText("no agents yet")
	msg := "RUN_SHELL: sleep 12.25"
	d.keys("n")
	d.typeText(msg)
	d.keys("Enter")
	id := d.agentID(msg)
	waitProc(t, "sleep 12.25")
	d.keys("s")
	d.waitText("send " + id[:8] + " (running) › ")
	d.typeText("STEER: also say banana")
	d.keys("Enter")
	d.waitText("steer it")
	d.keys("s")
	d.waitText("steered message", "folded into the running turn")
	d.waitRow(id, "↪ steer folded")
	d.waitRow(id, "✓ completed")
	d.waitText("STUB-REPLY #2: saw 3 user message(s) (2 typed by the user)") // the message and the steer
	if n := modelCalls(t, stubLog); n != 2 {
		t.Fatalf("model calls %d, want 2: the command's result with the steer, in one turn", n)
	}
}

// TestCodexRealStopEndsTheTurn interrupts, and closes, the real codex while
// its command runs (SPEC §4): when the operation returns nothing of the
// turn runs any more (the command included, which codex's own
// turn/interrupt leaves running), the model got no request after the stop,
// and the agent is interrupted (closed).
func TestCodexRealStopEndsTheTurn(t *testing.T) {
	env, stubLog := realCodex(t)
	w := newWorkspace(t)
	serveWith(t, w, env, "--preset", "codex", "--timeout", "2m")
	for i, op := range []string{"interrupt", "close"} {
		t.Run(op, func(t *testing.T) {
			cmd := fmt.Sprintf("sleep %d.%d", 3000+i, os.Getpid()%1000)
			var sp proto.SpawnResult
			ctlOK(t, w, &sp, "spawn", "RUN_SHELL: "+cmd+" && touch "+filepath.Join(w.dir, op))
			waitProc(t, cmd)
			before := modelCalls(t, stubLog)
			ctlOK(t, w, nil, op, sp.AgentID)
			if p := procsRunning(cmd); len(p) > 0 {
				t.Fatalf("%s returned with the turn's command still running: %v", op, p)
			}
			if after := modelCalls(t, stubLog); after != before {
				t.Fatalf("model calls %d after the %s, %d before", after, op, before)
			}
			a := listAgents(t, w)[sp.AgentID]
			want := proto.StatusErrored
			if op == "close" {
				want = proto.StatusClosed
			}
			if a.Status != want {
				t.Fatalf("status %s, want %s", a.Status, want)
			}
			logs := ctlOK(t, w, nil, "logs", sp.AgentID)
			if !strings.Contains(logs, "the turn was interrupted") || fileExists(filepath.Join(w.dir, op)) {
				t.Fatalf("logs:\n%s", logs)
			}
		})
	}
}

// TestCodexRealFailuresSayWhy: a model server answering HTTP 500 errors
// the agent with codex's message; one that cannot be reached (codex
// retries it for ever) shows its retries and their reason on the
// dashboard while the agent runs.
func TestCodexRealFailuresSayWhy(t *testing.T) {
	env, _ := realCodex(t, "--fail-status", "500")
	w := newWorkspace(t)
	serveWith(t, w, env, "--preset", "codex", "--timeout", "2m")
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "say hi")
	d := waitDone(t, w, sp.AgentID).Details[sp.AgentID]
	if d.Status != proto.StatusErrored || d.LastError == nil || !strings.Contains(*d.LastError, "(internalServerError)") {
		t.Fatalf("HTTP 500: %s %v", d.Status, d.LastError)
	}

	bin, _ := realCLI(t, "codex", "fake_openai.py")
	down := realCLIEnv(t, "codex", bin, strconv.Itoa(freePort(t)))
	dash := startDash(t, 160, 40, down, "--preset", "codex", "--grace", "1s")
	dash.waitText("no agents yet")
	dash.keys("n")
	dash.typeText("say hi")
	dash.keys("Enter")
	dash.waitText("retrying model (attempt", "Reconnecting... waiting for network: Connection failed")
}

// TestCodexRealApprovals runs the real codex with --approvals: its request
// to run a command is pending until answered; allowed, the command runs;
// denied, it does not, and the agent goes on to complete.
func TestCodexRealApprovals(t *testing.T) {
	env, _ := realCodex(t)
	w := newWorkspace(t)
	serveWith(t, w, env, "--preset", "codex", "--approvals", "--timeout", "2m")
	for _, c := range []struct {
		name   string
		answer []string
		runs   bool
	}{{"ALLOWED", []string{"approve"}, true}, {"DENIED", []string{"deny", "--message", "no"}, false}} {
		file := filepath.Join(w.dir, c.name)
		var sp proto.SpawnResult
		ctlOK(t, w, &sp, "spawn", "RUN_SHELL: touch "+file)
		pend := pendingViaCtl(t, w, sp.AgentID, 1)
		if pend[0].Tool != "shell" || pend[0].Summary != "touch "+file {
			t.Fatalf("%s: pending = %+v", c.name, pend)
		}
		ctlOK(t, w, nil, append(append([]string(nil), c.answer...), sp.AgentID)...)
		d := waitDone(t, w, sp.AgentID).Details[sp.AgentID]
		if d.Status != proto.StatusCompleted || fileExists(file) != c.runs {
			t.Fatalf("%s: %s %v, file %v", c.name, d.Status, d.LastError, fileExists(file))
		}
	}
}

// TestCodexRealResumeAfterHostKilled: a host killed with SIGKILL while
// codex runs a command leaves nothing running once the next host started
// (SPEC §4, §10), and that host's send continues the agent's thread: the
// model sees the earlier message.
func TestCodexRealResumeAfterHostKilled(t *testing.T) {
	env, _ := realCodex(t)
	w := newWorkspace(t)
	p := serveWith(t, w, env, "--preset", "codex", "--timeout", "2m")
	cmd := fmt.Sprintf("sleep 3100.%d", os.Getpid()%1000)
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "RUN_SHELL: "+cmd)
	waitProc(t, cmd)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	serveWith(t, w, env, "--preset", "codex", "--timeout", "2m")
	testkit.Poll(t, 30*time.Second, "the killed host's command to end", func() ([]int, bool) {
		p := procsRunning(cmd)
		return p, len(p) == 0
	})
	ctlOK(t, w, nil, "send", sp.AgentID, "and again")
	d := waitDone(t, w, sp.AgentID).Details[sp.AgentID]
	if d.Status != proto.StatusCompleted || d.LastOutput == nil {
		t.Fatalf("after the restart: %s %v", d.Status, d.LastError)
	}
	m := regexp.MustCompile(`saw \d+ user message\(s\) \((\d+) typed`).FindStringSubmatch(*d.LastOutput)
	if m == nil || m[1] != "2" {
		t.Fatalf("the model did not see the first message: %q", *d.LastOutput)
	}
}

// freePort returns a port of 127.0.0.1 nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// TestCodexSteerAndInterruptInDashboard drives the codex preset from the
// dashboard's keys with the stand-in app-server of testdata/fakecli (so
// CI runs it): s during the command steers, and the receipt shows on the
// row and in the transcript; i interrupts the next run, whose row then
// says so.
func TestCodexSteerAndInterruptInDashboard(t *testing.T) {
	d := startDash(t, 160, 40, []string{"PATH=" + fakeCLIPath() + ":" + os.Getenv("PATH")}, "--preset", "codex")
	d.waitText("no agents yet")
	d.keys("n")
	d.typeText("slow audit")
	d.keys("Enter")
	id := d.agentID("slow audit")
	d.waitText("⚙ shell  sleep 300")
	d.keys("s")
	d.waitText("send " + id[:8] + " (running) › ")
	d.typeText("also the tests")
	d.keys("Enter")
	d.waitText("s steer it")
	d.keys("s")
	d.waitRow(id, "↪ steer folded")
	d.keys("m") // the log pane's whole width: its lines are longer than a third
	d.waitText("folded into the running turn", "FAKE: slept, and also the tests")
	d.keys("m")
	d.waitRow(id, "✓ completed")

	d.keys("s")
	d.waitText("send " + id[:8] + " › ")
	d.typeText("slow again")
	d.keys("Enter")
	d.waitText(id[:8] + " · #2/2")
	d.waitText("⚙ shell  sleep 300")
	d.keys("i")
	d.waitRow(id, "✗ errored")
	d.waitRow(id, " interrupted") // NOW says why
	d.waitText("the turn was interrupted")
}
