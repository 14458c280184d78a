package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/internal/cells"
)

// The dashboard's side of the agent tree (SPEC §14): how it names agents,
// and what a close, resume or forget of an agent with descendants asks and
// says. The table draws the tree (ui/agenttable).

// tree reports whether the host keeps the tree (the `tree` feature): an
// older host's agents have no names, parents or cascades.
func (m Model) tree() bool { return m.cfg.Has(proto.FeatureTree) }

// label names agent id in the dashboard's words: its path below the root
// ("review/tests", a target as its id is) when it has a task name on a
// host of the tree, else its short id.
//
// With several hosts, a label an agent of another host has too is said
// with the host: HOST:/root/review/tests, HOST:2e0e0e02 (SPEC §9).
func (m Model) label(id string) string {
	a, ok := m.agent(id)
	if !ok {
		return termtext.ShortID(id)
	}
	l := m.plainLabel(&a)
	if m.ambiguous[l] {
		return hostLabel(&a, m.tree())
	}
	return l
}

// plainLabel is label without a host.
func (m Model) plainLabel(a *proto.AgentInfo) string {
	if m.tree() && a.TaskName != "" && strings.HasPrefix(a.AgentPath, proto.RootPath+"/") {
		return termtext.OneLine(cells.Head(strings.TrimPrefix(a.AgentPath, proto.RootPath+"/"), 512), 0)
	}
	return termtext.ShortID(a.AgentID)
}

// labelWithID is label with the short id after a name: "review/tests
// 2e0e0e02", for the log pane's title, where the id column may be out of
// sight.
func (m Model) labelWithID(id string) string {
	l, short := m.label(id), termtext.ShortID(id)
	if l == short {
		return l
	}
	return l + " " + short
}

// descendants returns agent id's descendants in the snapshot, each once,
// nearest first: what a close closes with it, a resume reopens and a
// forget takes (SPEC §14). Cost: O(agents), on a key.
func (m Model) descendants(id string) []proto.AgentInfo {
	if !m.tree() {
		return nil
	}
	kids := map[string][]int{}
	for i := range m.agents {
		if p := m.agents[i].ParentID; p != "" {
			kids[p] = append(kids[p], i)
		}
	}
	var out []proto.AgentInfo
	seen := map[string]bool{id: true}
	for queue := []string{id}; len(queue) > 0; queue = queue[1:] {
		for _, i := range kids[queue[0]] {
			if a := m.agents[i]; !seen[a.AgentID] {
				seen[a.AgentID] = true
				out = append(out, a)
				queue = append(queue, a.AgentID)
			}
		}
	}
	return out
}

// closeAgent closes agent a with its descendants (SPEC §14), asking first
// when any of them runs; the question says how many go with it.
func (m *Model) closeAgent(a proto.AgentInfo) tea.Cmd {
	id, name := a.AgentID, m.label(a.AgentID)
	below := m.descendants(id)
	open, running := 0, 0
	for _, d := range below {
		if d.Status != proto.StatusClosed || d.Running() {
			open++
		}
		if d.Running() {
			running++
		}
	}
	if a.Status == proto.StatusClosed && !a.Running() && open == 0 {
		m.say(levelInfo, "agent "+name+" is already closed; "+m.keys.Resume.Help().Key+" reopens it")
		return nil
	}
	if !a.Running() && running == 0 {
		return m.opCmd(opClose, id, "", false)
	}
	var q string
	switch {
	case len(below) == 0:
		q = fmt.Sprintf("Close %s? It is running and will be stopped.", name)
	default:
		if a.Running() {
			running++
		}
		q = fmt.Sprintf("Close %s and %s below it? %d running will be stopped.", name, agentsN(len(below)), running)
	}
	m.ask(q, "close", "keep it", func(m *Model) tea.Cmd {
		m.markStopping(id)
		for _, d := range below {
			if d.Running() {
				m.markStopping(d.AgentID)
			}
		}
		return m.opCmd(opClose, id, "", false)
	}, nil)
	return nil
}

// agentsN says "1 agent" or "4 agents".
func agentsN(n int) string {
	if n == 1 {
		return "1 agent"
	}
	return fmt.Sprintf("%d agents", n)
}

// withDescendants says what else an operation took (the n ids
// StatusResult.Descendants names): " and 4 agents below it", "" for none.
func withDescendants(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" and %s below it", agentsN(n))
}

// cancelQueued cancels the last message queued for agent a (SPEC §11,
// §14: u, as the host's cancel-queue drops the last); the reply names it
// and how many remain.
func (m *Model) cancelQueued(a proto.AgentInfo) tea.Cmd {
	queued := a.QueuedMessages
	if len(queued) == 0 && a.QueuedMessage != "" {
		queued = []string{a.QueuedMessage} // a host before the tree keeps one
	}
	if len(queued) == 0 {
		m.say(levelInfo, "agent "+m.label(a.AgentID)+" has no queued message")
		return nil
	}
	cmd := m.opCmd(opUnqueue, a.AgentID, "", false)
	last, left := queued[len(queued)-1], len(queued)-1
	return func() tea.Msg {
		done := cmd().(opDoneMsg)
		done.cancelled, done.left = termtext.OneLine(cells.Head(last, 1024), 60), left
		return done
	}
}

// cancelledText is the reply to a cancelled queued message: "cancelled
// the message queued for lint", or with others left "cancelled the last
// of 3 messages queued for lint (“then report”); 2 remain, u cancels the
// next".
func cancelledText(label string, msg opDoneMsg) string {
	if msg.left == 0 {
		return "cancelled the message queued for " + label
	}
	return fmt.Sprintf("cancelled the last of %d messages queued for %s (“%s”); %d remain%s, u cancels the next",
		msg.left+1, label, msg.cancelled, msg.left, map[bool]string{true: "s", false: ""}[msg.left == 1])
}
