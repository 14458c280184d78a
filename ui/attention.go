package ui

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/internal/cells"
)

// seenMsg reports the end of a MarkSeen call.
type seenMsg struct {
	id  string
	err error
}

// notifyTransitions returns one notification command per agent that
// started needing you since the last snapshot (SPEC §11): at most once per
// agent per transition (Attention.Seq), and none for the agent on screen
// while the terminal has focus. It looks at the agents of cs only: an
// agent starts needing you in a change of its own (a batch costs its
// changes, not every agent).
func (m *Model) notifyTransitions(cs []proto.Change) []tea.Cmd {
	var cmds []tea.Cmd
	sel := m.table.SelectedID()
	for _, c := range cs {
		i, ok := m.at[c.AgentID]
		if !ok || c.Info == nil || i >= len(m.agents) {
			continue
		}
		a := &m.agents[i]
		at := a.NeedsYou
		if at == nil || at.Seq <= m.notified[a.AgentID] {
			continue
		}
		m.notified[a.AgentID] = at.Seq
		if a.AgentID == sel && m.focused && m.mode != modeHelp {
			continue // on screen: you see it happen
		}
		if c := notifyCmd(m.opts.Terminal, m.opts.Notify, *at); c != nil {
			cmds = append(cmds, c)
		}
	}
	return cmds
}

// seenCmd marks the agent on screen as seen when it needs you and the
// terminal has focus (a terminal that never reports focus counts as
// focused), once per transition, in a command.
func (m *Model) seenCmd() tea.Cmd {
	if !m.focused || m.mode == modeHelp || m.lay.tooSmall || m.width == 0 {
		return nil
	}
	a, ok := m.selected()
	if !ok || a.NeedsYou == nil || m.seenAsked[a.AgentID] >= a.NeedsYou.Seq || m.hostLost(a.Host) {
		return nil // (a lost host is told once it is back, if it still needs you)
	}
	m.seenAsked[a.AgentID] = a.NeedsYou.Seq
	sup, id, ctx := m.sup, a.AgentID, m.ctx
	return func() tea.Msg {
		_, err := sup.MarkSeen(ctx, id)
		return seenMsg{id: id, err: err}
	}
}

// jumpNeedsYou selects the agent that has needed you longest, other than
// the selected one and those already shown since they began to (their
// seen mark sent, the host's change not back yet: under load a jumped
// back to an agent just looked at), unfolding the subtrees it is in
// (SPEC §14); a filter that hides it is cleared.
func (m *Model) jumpNeedsYou() tea.Cmd {
	sel := m.table.SelectedID()
	var waiting []proto.AgentInfo
	for _, a := range m.agents {
		if a.NeedsYou != nil && a.AgentID != sel && m.seenAsked[a.AgentID] < a.NeedsYou.Seq {
			waiting = append(waiting, a)
		}
	}
	if len(waiting) == 0 {
		m.say(levelInfo, "no other agent needs you")
		return nil
	}
	sort.SliceStable(waiting, func(i, j int) bool {
		return waiting[i].NeedsYou.Since.Before(waiting[j].NeedsYou.Since.Time)
	})
	id := waiting[0].AgentID
	if !m.table.Reveal(id) {
		m.filter = filter{}
		m.refreshRows()
		m.table.Reveal(id)
		m.say(levelInfo, "filter cleared to show "+m.label(id))
	}
	m.syncLog(false)
	return nil
}

// filter selects the table's rows (SPEC §11): status words (running,
// completed, errored, closed, stopping, needs, queued) match any of them;
// every other word must appear in the agent's id, host (several hosts,
// SPEC §9), task name, agent path, message, activity, queued messages or
// error reason, case-insensitively. With the tree, the table shows each
// match's ancestors too, muted.
type filter struct {
	text     string   // as typed, for the title
	statuses []string // status words
	words    []string // lower-case words to find
}

