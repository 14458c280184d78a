package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/ui/agenttable"
)

// agent returns the snapshot of agent id.
func (m Model) agent(id string) (proto.AgentInfo, bool) {
	if i, ok := m.at[id]; ok && i < len(m.agents) && m.agents[i].AgentID == id {
		return m.agents[i], true
	}
	return proto.AgentInfo{}, false
}

// selected returns the selected agent; on an inner agent's row (SPEC §8),
// the agent it runs in, whose log pane is shown.
func (m Model) selected() (proto.AgentInfo, bool) {
	return m.agent(m.table.SelectedID())
}

// innerKey refuses, with the table's note, a key that acts on an agent
// (send, resend, edit, interrupt, close, resume, forget, cancel queue)
// when the selected row is an inner agent: subdash cannot send to it or
// close it, interrupting its agent ends it (SPEC §8). It reports whether
// it took the key; the other keys (the log pane, the pager, submissions,
// approvals) act on its agent.
func (m *Model) innerKey(k tea.KeyPressMsg) bool {
	in, id, ok := m.table.SelectedInner()
	km := m.keys
	if !ok || !key.Matches(k, km.Send, km.Resend, km.EditResend, km.Interrupt, km.Close, km.Resume, km.Forget, km.CancelQueue) {
		return false
	}
	m.say(levelWarn, agenttable.InnerNote(in, m.label(id)))
	return true
}
