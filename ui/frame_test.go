package ui

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

// manyOnScreen returns the dashboard at 160x45 (colour on) over n agents
// in a tree, and the agents.
func manyOnScreen(t *testing.T, n int) (Model, []proto.AgentInfo) {
	t.Helper()
	f := treeFake(n)
	st := theme.New(theme.Options{Profile: colorprofile.ANSI256, Dark: true})
	m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }})
	m.tickFn = func() tea.Cmd { return nil }
	nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
	return nm.(Model), f.Agents()
}

// changeOf is the batch saying agent a changed to a.
func changeOf(a proto.AgentInfo, output bool) ChangesMsg {
	return ChangesMsg{Changes: []proto.Change{{AgentID: a.AgentID, Agent: !output, Output: output, Info: &a}}}
}

func step(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	nm, _ := m.Update(msg)
	return nm.(Model)
}

// A batch that changes agents off screen keeps the frame; one that
// changes what is drawn (what a row on screen shows, the selected agent,
// the counts of the status line) draws the new frame.
func TestOffScreenChangesKeepTheFrame(t *testing.T) {
	m, agents := manyOnScreen(t, 200)
	before := m.View().Content
	var last proto.AgentInfo // a running one of the last subtrees: far below the rows drawn
	for _, a := range agents[len(agents)/2:] {
		if a.Running() {
			last = a
		}
	}
	if first, end := m.table.Shown(); first != 0 || end >= m.table.Len() {
		t.Fatalf("rows drawn %d–%d of %d: want the first only", first, end, m.table.Len())
	}

	off := last
	off.LastMessage = "a message nobody sees"
	m = step(t, m, changeOf(off, true))
	if !m.view.still || m.View().Content != before {
		t.Errorf("a change of an agent off screen drew a new frame (still %v)", m.view.still)
	}
	if got := m.draw(); got != before {
		t.Fatalf("the frame kept is not what the model draws:\n%s\nwant\n%s", before, got)
	}

	// The same agent ends: the status line's counts change.
	ended := off
	ended.Status = proto.StatusCompleted
	ended.Submissions = append([]proto.SubmissionInfo(nil), off.Submissions...)
	ended.Submissions[len(ended.Submissions)-1].EndedAt = t0
	ended.Submissions[len(ended.Submissions)-1].Status = proto.StatusCompleted
	c0 := m.counts().Completed
	m = step(t, m, changeOf(ended, false))
	if m.view.still || !strings.Contains(m.View().Content, fmt.Sprintf("%d completed", c0+1)) {
		t.Errorf("an agent off screen completed: the status line does not say %d completed", c0+1)
	}

	// An agent on screen, not selected, printed lines: its row shows
	// none of it.
	on := agents[1]
	printed := on
	printed.Submissions = append([]proto.SubmissionInfo(nil), on.Submissions...)
	printed.Submissions[len(printed.Submissions)-1].Output.Lines += 40
	frame := m.View().Content
	m = step(t, m, changeOf(printed, true))
	if !m.view.still || m.View().Content != frame || m.draw() != frame {
		t.Errorf("output of an agent on screen (not selected) drew a new frame (still %v)", m.view.still)
	}

	// Its row's message changes: the row.
	on.LastMessage = "drawn on its row"
	m = step(t, m, changeOf(on, true))
	if m.view.still || !strings.Contains(m.View().Content, "drawn on its row") {
		t.Error("a change of a row on screen is not drawn")
	}

	// A running agent on screen says what it does now: the clock's next
	// tick draws it, not the batch (with every row on screen printing, a
	// frame per batch).
	drawn := false
	for i, a := range agents[2:] {
		if !a.Running() || a.AgentID == m.table.SelectedID() {
			continue
		}
		a.Now = fmt.Sprintf("→ Bash go test ./pkg%d/...", i)
		frame = m.View().Content
		m = step(t, m, changeOf(a, true))
		if !m.view.still || m.View().Content != frame {
			t.Fatalf("a running agent's NOW drew a frame at once (still %v)", m.view.still)
		}
		m = step(t, m, tickMsg(t0))
		if drawn = strings.Contains(m.View().Content, a.Now); drawn {
			break // on screen: the tick drew it
		}
	}
	if !drawn {
		t.Fatal("no tick drew a running agent's NOW")
	}
}

// Whatever arrives, in whatever order, the frame View returns is the one
// the model draws, but for the NOW text of agents that run on, which the
// clock's next tick draws (agenttable.Model.Redraws); and its counts are
// the agents': 400 random batches of changes (off screen and on, output,
// messages, statuses, attention), keys moving the selection and the
// clock's ticks.
func TestKeptFramesAreWhatTheModelDraws(t *testing.T) {
	m, agents := manyOnScreen(t, 200)
	rng := rand.New(rand.NewPCG(27, 1))
	statuses := []proto.Status{proto.StatusRunning, proto.StatusCompleted, proto.StatusErrored, proto.StatusClosed}
	kept := 0
	for i := range 400 {
		var msg tea.Msg
		switch rng.IntN(20) {
		case 0:
			msg = keyMsg([]string{"j", "k", "G", "g"}[rng.IntN(4)])
		case 1:
			msg = tickMsg(t0)
		default:
			var cs []proto.Change
			for range 1 + rng.IntN(17) {
				j := rng.IntN(len(agents))
				if rng.IntN(3) > 0 {
					j = len(agents)/2 + rng.IntN(len(agents)/2) // mostly off screen
				}
				a := m.agents[m.at[agents[j].AgentID]]
				switch rng.IntN(6) {
				case 0:
					a.Status = statuses[rng.IntN(len(statuses))]
					a.Submissions = append([]proto.SubmissionInfo(nil), a.Submissions...)
					if n := len(a.Submissions); n > 0 && a.Status != proto.StatusRunning {
						a.Submissions[n-1].EndedAt, a.Submissions[n-1].Status = t0, a.Status
					} else if n > 0 {
						a.Submissions[n-1].EndedAt = time.Time{}
					}
				case 1:
					a.LastMessage = fmt.Sprintf("message %d", i)
				case 2:
					a.NeedsYou = &proto.Attention{Reason: "errored", Seq: uint64(i + 1)}
				case 3:
					a.NeedsYou = nil
				}
				cs = append(cs, proto.Change{AgentID: a.AgentID, Output: true, Agent: true, Info: &a})
			}
			msg = ChangesMsg{Changes: cs}
		}
		m = step(t, m, msg)
		if m.view.still {
			kept++
		}
		if got, want := m.counts(), proto.CountAgents(m.agents); !sameCounts(got, want) {
			t.Fatalf("step %d: the status line counts %+v, the agents are %+v", i, got, want)
		}
		if got, want := m.View().Content, m.draw(); got != want {
			ticked := step(t, m, tickMsg(t0))
			if !m.view.still || ticked.View().Content != ticked.draw() {
				t.Fatalf("step %d (%T, still %v): View returned a frame that is not the model's, nor is the next tick's:\n%s\nwant\n%s", i, msg, m.view.still, got, want)
			}
		}
	}
	if kept == 0 {
		t.Fatal("no batch kept the frame: the test does not test keeping it")
	}
	t.Logf("%d of 400 updates kept the frame", kept)
}
