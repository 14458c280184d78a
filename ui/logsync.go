package ui

import (
	"context"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

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
// keeping the position it had there, or, when it is already shown, tells
// the pane the bounds the snapshot carries (and, when output arrived, that
// its end changed). It returns the command scanning new output for the
// search; the pane's fetches are made once per Update (fetchLog).
func (m *Model) syncLog(output bool) tea.Cmd {
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
		m.search.gen++
		m.search.inFlight, m.search.to, m.search.jump = false, 0, false
		if m.search.query != "" {
			m.log.SetQuery(m.search.query)
		}
	} else if output {
		m.log.Changed()
	}
	if !ok {
		return nil
	}
	m.setLogBounds()
	return m.scanMore()
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
	sup, key, styles := m.sup, m.shown, m.styles
	return func() tea.Msg {
		pg, err := fetchPage(sup, key, req, styles)
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

// onPage hands a fetched page to the log pane and scans what arrived for
// the search.
func (m *Model) onPage(msg pageMsg) tea.Cmd {
	delete(m.loading, msg.key)
	if msg.key != m.shown {
		return nil
	}
	m.log.SetPage(msg.req, msg.page, msg.err)
	return m.scanMore()
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

// startSearch searches the shown log for query; "" ends the search.
func (m *Model) startSearch(query string) tea.Cmd {
	m.search = scan{gen: m.search.gen + 1, query: query, jump: query != ""}
	if query != "" {
		m.lastQuery = query
	}
	m.log.SetQuery(query)
	return m.scanMore()
}

// scanMore scans the items of the shown log not scanned yet, in a command.
func (m *Model) scanMore() tea.Cmd {
	if m.search.query == "" || m.search.inFlight || m.shown.agent == "" {
		return nil
	}
	first, total := m.log.Bounds()
	from := max(m.search.to, first)
	if from >= total && !m.search.jump {
		return nil
	}
	m.search.inFlight = true
	sup, key, query, gen := m.sup, m.shown, m.search.query, m.search.gen
	return func() tea.Msg {
		r, err := sup.Search(context.Background(), key.agent, key.seq, key.transcript, query, from)
		return scanMsg{gen: gen, matches: r.Matches, to: r.To, err: err}
	}
}

// noMatchPrefix starts the warning of a search without a match.
const noMatchPrefix = "no match for “"

// onScan records search matches and shows the nearest one after a new
// query.
func (m *Model) onScan(msg scanMsg) tea.Cmd {
	if msg.gen != m.search.gen {
		return nil
	}
	m.search.inFlight = false
	if msg.err != nil {
		m.setFlash(levelError, "search: "+msg.err.Error())
		return nil
	}
	m.log.AddMatches(msg.matches)
	m.search.to = msg.to
	if m.search.jump {
		m.search.jump = false
		if !m.log.NearestMatch() {
			m.setFlash(levelWarn, noMatchPrefix+m.search.query+"”")
		} else if strings.HasPrefix(m.flash.text, noMatchPrefix) {
			m.flash = flash{} // an earlier search's warning is stale now
		}
	}
	return m.scanMore()
}
