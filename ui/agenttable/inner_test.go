package agenttable

import (
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

func innerOne(id, parent, desc, status string) proto.InnerAgent {
	return proto.InnerAgent{TaskID: id, ParentTaskID: parent, SubmissionSeq: 1, Description: desc, Status: status}
}

// TestInnerRowsNestAndCycles: nested inner agents nest under the one that
// started them; a cycle of parent_task_ids (which no CLI writes) still
// shows each once, cut where it is found; with inner off none shows.
func TestInnerRowsNestAndCycles(t *testing.T) {
	agents := forest()[:1] // a, alone
	agents[0].InnerAgents = []proto.InnerAgent{
		innerOne("x", "", "outer", proto.InnerRunning),
		innerOne("y", "x", "deep", proto.InnerRunning),
		innerOne("p", "q", "loop one", proto.InnerErrored),
		innerOne("q", "p", "loop two", proto.InnerErrored),
	}
	m := treeTable(agents, nil)
	want(t, m, "a")
	m.SetInner(true)
	want(t, m, "a", "├─ ◇ outer", "│  └─ ◇ deep", "└─ ◇ loop one", "   └─ ◇ loop two")
	if got := m.drawRow(2).status; got != Frames[0]+" running" {
		t.Errorf("deep's status %q", got)
	}
	if got := m.drawRow(3).status; got != "✗ errored" {
		t.Errorf("loop one's status %q", got)
	}
}

// TestInnerRowsInAFlatTable: a host of inner agents without the tree
// (none today) still draws them under their agent.
func TestInnerRowsInAFlatTable(t *testing.T) {
	agents := forest()[:2]
	agents[0].InnerAgents = []proto.InnerAgent{innerOne("x", "", "outer", proto.InnerCompleted)}
	m := New(DefaultStyles(theme.Plain()))
	m.SetInner(true)
	m.SetAgents(agents, nil)
	m.SetSize(120, 6)
	if got := names(m); len(got) != 3 || got[1] != "└─ ◇ outer" {
		t.Fatalf("flat rows %q", got)
	}
}

// TestBelowCountsInner: a folded row says the inner agents it hides
// apart from the agents.
func TestBelowCountsInner(t *testing.T) {
	for _, c := range []struct {
		b    Below
		want string
	}{
		{Below{Inner: 1}, "1 inner agent"},
		{Below{Agents: 2, Running: 1, Completed: 1, Inner: 3}, "2 agents: 1 running, 1 completed; 3 inner agents"},
		{Below{Agents: 1, Closed: 1}, "1 agent: 1 closed"},
	} {
		if got := c.b.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.b, got, c.want)
		}
	}
}

// TestInnerMessageAndNote: what an inner row and the refused keys say.
func TestInnerMessageAndNote(t *testing.T) {
	in := proto.InnerAgent{Description: "Explore\nthe repo", Status: proto.InnerRunning, LastTool: "Bash", ToolCount: 1, Tokens: 1200}
	if got := InnerMessage(in); got != "inner · → Bash · 1 tool · 1.2k tok" {
		t.Errorf("running: %q", got)
	}
	if got := InnerNote(in, "review"); got != "Explore the repo is an inner agent of review: interrupt review to end it" {
		t.Errorf("note: %q", got)
	}
	in.Status, in.Summary, in.Tokens = proto.InnerInterrupted, "", 0
	if got := InnerMessage(in); got != "inner interrupted · 1 tool, last Bash" {
		t.Errorf("ended: %q", got)
	}
	if got := InnerNote(in, "review"); !strings.Contains(got, "has ended (interrupted)") {
		t.Errorf("ended note: %q", got)
	}
	if got := InnerName(proto.InnerAgent{TaskID: "t9"}); got != "t9" {
		t.Errorf("no description: %q", got)
	}
}
