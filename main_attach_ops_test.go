package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/supervisor"
)

// TestViewerSendsAndResendsOnTheHost: the host serves three agents (one
// streaming, one finished, and a claude-preset agent it restored, whose
// transcript it reads back from its log); a viewer shows that transcript,
// s continues the claude conversation on the host (--resume with its
// session id), R resends the finished agent's message, and s to the
// streaming agent asks interrupt/queue/cancel and i interrupts it and
// sends. Each is checked with ctl list.
func TestViewerSendsAndResendsOnTheHost(t *testing.T) {
	fake, err := filepath.Abs("testdata/fakecli")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorkspace(t)
	calls := filepath.Join(w.base, "calls.log")
	env := []string{"PATH=" + fake + ":" + os.Getenv("PATH"), "FAKECLI_LOG=" + calls}
	first := start(t, env, append([]string{"serve", "--preset", "claude"}, w.flags()...)...)
	waitListening(t, first, w.socket)
	var sp supervisor.SpawnResult
	ctlOK(t, w, &sp, "spawn", "first message: remember the word PINEAPPLE")
	claude := sp.AgentID
	ctlOK(t, w, nil, "wait", claude, "--timeout-ms", "60000")
	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	first.wait(t)

	serve := start(t, env, append([]string{"serve", "--command", attachCommand, "--max-agents", "3", "--grace", "200ms"}, w.flags()...)...)
	waitListening(t, serve, w.socket)
	ctlOK(t, w, &sp, "spawn", "stream one")
	streaming := sp.AgentID
	ctlOK(t, w, &sp, "spawn", "hello")
	hello, helloFirst := sp.AgentID, sp.SubmissionID
	waitAgent(t, w, hello, "completed", func(a supervisor.Summary) bool { return a.Status == supervisor.StatusCompleted })

	d := startViewer(t, w, "--dir", w.dir, "--socket", w.socket)
	d.waitRow(claude, "completed")
	d.waitRow(streaming, "running")
	// The restored claude agent is selected (oldest first): its transcript.
	d.waitText("✓ result", "STUB-REPLY #10")

	d.keys("s")
	d.typeText("second message: what was the word?")
	d.keys("Enter")
	waitAgent(t, w, claude, "answered again", func(a supervisor.Summary) bool {
		return a.Status == supervisor.StatusCompleted && strings.HasPrefix(a.LastMessage, "second message")
	})
	d.waitText("STUB-REPLY #12")
	log, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if want := "claude\t-p --output-format stream-json --verbose --resume " + claude + "\tsecond message: what was the word?"; !strings.Contains(string(log), want) {
		t.Fatalf("the host did not continue the conversation; the fake claude ran as\n%s\nwant a line %q", log, want)
	}

	d.keys("j", "j") // the finished agent
	d.waitText("got: hello")
	d.keys("R")
	waitAgent(t, w, hello, "resent", func(a supervisor.Summary) bool {
		return a.Status == supervisor.StatusCompleted && a.LastSubmissionID != helloFirst && a.LastMessage == "hello"
	})
	d.waitText(hello[:8] + " · #2/2")

	d.keys("k") // the streaming agent: a send asks first
	d.waitText("tick ")
	d.keys("s")
	d.typeText("after the stream")
	d.keys("Enter")
	d.waitText("interrupt it and send")
	d.keys("i")
	waitAgent(t, w, streaming, "interrupted and sent", func(a supervisor.Summary) bool {
		return a.Status == supervisor.StatusCompleted && a.LastMessage == "after the stream"
	})
	d.waitText("got: after the stream")
}
