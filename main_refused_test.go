package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control"
)

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
	var sp supervisor.SpawnResult
	ctlOK(t, w, &sp, "spawn", "summarize transcript")
	first := sp.AgentID
	ctlOK(t, w, &sp, "spawn", "sleep until interrupted")
	slept := sp.AgentID
	readPID(t, w, slept)
	var wr supervisor.WaitResult
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
	cs.Close()
	if got := runDirs(t, w); !slices.Equal(got, runs) {
		t.Errorf("a viewer or mcp changed the runs: %v, was %v", got, runs)
	}

	// After the refusals: one agent spawned and completed, one interrupted.
	ctlOK(t, w, &sp, "spawn", "summarize control")
	second := sp.AgentID
	ctlOK(t, w, &wr, "wait", second)
	var st supervisor.StatusResult
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
	var ls control.ListResult
	ctlOK(t, w, &ls, "list")
	want := []struct {
		id, message string
		status      supervisor.Status
		lastErr     string
	}{
		{first, "summarize transcript", supervisor.StatusCompleted, ""},
		{slept, "sleep until interrupted", supervisor.StatusErrored, "interrupted"},
		{second, "summarize control", supervisor.StatusCompleted, ""},
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

// TestTwoServesStartingAtOnce (SPEC §6, §10): two serves of one folder
// started together: one hosts it, the other is refused naming it, and the
// state directory holds one run, the host's.
func TestTwoServesStartingAtOnce(t *testing.T) {
	w := newWorkspace(t)
	args := append([]string{"serve", "--command", e2eCommand}, w.flags()...)
	a, b := start(t, nil, args...), start(t, nil, args...)
	waitListening(t, a, w.socket)
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
