package agenttable

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

// node is an agent of a test tree: id, parent id, task name, status.
func node(id, parent, name string, st proto.Status) proto.AgentInfo {
	a := proto.AgentInfo{Submissions: []proto.SubmissionInfo{{Seq: 1, Status: st, StartedAt: now, EndedAt: now}}}
	a.AgentID, a.TaskName, a.Status, a.LastMessage = id+"0000-id", name, st, "msg "+name
	if parent != "" {
		a.ParentID = parent + "0000-id"
	}
	if st == proto.StatusRunning {
		a.Submissions[0].EndedAt = time.Time{}
	}
	return a
}

// forest is a (b (c, d), e), f (g).
func forest() []proto.AgentInfo {
	return []proto.AgentInfo{
		node("aaaa", "", "a", proto.StatusRunning),
		node("bbbb", "aaaa", "b", proto.StatusCompleted),
		node("cccc", "bbbb", "c", proto.StatusErrored),
		node("dddd", "bbbb", "d", proto.StatusRunning),
		node("eeee", "aaaa", "e", proto.StatusClosed),
		node("ffff", "", "f", proto.StatusCompleted),
		node("gggg", "ffff", "g", proto.StatusCompleted),
	}
}

func treeTable(agents []proto.AgentInfo, match []bool) Model {
	m := New(DefaultStyles(theme.Plain()))
	m.SetTree(true)
	m.SetAgents(agents, match)
	m.SetSize(120, 12)
	return m
}

// names returns the AGENT cells of the rows, as drawn.
func names(m Model) []string {
	out := make([]string, m.Len())
	for i := range out {
		d := m.drawRow(i)
		out[i] = d.glyphs + d.name + d.fold
	}
	return out
}

func want(t *testing.T, m Model, rows ...string) {
	t.Helper()
	if got := names(m); strings.Join(got, "\n") != strings.Join(rows, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s\n\n%s", strings.Join(got, "\n"), strings.Join(rows, "\n"), m.View())
	}
}

func TestTreeOrderAndGlyphs(t *testing.T) {
	m := treeTable(forest(), nil)
	want(t, m, "a", "├─ b", "│  ├─ c", "│  └─ d", "└─ e", "f", "└─ g")
}

// TestParentsNotShownAndCycles: an agent whose parent is not in the
// snapshot is a child of the root; a cycle of parents (no host makes one)
// still gives every agent a row, once.
func TestParentsNotShownAndCycles(t *testing.T) {
	as := forest()[1:] // a is gone: b and e become roots
	m := treeTable(as, nil)
	want(t, m, "b", "├─ c", "└─ d", "e", "f", "└─ g")
	cyc := []proto.AgentInfo{node("xxxx", "yyyy", "x", proto.StatusCompleted), node("yyyy", "xxxx", "y", proto.StatusCompleted)}
	if m := treeTable(cyc, nil); m.Len() != 2 {
		t.Fatalf("a cycle drew %d rows, want 2:\n%s", m.Len(), m.View())
	}
}

// TestFoldedRowCounts: a folded row counts its descendants by status,
// each once, running first.
func TestFoldedRowCounts(t *testing.T) {
	m := treeTable(forest(), nil)
	m, _ = m.Update(tea.KeyPressMsg{Code: 'z', Text: "z"})
	want(t, m, "a +4", "f", "└─ g")
	if v := m.View(); !strings.Contains(v, "4 agents: 1 running, 1 errored, 1 completed, 1 closed") {
		t.Fatalf("folded row:\n%s", v)
	}
	if got := (Below{Agents: 1, NeedsYou: 1}).String(); got != "1 agent: 1 needs you" {
		t.Fatalf("Below = %q", got)
	}
}

// TestChangedInPlace: a change that touches what the rows show (a status
// counted by a fold, a filter's verdict) lays them out again; a change
// of a row's own text is drawn without.
func TestChangedInPlace(t *testing.T) {
	as := forest()
	m := treeTable(as, nil)
	m, _ = m.Update(tea.KeyPressMsg{Code: 'z', Text: "z"}) // fold a
	as[3].Status = proto.StatusCompleted                   // d, inside the fold, ends
	as[3].Submissions[0].EndedAt = now
	m.Changed([]int{3})
	if v := m.View(); !strings.Contains(v, "4 agents: 1 errored, 2 completed, 1 closed") {
		t.Fatalf("the fold's counts did not follow d:\n%s", v)
	}
	as[5].LastMessage = "a new message"
	m.Changed([]int{5})
	if v := m.View(); !strings.Contains(v, "a new message") {
		t.Fatalf("f's message:\n%s", v)
	}
	match := []bool{false, false, true, false, false, false, false} // c
	m = treeTable(as, match)
	want(t, m, "a", "└─ b", "   └─ c")
	match[6] = true // g now matches
	m.Changed([]int{6})
	want(t, m, "a", "└─ b", "   └─ c", "f", "└─ g")
}

// TestFlatWithoutTheTree: without the tree every agent is a row by its
// short id, in order, and fold keys say why nothing folds.
func TestFlatWithoutTheTree(t *testing.T) {
	m := treeTable(forest(), nil)
	m.SetTree(false)
	if v := m.View(); strings.Contains(v, "├─") || !strings.Contains(v, "  ID ") || !strings.Contains(v, "gggg0000") {
		t.Fatalf("flat table:\n%s", v)
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'z', Text: "z"})
	if msg, ok := cmd().(FoldMsg); !ok || !strings.Contains(msg.Text, "no tree") {
		t.Fatalf("z without the tree said %v", cmd())
	}
}
