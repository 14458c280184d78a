package ui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/agentsearch"
)

// The search across agents (SPEC §7): S asks for a query, the results
// take the log pane's place and the keyboard (modeAcross) until esc or a
// jump to a hit. The host searches; a page of hits is fetched at a time,
// the next one when the cursor comes near the end (agentsearch.More).

// modeAcross: the results have the keyboard; inputAcross: the input asks
// for the query. Values away from model.go's iota lists, so that a mode
// or an input added there cannot take them.
const (
	modeAcross  mode      = 1000
	inputAcross inputKind = 1000
)

// across is the state of the search across agents beside its results.
type across struct {
	results agentsearch.Model
	ready   bool               // results made (the first S)
	cancel  context.CancelFunc // ends the page in flight
}

// openAcross asks for a query, or says why this host cannot search.
func (m *Model) openAcross() {
	if !m.cfg.Has(proto.FeatureSearch) {
		m.say(levelWarn, "this host does not search across agents (it is an older subdash): / searches the shown log")
		return
	}
	if m.zoom == paneTable { // the results take the log pane's place
		m.zoom = paneNone
		m.relayout()
	}
	if !m.across.ready {
		m.across.results, m.across.ready = agentsearch.New(agentsearch.DefaultStyles(*m.styles)), true
		m.across.results.SetSize(max(m.lay.logW-2, 0), max(m.lay.logH-2, 0))
	}
	m.openInput(inputAcross, "", "")
	if q := m.across.results.Query(); q != "" {
		m.input.Placeholder = "enter: the results for “" + termtext.OneLine(q, 0) + "” again"
	} else {
		m.input.Placeholder = "text to find in every agent's output (smart case)"
	}
}

// submitAcross starts the search for query, or shows the last results
// again for an empty one.
func (m *Model) submitAcross(query string) tea.Cmd {
	if query == "" {
		if m.across.results.Query() != "" {
			m.mode = modeAcross
		}
		return nil
	}
	m.stopAcross()
	gen := m.across.results.Start(query)
	m.mode = modeAcross
	return m.runAcross(proto.SearchRequest{Query: query, Limit: m.across.results.PageSize()}, gen)
}

// runAcross runs one page of the search in a command.
func (m *Model) runAcross(req proto.SearchRequest, gen int) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.across.cancel = cancel
	return agentsearch.Run(ctx, m.sup, req, gen)
}

// stopAcross cancels the page in flight, if any: a new query or closing
// the results ends the old search on the host.
func (m *Model) stopAcross() {
	if m.across.cancel != nil {
		m.across.cancel()
		m.across.cancel = nil
	}
}

// acrossKey gives a key to the results, then fetches the next page when
// the cursor came near the end of what arrived.
func (m *Model) acrossKey(k tea.KeyPressMsg) tea.Cmd {
	var cmd tea.Cmd
	m.across.results, cmd = m.across.results.Update(k)
	return tea.Batch(cmd, m.moreAcross())
}

// moreAcross starts the next page when the results want it.
func (m *Model) moreAcross() tea.Cmd {
	at, ok := m.across.results.More()
	if !ok {
		return nil
	}
	m.across.results.Fetching()
	return m.runAcross(proto.SearchRequest{Query: m.across.results.Query(), Limit: m.across.results.PageSize(), After: &at}, m.across.results.Gen())
}

// onAcross handles the messages of the results.
func (m *Model) onAcross(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case agentsearch.HitsMsg:
		if m.multi() {
			for i := range msg.Hits {
				msg.Hits[i].AgentPath = m.hitPath(msg.Hits[i])
			}
		}
		if !m.across.results.Add(msg) {
			return nil // an older query's
		}
		if msg.Final {
			m.across.cancel = nil
		}
		return tea.Batch(msg.Next, m.moreAcross())
	case agentsearch.CloseMsg:
		m.stopAcross()
		m.mode = modeNormal
	case agentsearch.JumpMsg:
		m.mode = modeNormal
		return m.jumpToHit(msg.Hit, msg.Query)
	}
	return nil
}

// jumpToHit shows hit's agent, submission and line in the log pane with
// query highlighted: a structured agent's hit is a transcript entry.
func (m *Model) jumpToHit(hit proto.SearchHit, query string) tea.Cmd {
	a, ok := m.agent(hit.AgentID)
	if !ok {
		m.say(levelWarn, "agent "+termtext.ShortID(hit.AgentID)+" is gone (forgotten since the search)")
		return nil
	}
	if !m.table.Select(a.AgentID) {
		m.filter = filter{}
		m.refreshRows()
		m.table.Select(a.AgentID)
		m.say(levelInfo, "filter cleared to show "+termtext.ShortID(a.AgentID))
	}
	m.saveView()
	v := m.views[a.AgentID]
	v.seq = hit.Seq
	if hit.Seq >= len(a.Submissions) {
		v.seq = 0 // the latest: follow it as usual
	}
	v.shownKey = logKey{} // a fresh view: the hit is shown, not where it was left
	m.views[a.AgentID] = v
	if a.Structured {
		m.raw = false // the hit is a transcript entry
	}
	m.syncLog(false)
	m.log.GotoItem(hit.Line)
	m.log.Search(query)
	return nil
}
