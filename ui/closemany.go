package ui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
)

// closeShownMsg is the outcome of closing the agents the table showed
// (closeShown): the ids asked for, and CloseMany's result.
type closeShownMsg struct {
	ids []string
	res proto.CloseManyResult
	err error
}

// closeShown asks once, then closes every agent the filter matches (all
// without one; not the muted ancestors a filter shows) that is not closed
// yet (SPEC §11), each with its descendants whether shown or folded,
// in one call that terminates every running submission among them at
// once (CloseMany). A host without close-many is told about, not asked.
func (m *Model) closeShown() tea.Cmd {
	if !m.cfg.Has(proto.FeatureCloseMany) {
		m.say(levelWarn, "this host closes agents one at a time (its build has no close-many): "+m.keys.Close.Help().Key+" closes the selected one")
		return nil
	}
	var ids []string
	running := 0
	perHost, runningOn := map[string]int{}, map[string]int{} // with several hosts (SPEC §9)
	for i, a := range m.agents {
		if m.match != nil && !m.match[i] || a.Status == proto.StatusClosed && !a.Running() {
			continue // not in the filtered set (a muted ancestor is not), or closed
		}
		ids = append(ids, a.AgentID)
		perHost[a.Host]++
		if a.Running() {
			running++
			runningOn[a.Host]++
		}
	}
	if len(ids) == 0 {
		m.say(levelInfo, "every agent shown is closed already; F changes the filter")
		return nil
	}
	which := "every agent"
	if m.filter.active() {
		which = "every agent the filter “" + m.filter.text + "” shows"
	}
	q := fmt.Sprintf("Close %s: %s%s, with their descendants?", which, plural(len(ids), "agent"), m.perHost(perHost))
	if running > 0 {
		q += fmt.Sprintf(" %s running will be stopped%s.", plural(running, "agent"), m.perHost(runningOn))
	}
	m.ask(q, "close them", "keep them", func(m *Model) tea.Cmd {
		for _, id := range ids {
			if a, ok := m.agent(id); ok && a.Running() {
				m.stopping[id] = true
			}
		}
		m.refreshRows()
		return m.closeManyCmd(ids)
	}, nil)
	return nil
}

// closeManyCmd closes agents ids in one call (it waits for process groups
// to end: a command, never in Update).
func (m Model) closeManyCmd(ids []string) tea.Cmd {
	sup, ctx := m.sup, m.ctx
	return func() tea.Msg {
		res, err := sup.CloseMany(ctx, proto.CloseManyRequest{AgentIDs: ids})
		return closeShownMsg{ids: ids, res: res, err: err}
	}
}

// onCloseShown says how closing the shown agents went; the agents' new
// snapshots arrive on the event path.
func (m *Model) onCloseShown(msg closeShownMsg) tea.Cmd {
	for _, id := range msg.ids {
		delete(m.stopping, id)
	}
	m.refreshRows()
	if msg.err != nil {
		m.say(levelError, m.describe(opClose, "", msg.err))
		return nil
	}
	text := "closed " + plural(len(msg.res.Closed), "agent")
	if msg.res.DroppedQueued {
		text += "; their queued messages were dropped"
	}
	m.say(levelInfo, text)
	return nil
}

// plural is "1 agent", "2 agents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
