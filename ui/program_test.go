package ui

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/theme"
)

// TestProgramWithRealSupervisor runs the model in a Bubble Tea program
// (teatest) over a real supervisor: --spawn, output arriving through the
// forwarder, typing a message, and quitting with confirmation. What it
// waits for is the frame the program hands its renderer (the View of the
// model it holds), read in the program's loop: the renderer writes only
// the cells that changed, so the bytes it writes need not hold a line
// whole.
func TestProgramWithRealSupervisor(t *testing.T) {
	s := realSupervisor(t, `read m; echo "got: $m"; sleep 30`)
	st := theme.Plain()
	m := New(s, Options{Styles: &st, Spawn: []string{"hello"}, Host: s})
	var frame atomic.Value
	frame.Store("")
	shown := tea.WithFilter(func(m tea.Model, msg tea.Msg) tea.Msg {
		frame.Store(m.View().Content)
		return msg
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30), teatest.WithProgramOptions(shown))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := s.Subscribe()
	defer sub.Close()
	go Forward(ctx, sub, tm.Send, 0)

	// The filter sees the model before each message: the clock's tick
	// (a running agent) brings the next one.
	waitOut := func(what string) {
		t.Helper()
		testkit.Poll(t, 20*time.Second, "the screen showing "+what, func() (string, bool) {
			f := frame.Load().(string)
			return f, strings.Contains(f, what)
		})
	}
	waitOut("got: hello")
	tm.Type("s")
	tm.Type("again")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
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
