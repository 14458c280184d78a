package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// The tests of this file pause a client for real: they run it in a child
// process (this test binary, TestPausedClientHelper) and stop that with
// SIGSTOP, as ctrl+z, a debugger, a frozen ssh session or a suspended
// laptop do, while a host of this process keeps writing. Every goroutine of
// the child stops, its clocks do not: the host's writes wait in the
// socket. The child's deadline is pauseLimit, not CallTimeout, and it is
// paused for three of those.
const (
	pauseLimit = 1500 * time.Millisecond // over what a loaded machine (2 cores, -race) takes to stop the child and write 40,001 ids
	pauseFor   = 3 * pauseLimit
)

// pausedChild runs TestPausedClientHelper with scenario against h; its
// stdout lines are in the returned buffer.
func pausedChild(t *testing.T, h *scriptHost, scenario string) (*exec.Cmd, *testkit.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPausedClientHelper$")
	cmd.Env = append(os.Environ(), "SUBDASH_PAUSE_SCENARIO="+scenario, "SUBDASH_PAUSE_SOCKET="+h.socket)
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, out
}

// pause stops pid for pauseFor and continues it.
func pause(t *testing.T, pid int) {
	t.Helper()
	testkit.StopProcess(t, pid, 10*time.Second)
	time.Sleep(pauseFor) // the pause itself: what the test is about, not a wait for a result
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// TestPausedStreamCatchesUp: a client of the event stream is stopped for
// three times its deadline while the host's heartbeats queue in the socket.
// Continued, it reads them and carries on: the next event reaches it and
// the stream does not end (it used to end at once with "did not answer
// within", blaming a host that wrote all along).
func TestPausedStreamCatchesUp(t *testing.T) {
	h := startScriptHost(t, scriptStream{nil, "beat"})
	cmd, out := pausedChild(t, h, "events")
	testkit.Eventually(t, 10*time.Second, "the child's stream to sync", func() bool { return strings.Contains(out.String(), "event synced") })
	pause(t, cmd.Process.Pid)
	h.agents <- "after-the-pause"
	testkit.Eventually(t, 5*time.Second, "the event sent after the pause", func() bool {
		return strings.Contains(out.String(), "event agent after-the-pause") || strings.Contains(out.String(), "end:")
	})
	if s := out.String(); strings.Contains(s, "end:") || !strings.Contains(s, "event agent after-the-pause") {
		t.Fatalf("the paused stream, continued:\n%s", s)
	}
}

// TestPausedCallTakesItsAnswer: a call (wait, as ctl wait and the MCP
// server make it) is stopped while the host answers it, for three times its
// deadline. Continued, it returns the host's answer, not "did not answer".
func TestPausedCallTakesItsAnswer(t *testing.T) {
	h := startScriptHost(t, scriptStream{nil, "beat"})
	cmd, out := pausedChild(t, h, "wait")
	<-h.waiting
	testkit.StopProcess(t, cmd.Process.Pid, 10*time.Second)
	close(h.answer)
	time.Sleep(pauseFor) // the pause itself
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, "the wait to return", func() bool { return strings.Contains(out.String(), "end:") })
	if s := out.String(); !strings.Contains(s, "end: <nil> completed 40001") {
		t.Fatalf("the paused wait, continued:\n%s", s)
	}
}

// TestPausedClientHelper is the paused child of the tests above; it runs
// only when they start it.
func TestPausedClientHelper(t *testing.T) {
	scenario := os.Getenv("SUBDASH_PAUSE_SCENARIO")
	if scenario == "" {
		t.Skip("the child of TestPausedStreamCatchesUp and TestPausedCallTakesItsAnswer")
	}
	c := NewClient(os.Getenv("SUBDASH_PAUSE_SOCKET"), "")
	c.limit = pauseLimit
	w := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(w, format+"\n", args...)
		w.Flush() //nolint:errcheck // the test's own notes on stdout
	}
	ctx := context.Background()
	if _, err := c.Info(ctx); err != nil {
		say("end: info: %v", err)
		os.Exit(0)
	}
	switch scenario {
	case "events":
		err := c.SSE(ctx, nil, func(ev Event) error {
			var s proto.Summary
			_ = json.Unmarshal(ev.Data, &s)
			say("event %s %s", ev.Name, s.AgentID)
			return nil
		})
		say("end: %v", err)
	case "wait":
		var res proto.WaitResult
		err := c.call(ctx, pauseLimit, wire.Wait.At("", nil), wire.WaitRequest{IDs: []string{"a1"}}, &res)
		say("end: %v %s %d", err, res.Status["a1"], len(res.Status))
	}
	os.Exit(0) // before goleak looks at the transport's goroutines
}
