package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

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
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "subdash-e2e"}, nil).Connect(context.Background(),
			&mcpsdk.CommandTransport{Command: cmd}, nil)
		if err == nil {
			cs.Close()
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

// stopProcess sends SIGSTOP to pid and returns once every thread of it is
// stopped, and sends SIGCONT at the end of the test. kill(2) returns before
// the stop is done: one thread takes the signal and then stops the others,
// and under load the rest of a Go process can run (and answer a request on
// its socket) for tens of milliseconds meanwhile.
func stopProcess(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	deadline := time.Now().Add(20 * time.Second)
	for !allStopped(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: not every thread stopped after SIGSTOP", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// allStopped reports whether every thread of pid is in state T (stopped),
// as /proc/<pid>/task/<tid>/stat says.
func allStopped(pid int) bool {
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	for _, p := range stats {
		b, err := os.ReadFile(p)
		// The state follows the command name, which is in parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if err != nil || i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return len(stats) > 0
}