// filterStatuses are the words a filter reads as statuses.
var filterStatuses = []string{"running", "completed", "errored", "closed", "stopping", "needs", "queued"}

// parseFilter reads a filter as typed.
func parseFilter(text string) filter {
	f := filter{text: termtext.OneLine(text, 0)}
	for _, w := range strings.Fields(strings.ToLower(f.text)) {
		switch w {
		case "needs-you", "attention":
			w = "needs"
		case "failed", "error":
			w = "errored"
		case "done", "ok":
			w = "completed"
		}
		isStatus := false
		for _, st := range filterStatuses {
			isStatus = isStatus || w == st
		}
		if isStatus {
			f.statuses = append(f.statuses, w)
		} else {
			f.words = append(f.words, w)
		}
	}
	return f
}

// active reports whether f hides anything.
func (f filter) active() bool { return f.text != "" }

// match reports whether the table shows agent a under f.
func (f filter) match(a proto.AgentInfo) bool {
	if !f.active() {
		return true
	}
	if len(f.statuses) > 0 {
		ok := false
		for _, st := range f.statuses {
			switch st {
			case "needs":
				ok = ok || a.NeedsYou != nil
			case "queued":
				ok = ok || a.QueuedMessage != "" || len(a.QueuedMessages) > 0
			case "stopping":
				ok = ok || a.Stopping
			case "running":
				ok = ok || a.Running()
			default:
				ok = ok || string(a.Status) == st && !a.Running()
			}
		}
		if !ok {
			return false
		}
	}
	if len(f.words) == 0 {
		return true
	}
	hay := strings.ToLower(a.AgentID + " " + a.Host + " " + cells.Head(a.TaskName, filterHead) + " " + cells.Head(a.AgentPath, filterHead) + " " +
		cells.Head(a.LastMessage, filterHead) + " " + cells.Head(a.Activity, filterHead) + " " + cells.Head(a.QueuedMessage, filterHead))
	for _, q := range a.QueuedMessages[min(1, len(a.QueuedMessages)):] { // the first is QueuedMessage
		hay += " " + strings.ToLower(cells.Head(q, filterHead))
	}
	if a.LastError != nil {
		hay += " " + strings.ToLower(cells.Head(*a.LastError, filterHead))
	}
	for _, w := range f.words {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// filterHead bounds what a filter searches of one field, in bytes, so
// that a message of megabytes costs no more than a short one.
const filterHead = 4096

// applyFilter sets the table's filter; the selection stays on its agent
// when that agent still shows.
func (m *Model) applyFilter(text string) tea.Cmd {
	m.filter = parseFilter(text)
	m.refreshRows()
	m.table.SelectMatch() // the selection leaves a muted ancestor for what was found
	switch n := m.matchN; {
	case !m.filter.active():
		m.say(levelInfo, "filter cleared: every agent shows")
	case n == 0:
		m.say(levelWarn, "no agent matches “"+m.filter.text+"”; F, ctrl+u, enter shows all")
	default:
		m.say(levelInfo, fmt.Sprintf("%d of %d agents match; F changes the filter", n, len(m.agents)))
	}
	m.syncLog(false)
	return nil
}

// tableTitle is the table's title: the number of agents, the filter
// with how many rows it shows, and the remote host of a viewer over ssh
// (HostConfig.Where).
func (m Model) tableTitle() string {
	t := fmt.Sprintf("agents %d", len(m.agents))
	if m.filter.active() {
		t = fmt.Sprintf("agents %d/%d · filter: %s", m.matchN, len(m.agents), m.filter.text)
	}
	if m.cfg.Where != "" {
		t += " · " + m.cfg.Where
	}
	if m.multi() {
		t += fmt.Sprintf(" · %d hosts", len(m.hosts))
		if n := len(m.lostHosts()); n > 0 {
			t += fmt.Sprintf(", %d lost", n)
		}
	}
	return t
}
