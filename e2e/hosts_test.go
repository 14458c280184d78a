package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

func TestSecondServeIsRefusedAndAStaleSocketReplaced(t *testing.T) {
	w := newWorkspace(t)
	first := startServe(t, w)
	second := start(t, nil, append([]string{"serve", "--command", "true"}, w.flags()...)...)
	code, stderr := second.wait(t)
	want := fmt.Sprintf("another subdash (pid %d) is serving %s on %s;", first.cmd.Process.Pid, w.dir, w.socket)
	if code == 0 || !strings.Contains(stderr, want) {
		t.Fatalf("second serve: exit %d, stderr %q; want an error containing %q", code, stderr, want)
	}
	if r := runCtl(t, nil, "", "list", "--socket", w.socket); r.code != 0 {
		t.Fatalf("the first serve stopped answering: %+v", r)
	}

	// Killed without a chance to clean up, the first leaves its socket file.
	_ = first.cmd.Process.Kill()
	first.wait(t)
	if fi, err := os.Lstat(w.socket); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("no stale socket file after SIGKILL: %v", err)
	}
	startServe(t, w)
	if r := runCtl(t, nil, "", "list", "--socket", w.socket); r.code != 0 {
		t.Fatalf("serve on a stale socket: %+v", r)
	}
}

// TestSecondHostOnAnotherSocketIsRefused (SPEC §1, §10): a host started in
// the same folder with the same state directory but another socket (a
// different XDG_RUNTIME_DIR) would keep the folder's records beside the
// first and show its running agents as ended; it is refused, naming the
// first host and its socket. Once that host ends, a start succeeds.
func TestSecondHostOnAnotherSocketIsRefused(t *testing.T) {
	w := newWorkspace(t)
	first := startServe(t, w)
	other := filepath.Join(w.base, "other", "s.sock")
	second := start(t, nil, "serve", "--command", e2eCommand, "--dir", w.dir, "--state-dir", w.state, "--socket", other)
	code, stderr := second.wait(t)
	want := fmt.Sprintf("another subdash (pid %d) hosts %s with state directory %s on control socket %s", first.cmd.Process.Pid, w.dir, w.state, w.socket)
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "subdash attach --socket "+w.socket) {
		t.Fatalf("second host on another socket: exit %d, %q; want 1 and %q", code, stderr, want)
	}
	_ = first.cmd.Process.Signal(syscall.SIGTERM)
	first.wait(t)
	third := start(t, nil, "serve", "--command", e2eCommand, "--dir", w.dir, "--state-dir", w.state, "--socket", other)
	waitListening(t, third, other)
}

// TestTwoServesStartingAtOnce (SPEC §6, §10): two serves of one folder
// started together: one hosts it, the other is refused naming it, and the
// state directory holds one run, the host's.
func TestTwoServesStartingAtOnce(t *testing.T) {
	w := newWorkspace(t)
	args := append([]string{"serve", "--command", e2eCommand}, w.flags()...)
	a, b := start(t, nil, args...), start(t, nil, args...)
	// Either may become the host and the other exit at once, refused:
	// wait for the socket, not for one of them.
	testkit.Eventually(t, dashWait, "one of two serves to listen on "+w.socket, func() bool {
		select {
		case <-a.done:
			select {
			case <-b.done:
				t.Fatalf("both serves exited: %s / %s", a.stderr, b.stderr)
			default:
			}
		default:
		}
		c, err := net.Dial("unix", w.socket)
		if err == nil {
			c.Close() //nolint:errcheck // a probe that sent nothing: its Close cannot lose data
		}
		return err == nil
	})
	var info struct{ PID int }
	ctlOK(t, w, &info, "info")
	host, refused := a, b
	if info.PID == b.cmd.Process.Pid {
		host, refused = b, a
	}
	code, stderr := refused.wait(t)
	if code != 1 || !strings.Contains(stderr, "is serving "+w.dir) {
		t.Errorf("the serve that did not become the host: exit %d, %q", code, stderr)
	}
	runs := runDirs(t, w)
	if len(runs) != 1 {
		t.Fatalf("runs after two starts at once: %v; want the host's only", runs)
	}
	b2, err := os.ReadFile(filepath.Join(w.state, "runs", runs[0], "journal.jsonl"))
	if err != nil || !strings.Contains(string(b2), `"pid":`+strconv.Itoa(host.cmd.Process.Pid)) {
		t.Errorf("the run is not the host's (pid %d): %s %v", host.cmd.Process.Pid, b2, err)
	}
}

