package agenttable

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
)

// onHost tags agents with host.
func onHost(host string, agents ...proto.AgentInfo) []proto.AgentInfo {
	for i := range agents {
		agents[i].Host = host
	}
	return agents
}

// twoHosts is laptop: a (b (c, d), e), f (g); box: r (s), an empty host
// "spare" between them.
func twoHosts() (Model, []Host) {
	agents := append(onHost("laptop", forest()...),
		onHost("box", node("rrrr", "", "r", proto.StatusRunning), node("ssss", "rrrr", "s", proto.StatusCompleted))...)
	hosts := []Host{{Name: "laptop", Text: "/home/me/app"}, {Name: "spare", Text: "/srv/spare"}, {Name: "box", Text: "ssh://box/src/app"}}
	m := treeTable(agents, nil)
	m.SetHosts(hosts)
	m.SetSize(120, 20)
	return m, hosts
}

// rowOf returns the line of view whose name cell starts with name (after
// the mark), spaces squeezed.
func rowOf(view, name string) string {
	for _, l := range strings.Split(view, "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, " › ")); len(f) > 0 && f[0] == name {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return ""
}

// TestHostRowsGroupTheAgents (SPEC §9 "Several hosts"): each host's row
// comes before its agents, which are its children in the tree; a host
// without agents has its row and says so; the row counts its agents.
func TestHostRowsGroupTheAgents(t *testing.T) {
	m, _ := twoHosts()
	want(t, m, "laptop", "├─ a", "│  ├─ b", "│  │  ├─ c", "│  │  └─ d", "│  └─ e", "└─ f", "   └─ g", "spare", "box", "└─ r", "   └─ s")
	view := m.View()
	for name, s := range map[string]string{
		"laptop": "laptop /home/me/app · 7 agents: 2 running, 1 errored, 3 completed, 1 closed",
		"spare":  "spare /srv/spare · no agents yet",
		"box":    "box ssh://box/src/app · 2 agents: 1 running, 1 completed",
	} {
		if got := rowOf(view, name); got != s {
			t.Errorf("%s's row: %q, want %q:\n%s", name, got, s, view)
		}
	}
	m.MoveTop()
	if id := m.SelectedID(); id != "" {
		t.Errorf("a host's row selected: SelectedID %q, want none", id)
	}
	if name, onRow, ok := m.SelectedHost(); name != "laptop" || !onRow || !ok {
		t.Errorf("SelectedHost on laptop's row: %q %v %v", name, onRow, ok)
	}
	m.MoveDown()
	if name, onRow, _ := m.SelectedHost(); name != "laptop" || onRow {
		t.Errorf("SelectedHost on a's row: %q on its row %v, want laptop's agent", name, onRow)
	}
}

// TestHostRowFoldsLikeASubtree: z on a host's row folds its agents into
// it, counting them; z again unfolds; ← on a top agent selects its host's
// row; Z folds every host too; a filter shows a host (muted) only when
// one of its agents matches.
func TestHostRowFoldsLikeASubtree(t *testing.T) {
	m, _ := twoHosts()
	key := func(s string) {
		m, _ = m.Update(tea.KeyPressMsg{Code: []rune(s)[0], Text: s})
	}
	m.SelectRow(9) // box
	key("z")
	want(t, m, "laptop", "├─ a", "│  ├─ b", "│  │  ├─ c", "│  │  └─ d", "│  └─ e", "└─ f", "   └─ g", "spare", "box +2")
	if got := rowOf(m.View(), "box"); got != "› box +2 ssh://box/src/app · 2 agents: 1 running, 1 completed" {
		t.Errorf("the folded host's row: %q\n%s", got, m.View())
	}
	key("z")
	want(t, m, "laptop", "├─ a", "│  ├─ b", "│  │  ├─ c", "│  │  └─ d", "│  └─ e", "└─ f", "   └─ g", "spare", "box", "└─ r", "   └─ s")
	m.SelectRow(10) // r: ← folds it, ← again selects its host's row
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
	if name, onRow, _ := m.SelectedHost(); name != "box" || !onRow {
		t.Errorf("← ← on r selected %q (on its row %v), want box's row", name, onRow)
	}
	key("z")
	key("z") // box unfolded again, r still folded
	want(t, m, "laptop", "├─ a", "│  ├─ b", "│  │  ├─ c", "│  │  └─ d", "│  └─ e", "└─ f", "   └─ g", "spare", "box", "└─ r +1")
	key("Z") // unfolds every fold
	key("Z")
	want(t, m, "laptop +7", "spare", "box +2")

	match := make([]bool, len(m.agents))
	for i, a := range m.agents {
		match[i] = a.TaskName == "s"
	}
	m.SetAgents(m.agents, match)
	want(t, m, "box", "└─ r", "   └─ s")
	if got := rowOf(m.View(), "box"); got != "box ssh://box/src/app · 1 match below" {
		t.Errorf("the filtered host's row: %q\n%s", got, m.View())
	}
}

// TestLostHostsAgentsAreMarked: the agents of a lost host stay, muted,
// their NOW led by "✗ host lost", a running one without its spinner; the
// host's row says why it was lost.
func TestLostHostsAgentsAreMarked(t *testing.T) {
	m, hosts := twoHosts()
	hosts[2].Lost = "no subdash is serving on socket /tmp/s.sock"
	m.SetHosts(hosts)
	v := m.View()
	if got := rowOf(v, "box"); got != "box ✗ host lost: no subdash is serving on socket /tmp/s.sock" {
		t.Errorf("box's row: %q\n%s", got, v)
	}
	for _, s := range []string{"└─ r rrrr0000 ● running 1 0s ✗ host lost · msg r", "└─ s ssss0000 ✓ completed 1 0s ✗ host lost · msg s"} {
		if !strings.Contains(strings.Join(strings.Fields(v), " "), s) {
			t.Errorf("the table lacks %q:\n%s", s, v)
		}
	}
	if strings.Contains(v, "✗ host lost · msg a") {
		t.Errorf("laptop's agents marked lost:\n%s", v)
	}
}
