package ui

import (
	tea "github.com/charmbracelet/bubbletea"
	"strings"

	"github.com/subdash/subdash/ui/logview"
)

// structured reports whether submissions have transcripts (a preset with
// structured output, SPEC §8).
func (m Model) structured() bool { return m.cfg.Preset.Structured() }

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
	return logKey{agent: a.AgentID, seq: seq, transcript: m.structured() && !m.raw}, true
}

// syncLog points the log pane at the selected agent's chosen submission,
// keeping the position it had there, or renders it again when it is
// already shown. It returns the command reading an evicted submission
// back, or scanning new output for the search.
func (m *Model) syncLog() tea.Cmd {
	key, ok := m.shownKey()
	if key != m.shown {
		m.saveView()
		st := logview.State{Follow: true}
		if v, saved := m.views[key.agent]; saved && v.shownKey == key {
			st = v.state
		}
		m.shown = key
		var src logview.Source
		if ok {
			src = m.source(key)
		}
		m.log.SetSource(src, st)
		m.search.gen++
		m.search.inFlight, m.search.to, m.search.jump = false, 0, false
		if m.search.query != "" {
			m.log.SetQuery(m.search.query)
		}
	} else {
		m.log.Refresh()
	}
	if !ok {
		return nil
	}
	if m.log.Evicted() && !m.loading[key] {
		m.loading[key] = true
		return m.loadCmd(key)
	}
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

// source returns the log source for key.
func (m Model) source(key logKey) logview.Source {
	if key.transcript {
		return transcriptSource{sup: m.sup, id: key.agent, seq: key.seq, styles: m.styles}
	}
	return rawSource{sup: m.sup, id: key.agent, seq: key.seq}
}

// loadCmd reads an evicted submission back from its log file.
func (m Model) loadCmd(key logKey) tea.Cmd {
	sup := m.sup
	return func() tea.Msg {
		return loadedMsg{key: key, err: sup.LoadOutput(key.agent, key.seq)}
	}
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
		r, err := sup.Search(key.agent, key.seq, key.transcript, query, from)
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
