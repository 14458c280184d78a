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
		switch {
		case c.Link != "" && c.LinkUp:
			m.linkDown = ""
			m.say(levelInfo, c.Link)
		case c.Link != "":
			m.linkDown = c.Link
			m.reply = reply{} // an earlier reply would hide it (replies go before notes)
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
// costs its agent, not a copy of every agent, and the table's rows are
// laid out again only when agents came or went (or a change touches
// them, agentsChanged). It reports whether any agent changed.
func (m *Model) applyChanges(cs []proto.Change) bool {
	var inPlace []int
	structural := false
	for _, c := range cs {
		if c.AgentID == "" || c.Info == nil && !c.Forgotten {
			continue
		}
		i, ok := m.at[c.AgentID]
		switch {
		case c.Info == nil: // forgotten
			if ok {
				m.agents = slices.Delete(m.agents, i, i+1)
				m.setAgents(m.agents) // the indices after it moved
				inPlace, structural = inPlace[:0], true
			}
		case ok:
			m.agents[i] = *c.Info
			inPlace = append(inPlace, i)
		default:
			m.agents = append(m.agents, *c.Info)
			m.at[c.AgentID] = len(m.agents) - 1
			structural = true
		}
	}
	switch {
	case structural:
		m.setAgents(m.agents)
	case len(inPlace) > 0:
		m.agentsChanged(inPlace)
	}
	return structural || len(inPlace) > 0
}
