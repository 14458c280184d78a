package ui

import (
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
)

// onChanges applies supervisor changes: the table always, the log pane only
// when the selected agent changed. A batch that changes nothing on screen
// (agents off screen, the counts the same, the selected agent untouched)
// keeps the frame drawn last (frame.go): with 1,000 agents each printing
// a line a second most batches are such.
func (m *Model) onChanges(msg ChangesMsg) tea.Cmd {
	var cmds []tea.Cmd
	before := m.view.count
	changed, shows := m.applyChanges(msg.Changes)
	if changed {
		cmds = append(cmds, m.notifyTransitions(msg.Changes)...)
	}
	for _, c := range msg.Changes {
		shows = shows || len(c.Warnings) > 0 || c.Link != "" || c.Hosts != nil
		if c.Hosts != nil {
			m.onHosts(c.Hosts)
		}
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
	if m.mode == modeInput && (m.inputKind == inputSend || m.inputKind == inputEdit) {
		m.input.Prompt = m.inputPrompt() // "(running)" follows the target's status
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
		shows = true
	}
	shows = m.tilesChanged(msg.Changes) || shows
	m.view.still = !shows && m.mode == modeNormal && sameCounts(before, m.view.count)
	cmds = append(cmds, m.startTick())
	return tea.Batch(cmds...)
}

// applyChanges puts the snapshots the changes carry (proto.Change.Info)
// in the table: a changed agent's replaces its own, a new agent comes
// last (the table is oldest first), a forgotten one leaves. The model owns
// m.agents (no command holds it), so it is changed in place: a change
// costs its agent, not a copy of every agent, and the table's rows are
// laid out again only when agents came or went (or a change touches
// them, agentsChanged). It reports whether any agent changed, and whether
// the table or the notes may draw differently for it (shows).
func (m *Model) applyChanges(cs []proto.Change) (changed, shows bool) {
	var inPlace []int
	structural, recount := false, false
	for _, c := range cs {
		if c.AgentID == "" || c.Info == nil && !c.Forgotten {
			continue
		}
		i, ok := m.at[c.AgentID]
		switch {
		case c.Info == nil: // forgotten
			if m.restored[c.AgentID] {
				delete(m.restored, c.AgentID)
				m.forgotten++ // the host's note on restored agents counts it no more
			}
			if ok {
				m.agents = slices.Delete(m.agents, i, i+1)
				m.setAgents(m.agents) // the indices after it moved
				inPlace, structural = inPlace[:0], true
			}
		case ok:
			// the notes name the failing agents (notes.go)
			shows = shows || m.agents[i].Failure != "" || c.Info.Failure != "" || m.table.Redraws(i, &m.agents[i], c.Info)
			was := proto.CountAgents(m.agents[i : i+1])
			m.agents[i] = *c.Info
			// the counts change only when an agent's own count does
			recount = recount || !sameCounts(was, proto.CountAgents(m.agents[i:i+1]))
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
		shows = m.agentsChanged(inPlace, recount) || shows
	}
	return structural || len(inPlace) > 0, shows || structural
}
