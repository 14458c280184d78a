package ui

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/subdash/subdash/theme"
)

// TestProgramWithRealSupervisor runs the model in a Bubble Tea program
// (teatest) over a real supervisor: --spawn, output arriving through the
// forwarder, typing a message, and quitting with confirmation.
func TestProgramWithRealSupervisor(t *testing.T) {
	s := realSupervisor(t, `read m; echo "got: $m"; sleep 30`)
	st := theme.Plain()
	m := New(s, Options{Styles: &st, Spawn: []string{"hello"}, Host: s})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := s.Subscribe()
	defer sub.Close()
	go Forward(ctx, sub, tm.Send, 0)

	waitOut := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	waitOut("got: hello")
	tm.Type("s")
	tm.Type("again")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitOut("interrupt it and send now")
	tm.Type("i")
	waitOut("got: again")
	tm.Type("q")
	waitOut("Quit? 1 agent is running")
	tm.Type("y")
	tm.WaitFinished(t, teatest.WithFinalTimeout(20*time.Second))
	for _, a := range s.Agents() {
		if a.Running() {
			t.Fatalf("agent %s still running after quit", a.AgentID)
		}
	}
}
