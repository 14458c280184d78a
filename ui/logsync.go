package ui

import (
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/ui/logview"
)

// structured reports whether the selected agent's submissions have
// transcripts (spawned with a preset of structured output, SPEC §8; a
// restored agent keeps its preset whatever the host runs).
func (m Model) structured() bool {
	a, ok := m.selected()
	return ok && a.Structured
}

// shownKey returns what the log pane should show now.
func (m Model) shownKey() (logKey, bool) {
	a, ok := m.selected()
	if !ok || len(a.Submissions) == 0 {
		return logKey{}, false
	}
	seq := m.views[a.AgentID].seq
	if seq <= 0 || seq > len(a.Submissions) {
		seq = len(a.Submissions)
	}
	return logKey{agent: a.AgentID, seq: seq, transcript: a.Structured && !m.raw}, true
}

// syncLog points the log pane at the selected agent's chosen submission,
// keeping the position it had there (the pane's search goes on there), or,
// when it is already shown, tells the pane the bounds the snapshot carries
// (and, when output arrived, that its end changed). The pane's fetches and
// the scans of its search are made once per Update (fetchLog, scanLog).
func (m *Model) syncLog(output bool) {
	key, ok := m.shownKey()
	if key != m.shown {
		m.saveView()
		m.shown = key
		if !ok {
			m.log.Clear()
		} else {
			st := logview.State{Follow: true}
			if v, saved := m.views[key.agent]; saved && v.shownKey == key {
				st = v.state
			}
			m.log.SetLog(st)
		}
	} else if output {
		m.log.Changed()
	}
	if ok {
		m.setLogBounds()
	}
}

// setLogBounds tells the log pane the shown submission's bounds as the
// latest snapshot has them (SPEC §9: events carry what changed), unless
// its lines are not in memory or the snapshot has none (a host of an
// earlier /v1 sends no counts; the pane then learns them from its pages).
func (m *Model) setLogBounds() {
	a, ok := m.agent(m.shown.agent)
	if !ok || m.shown.seq < 1 || m.shown.seq > len(a.Submissions) {
		return
	}
	c := a.Submissions[m.shown.seq-1].Output
	if c == (proto.OutputCounts{}) {
		return
	}
	switch {
	case m.shown.transcript && c.Entries > 0:
		m.log.SetBounds(c.FirstEntry, c.Entries)
	case !m.shown.transcript && !c.Evicted:
		m.log.SetBounds(c.FirstLine, c.Lines)
	}
}

// fetchLog returns the command fetching what the log pane needs to draw,
// if anything: one request in flight at most (SPEC §9: a viewer fetches
// only what it draws, in a command, never in Update).
func (m *Model) fetchLog() tea.Cmd {
	if m.shown.agent == "" {
		return nil
	}
	req, ok := m.log.Request()
	if !ok {
		return nil
	}
	if m.evicted(m.shown) {
		// The host reads the submission back from its log file to answer:
		// the pane says so until the page comes.
		m.loading[m.shown] = true
	}
	sup, key, styles, ctx := m.sup, m.shown, m.styles, m.ctx
	return func() tea.Msg {
		pg, err := fetchPage(ctx, sup, key, req, *styles)
		return pageMsg{key: key, req: req, page: pg, err: err}
	}
}

// evicted reports whether the latest snapshot says that submission key's
// lines are not in the host's memory (SPEC §5, §10): a window of them is
// read back from the log file first.
func (m Model) evicted(key logKey) bool {
	a, ok := m.agent(key.agent)
	return ok && key.seq >= 1 && key.seq <= len(a.Submissions) && a.Submissions[key.seq-1].Output.Evicted
}

// onPage hands a fetched page to the log pane.
func (m *Model) onPage(msg pageMsg) {
	delete(m.loading, msg.key)
	if msg.key == m.shown {
		m.log.SetPage(msg.req, msg.page, msg.err)
	}
}

// saveView remembers where the log pane is for the shown agent.
func (m *Model) saveView() {
	if m.shown.agent == "" {
		return
	}
	v := m.views[m.shown.agent]
	v.state, v.shownKey = m.log.State(), m.shown
	m.views[m.shown.agent] = v
}

// scanLog returns the command asking the host for the matches of the log
// pane's search in what it has not scanned yet, if anything: one scan in
// flight at most, off the Update goroutine (SPEC §9).
func (m *Model) scanLog() tea.Cmd {
	if m.shown.agent == "" {
		return nil
	}
	sc, ok := m.log.NextScan()
	if !ok {
		return nil
	}
	sup, key, ctx := m.sup, m.shown, m.ctx
	return func() tea.Msg {
		r, err := sup.Search(ctx, key.agent, key.seq, key.transcript, sc.Query, sc.From)
		return scanMsg{key: key, scan: sc, matches: r.Matches, to: r.To, err: err}
	}
}

// onScan hands the host's matches to the log pane, which shows the nearest
// one after a new query; what it says goes on the message line.
func (m *Model) onScan(msg scanMsg) {
	if msg.key != m.shown {
		return
	}
	found, err := m.log.SetScan(msg.scan, msg.matches, msg.to, msg.err)
	var none *logview.NoMatchError
	switch {
	case errors.As(err, &none):
		m.onSearchSaid(err)
	case err != nil:
		m.say(levelError, "search: "+err.Error())
	case found && m.reply.search:
		m.reply = reply{} // an earlier search's warning is stale now
	}
}

// onSearchSaid shows what the log pane's search keys or a scan said: that
// there is no search or no match, or nothing (the search was cleared, and
// so is what an earlier search said).
func (m *Model) onSearchSaid(err error) {
	var none *logview.NoMatchError
	switch {
	case err == nil:
		m.reply = reply{}
	case errors.Is(err, logview.ErrNoSearch):
		m.say(levelInfo, "no search: press "+m.keys.Search.Help().Key+" to search the log")
	case errors.As(err, &none):
		m.say(levelWarn, err.Error())
		m.reply.search = true
	}
}