// runDirs returns the names of the runs under w's state directory.
func runDirs(t *testing.T, w workspace) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(w.state, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestRefusedStartsLeaveTheRecordsAlone (SPEC §6, §10): while a serve
// hosts the folder, a second serve (refused, host alive), a dashboard
// that attaches as its viewer, an MCP server that drives it, and a serve
// and a dashboard refused because the host is stopped write nothing to
// the state directory. Agents spawned and ended after those starts are
// the host's: the next host restores every agent with the status it
// really ended with, not an "interrupted (host ended)" of a refused run's
// checkpoint, and none is missing.
func TestRefusedStartsLeaveTheRecordsAlone(t *testing.T) {
	w := newWorkspace(t)
	host := startServe(t, w)
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "summarize transcript")
	first := sp.AgentID
	ctlOK(t, w, &sp, "spawn", "sleep until interrupted")
	slept := sp.AgentID
	readPID(t, w, slept)
	var wr proto.WaitResult
	ctlOK(t, w, &wr, "wait", first)
	runs := runDirs(t, w)

	code, stderr := start(t, nil, append([]string{"serve", "--command", e2eCommand}, w.flags()...)...).wait(t)
	if code != 1 || !strings.Contains(stderr, "is serving "+w.dir) {
		t.Fatalf("second serve: exit %d, %q; want it refused", code, stderr)
	}
	if got := runDirs(t, w); !slices.Equal(got, runs) {
		t.Errorf("a refused serve changed the runs: %v, was %v", got, runs)
	}
	viewer := startViewer(t, w, "--dir", w.dir, "--state-dir", w.state, "--socket", w.socket, "--command", e2eCommand, "--max-agents", "2")
	viewer.waitText("attached to subdash serve")
	viewer.keys("q")
	if code := viewer.waitExit(); code != 0 {
		t.Errorf("viewer: exit %d", code)
	}
	cs, _, _ := startMCP(t, nil, w.flags()...)
	if text, isErr := callTool(t, cs, "list_agents", map[string]any{}); isErr {
		t.Fatalf("list_agents through mcp: %s", text)
	}
	cs.Close() //nolint:errcheck // the client leaves: what the test checks is the runs left behind
	if got := runDirs(t, w); !slices.Equal(got, runs) {
		t.Errorf("a viewer or mcp changed the runs: %v, was %v", got, runs)
	}

	// After the refusals: one agent spawned and completed, one interrupted.
	ctlOK(t, w, &sp, "spawn", "summarize control")
	second := sp.AgentID
	ctlOK(t, w, &wr, "wait", second)
	var st proto.StatusResult
	ctlOK(t, w, &st, "interrupt", slept)

	stopProcess(t, host.cmd.Process.Pid)
	for _, args := range [][]string{{"serve", "--command", e2eCommand}, {"--command", e2eCommand}} {
		// The dashboard fails while attaching, before it needs a terminal.
		code, stderr := start(t, nil, append(args, w.flags()...)...).wait(t)
		if code != 1 || !strings.Contains(stderr, "did not answer") {
			t.Errorf("%q beside a stopped host: exit %d, %q; want it refused", args, code, stderr)
		}
	}
	if got := runDirs(t, w); !slices.Equal(got, runs) {
		t.Errorf("a start refused by a stopped host changed the runs: %v, was %v", got, runs)
	}
	if err := syscall.Kill(host.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := host.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	host.wait(t)

	startServe(t, w)
	var ls proto.ListResult
	ctlOK(t, w, &ls, "list")
	want := []struct {
		id, message string
		status      proto.Status
		lastErr     string
	}{
		{first, "summarize transcript", proto.StatusCompleted, ""},
		{slept, "sleep until interrupted", proto.StatusErrored, "interrupted"},
		{second, "summarize control", proto.StatusCompleted, ""},
	}
	if len(ls.Agents) != len(want) {
		t.Fatalf("after the restart: %d agent(s) %+v; want %d", len(ls.Agents), ls.Agents, len(want))
	}
	for i, a := range ls.Agents {
		ctlOK(t, w, &wr, "wait", a.AgentID)
		d := wr.Details[a.AgentID]
		lastErr := ""
		if d.LastError != nil {
			lastErr = *d.LastError
		}
		if a.AgentID != want[i].id || a.LastMessage != want[i].message || a.Status != want[i].status || lastErr != want[i].lastErr || !a.Restored {
			t.Errorf("agent %d after the restart: %s %q %s last_error %q restored=%v; want %s %q %s %q",
				i, a.AgentID, a.LastMessage, a.Status, lastErr, a.Restored, want[i].id, want[i].message, want[i].status, want[i].lastErr)
		}
	}
}

// TestClientsOfAStoppedHostEndWithAnError stops the host (SIGSTOP): it
// still accepts connections (the kernel does) but answers nothing. ctl
// list, ctl wait, an MCP tool call and the MCP initialize of a new `subdash
// mcp` each end with an error naming the socket and the host's pid (SPEC §6:
// clients never hang); a second `subdash serve` and a dashboard started
// meanwhile refuse with the same error instead of replacing the host, which
// is stopped, not gone: afterwards it still serves the socket. The test
// asserts the errors and that the clients ended, not how long they took.
func TestClientsOfAStoppedHostEndWithAnError(t *testing.T) {
	w := newWorkspace(t)
	serve := startServe(t, w)
	pid := serve.cmd.Process.Pid
	cs, _, mcpStderr := startMCP(t, nil, w.flags()...)
	if text, isErr := callTool(t, cs, "list_agents", map[string]any{}); isErr {
		t.Fatalf("list_agents before the stop: %s", text)
	}
	stopProcess(t, pid)
	noAnswer := fmt.Sprintf("subdash (pid %d) serving %s accepted the connection but did not answer within", pid, w.socket)

	var wg sync.WaitGroup
	check := func(name string, fn func() string, want string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := fn(); !strings.Contains(got, want) {
				t.Errorf("%s: got %q, want it to contain %q", name, got, want)
			}
		}()
	}
	check("ctl list", func() string {
		r := runCtl(t, nil, "", "list", "--socket", w.socket)
		if r.code != 1 {
			t.Errorf("ctl list: exit %d, want 1", r.code)
		}
		return r.stderr
	}, "list_agents failed: "+noAnswer+" 10s")
	check("ctl wait", func() string {
		r := runCtl(t, nil, "", "wait", "some-agent", "--timeout-ms", "10000", "--socket", w.socket)
		if r.code != 1 {
			t.Errorf("ctl wait: exit %d, want 1", r.code)
		}
		return r.stderr
	}, "wait failed: "+noAnswer+" 15s")
	check("ctl spawn", func() string {
		r := runCtl(t, nil, "", "spawn", "sent while stopped", "--socket", w.socket)
		if r.code != 1 {
			t.Errorf("ctl spawn: exit %d, want 1", r.code)
		}
		return r.stderr
	}, fmt.Sprintf("spawn_agent failed: %s 10s; it is stopped (SIGSTOP or ctrl+z): kill -CONT %d resumes it; the operation was sent and may still be carried out when it answers again: check with subdash ctl list before repeating it", noAnswer, pid))
	check("MCP tool call", func() string {
		text, isErr := callTool(t, cs, "list_agents", map[string]any{})
		if !isErr {
			t.Errorf("list_agents on a stopped host: not an error: %s", text)
		}
		return text
	}, noAnswer+" 10s")
	check("MCP initialize", func() string {
		cmd := exec.Command(binPath, append([]string{"mcp"}, w.flags()...)...)
		cmd.Env = testEnv()
		stderr := &testkit.SyncBuffer{}
		cmd.Stderr = stderr
		cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "subdash-e2e"}, nil).Connect(context.Background(),
			&mcpsdk.CommandTransport{Command: cmd}, nil)
		if err == nil {
			cs.Close() //nolint:errcheck // a session that should not exist: the test fails on it
			t.Errorf("initialize with a stopped host succeeded")
		}
		return stderr.String()
	}, noAnswer+" 10s")
	check("second serve", func() string {
		code, stderr := start(t, nil, append([]string{"serve", "--command", "true"}, w.flags()...)...).wait(t)
		if code != 1 {
			t.Errorf("serve beside a stopped host: exit %d, want 1", code)
		}
		return stderr
	}, fmt.Sprintf("subdash: %s 2s; it is stopped (SIGSTOP or ctrl+z): kill -CONT %d resumes it; it still holds the socket, so this subdash does not replace it", noAnswer, pid))
	check("dashboard", func() string {
		// It fails while attaching, before it needs a terminal.
		code, stderr := start(t, nil, append([]string{"--command", e2eCommand}, w.flags()...)...).wait(t)
		if code != 1 {
			t.Errorf("dashboard beside a stopped host: exit %d, want 1", code)
		}
		// meanwhile the terminal said what it waits for
		if waiting := "subdash: waiting for the host on " + w.socket + " to answer (at most 10s; ctrl+c gives up)\n"; !strings.HasPrefix(stderr, waiting) {
			t.Errorf("dashboard beside a stopped host said %q first, want %q", stderr, waiting)
		}
		return stderr
	}, "subdash: "+noAnswer+" 10s")
	wg.Wait()

	// Resumed, the host still serves its socket: nobody took it over.
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	r := runCtl(t, nil, "", "info", "--socket", w.socket)
	var info struct{ PID int }
	if err := json.Unmarshal([]byte(r.stdout), &info); r.code != 0 || err != nil || info.PID != pid {
		t.Errorf("ctl info after SIGCONT: %+v (%v); want the stopped host, pid %d, still serving", r, err, pid)
	}
	if text, isErr := callTool(t, cs, "list_agents", map[string]any{}); isErr {
		t.Errorf("list_agents after SIGCONT: %s", text)
	}
	// As the spawn's error said: it was carried out once the host ran again.
	waitCount(t, "agents of the spawn sent while the host was stopped", 1, func() int {
		n := 0
		for _, a := range listAgents(t, w) {
			if a.LastMessage == "sent while stopped" {
				n++
			}
		}
		return n
	})
	if s := mcpStderr.String(); strings.Contains(s, "attaching again") || strings.Contains(s, "supervising agents here") {
		t.Errorf("the MCP server let go of the stopped host: %s", s)
	}
}
