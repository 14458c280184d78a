package ui

import (
	"slices"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/subdash/subdash/supervisor/proto"
)

// onChanges applies supervisor changes: the table always, the log pane only
// when the selected agent changed.
func (m *Model) onChanges(msg ChangesMsg) tea.Cmd {
	var cmds []tea.Cmd
	if m.applyChanges(msg.Changes) {
		cmds = append(cmds, m.notifyTransitions()...)
	}
	for _, c := range msg.Changes {
		for _, w := range c.Warnings {
			m.cfg.Warnings = append(m.cfg.Warnings, w)
			m.say(levelError, w)
		}
	}
	sel := m.table.SelectedID()
	touched, output := false, false
	for _, c := range msg.Changes {
		if c.AgentID == sel && (c.Agent || c.Output || c.Forgotten) {
			touched = true
			output = output || c.Output
		}
	}
	if touched || m.shown.agent != sel {
		m.syncLog(output)
	}
	cmds = append(cmds, m.startTick())
	return tea.Batch(cmds...)
}

// applyChanges puts the snapshots the changes carry (proto.Change.Info)
// in the table: a changed agent's replaces its own, a new agent comes
// last (the table is oldest first), a forgotten one leaves. The model owns
// m.agents (no command holds it), so it is changed in place: a change
// costs its agent, not a copy of every agent. It reports whether any
// agent changed.
func (m *Model) applyChanges(cs []proto.Change) bool {
	changed := false
	for _, c := range cs {
		if c.AgentID == "" || c.Info == nil && !c.Forgotten {
			continue
		}
		i := slices.IndexFunc(m.agents, func(a proto.AgentInfo) bool { return a.AgentID == c.AgentID })
		switch {
		case c.Info == nil: // forgotten
			if i >= 0 {
				m.agents = slices.Delete(m.agents, i, i+1)
				changed = true
			}
		case i >= 0:
			m.agents[i] = *c.Info
			changed = true
		default:
			m.agents = append(m.agents, *c.Info)
			changed = true
		}
	}
	if changed {
		m.setAgents(m.agents)
	}
	return changed
}
