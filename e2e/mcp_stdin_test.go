package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// TestMCPAnswersEveryRequestReadBeforeStdinCloses pipes requests into
// `subdash mcp` and closes the pipe right after them, as
// `printf … | subdash mcp` does: every request is answered before the
// process exits 0, and the spawn it answered happened, both when it
// supervises the agents itself (the agent's submission is in the journal,
// ended by the host's end, SPEC §1) and when it drives `subdash serve`
// (the agent runs to its end there).
func TestMCPAnswersEveryRequestReadBeforeStdinCloses(t *testing.T) {
	requests := strings.Join([]string{
		initializeLine,
		initializedLine,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		toolCallLine(3, "spawn_agent", map[string]any{"message": "one shot"}),
		toolCallLine(4, "list_agents", map[string]any{}),
	}, "\n") + "\n"
	run := func(t *testing.T, w workspace) proto.SpawnResult {
		t.Helper()
		cmd := exec.Command(binPath, append([]string{"mcp", "--command", e2eCommand, "--grace", "200ms"}, w.flags()...)...)
		cmd.Env = testEnv()
		// Not an *os.File: exec copies it into a pipe and closes the
		// pipe's write end right after the last byte.
		cmd.Stdin = strings.NewReader(requests)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("subdash mcp: %v; stderr:\n%s", err, &stderr)
		}
		answers := readAnswers(t, &stdout)
		requireResults(t, answers, 4, stderr.String())
		var tools struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal(answers["2"].Result, &tools); err != nil || len(tools.Tools) != 7 {
			t.Errorf("tools/list answered %s, want the 7 tools (answer_question among them)", answers["2"].Result)
		}
		sp := spawnedAgent(t, answers["3"])
		if sp.Status != "running" || sp.SubmissionID == "" {
			t.Errorf("spawn_agent = %+v, want a running submission", sp)
		}
		return sp
	}

	t.Run("supervising itself", func(t *testing.T) {
		w := newWorkspace(t)
		sp := run(t, w)
		d := dash{state: w.state}
		seen := map[string]bool{}
		for _, ev := range d.journal() {
			if ev["agent_id"] == sp.AgentID && ev["submission_id"] == sp.SubmissionID {
				seen[ev["event"].(string)] = true
			}
		}
		for _, want := range []string{"spawned", "submission_started", "submission_ended"} {
			if !seen[want] {
				t.Errorf("the journal has no %s of the answered spawn %s (events of it: %v)", want, sp.AgentID, seen)
			}
		}
	})

	t.Run("driving serve", func(t *testing.T) {
		w := newWorkspace(t)
		startServe(t, w)
		sp := run(t, w)
		var wr proto.WaitResult
		ctlOK(t, w, &wr, "wait", sp.AgentID)
		if d := wr.Details[sp.AgentID]; d.Status != "completed" || d.LastOutput == nil || *d.LastOutput != "got: one shot" {
			t.Fatalf("the served agent of the answered spawn: %+v", wr)
		}
	})
}

// TestMCPAnswersAWaitInFlightWhenStdinCloses sends a wait for an agent that
// takes a moment and closes stdin at once: the wait runs to its end (the
// agent completes) and is answered before subdash mcp exits 0.
func TestMCPAnswersAWaitInFlightWhenStdinCloses(t *testing.T) {
	w := newWorkspace(t)
	cmd, stdin, stdout, stderr := startMCPPipe(t, append([]string{"--command", `read m; sleep 0.3; echo "got: $m"`, "--grace", "200ms"}, w.flags()...))
	send := func(lines ...string) {
		for _, l := range lines {
			if _, err := io.WriteString(stdin, l+"\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(initializeLine, initializedLine, toolCallLine(2, "spawn_agent", map[string]any{"message": "slow"}))
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	sp := answeredSpawn(t, sc, "2", stderr)
	send(toolCallLine(3, "wait", map[string]any{"ids": []string{sp.AgentID}, "timeout_ms": 60000}))
	stdin.Close() //nolint:errcheck // the client leaves with the wait in flight: the server's answer is what the test checks
	var a rpcAnswer
	for sc.Scan() {
		var next rpcAnswer
		if json.Unmarshal(sc.Bytes(), &next) == nil && string(next.ID) == "3" {
			a = next
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("subdash mcp exited with %v; stderr:\n%s", err, stderr)
	}
	var res struct {
		Structured proto.WaitResult `json:"structuredContent"`
	}
	if string(a.ID) != "3" || json.Unmarshal(a.Result, &res) != nil {
		t.Fatalf("the wait in flight got no answer (last %+v); stderr:\n%s", a, stderr)
	}
	if d := res.Structured.Details[sp.AgentID]; d.Status != "completed" || d.LastOutput == nil || *d.LastOutput != "got: slow" {
		t.Fatalf("wait = %s, want the agent completed", a.Result)
	}
}

// TestMCPEndsAtSIGTERMWithAWaitInFlight closes stdin while a wait of 300 s
// is in flight on an agent that would run a minute, then sends SIGTERM, the
// MCP stdio shutdown's next step: subdash mcp exits 128+15 well before the
// wait's timeout, and the agent's process group is gone (SPEC §1, §6).
func TestMCPEndsAtSIGTERMWithAWaitInFlight(t *testing.T) {
	w := newWorkspace(t)
	cmd, stdin, stdout, stderr := startMCPPipe(t, append([]string{"--command", e2eCommand, "--grace", "200ms"}, w.flags()...))
	for _, l := range []string{initializeLine, initializedLine, toolCallLine(2, "spawn_agent", map[string]any{"message": "sleep"})} {
		if _, err := io.WriteString(stdin, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	sp := answeredSpawn(t, sc, "2", stderr)
	pid := readPID(t, w, sp.AgentID)
	wait := toolCallLine(3, "wait", map[string]any{"ids": []string{sp.AgentID}, "timeout_ms": 300000})
	if _, err := io.WriteString(stdin, wait+"\n"+`{"jsonrpc":"2.0","id":4,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	// The server takes requests in order: once the ping is answered, the
	// wait is in flight.
	for pinged := false; !pinged && sc.Scan(); {
		var a rpcAnswer
		pinged = json.Unmarshal(sc.Bytes(), &a) == nil && string(a.ID) == "4"
	}
	stdin.Close() //nolint:errcheck // the client leaves: the server's exit is what the test checks
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	select {
	case <-exited: //nolint:errcheck // Wait's error is the SIGTERM exit: its status is checked below
	case <-time.After(30 * time.Second): // the wait's timeout is 300 s, the agent's sleep 60 s
		t.Fatalf("subdash mcp did not end at SIGTERM with a wait in flight; stderr:\n%s", stderr)
	}
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d, want %d; stderr:\n%s", code, 128+int(syscall.SIGTERM), stderr)
	}
	if !groupGone(pid) {
		t.Errorf("the agent's process group %d outlived subdash mcp", pid)
	}
}
