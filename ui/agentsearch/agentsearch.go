// Package agentsearch is the dashboard's search across agents (SPEC §7):
// the hits of a query over every agent's output, grouped by agent and
// submission, a page at a time. The host searches (proto.Searcher); the
// owner runs the search in commands (Run) and hands the hits over
// (HitsMsg), and asks for the next page only when the cursor comes near
// the end of what arrived (More): a viewer fetches the hits it shows, not
// every hit. enter asks the owner to show the hit in its agent's log
// (JumpMsg); esc closes (CloseMsg).
package agentsearch

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/internal/cells"
)

// Styles are the styles of the results.
type Styles struct {
	Text, Muted, Header, Selected, Error lipgloss.Style
	Match                                lipgloss.Style
	// MatchMark replaces Match when NoColor is set (lipgloss draws no
	// attribute without colour).
	MatchMark theme.Mark
	NoColor   bool
}

// DefaultStyles returns the results' styles from the dashboard's.
func DefaultStyles(t theme.Styles) Styles {
	return Styles{Text: t.Text, Muted: t.Muted, Header: t.Header, Selected: t.Selected, Error: t.Error,
		Match: t.Match, MatchMark: t.MatchMark, NoColor: t.NoColor}
}

// JumpMsg asks the owner to show Hit in its agent's log, Query
// highlighted.
type JumpMsg struct {
	Hit   proto.SearchHit
	Query string
}

// CloseMsg asks the owner to close the results.
type CloseMsg struct{}

// row is a line of the results: a group's header (hit < 0) or a hit.
type row struct {
	hit    int
	header string
}

// Model is the results of one query. The zero Model has none; Start
// begins one.
type Model struct {
	KeyMap keymap.AgentSearch
	// Styles are shared by the copies of the Model (New makes them): read
	// only.
	Styles *Styles

	query   string
	match   termtext.Matcher
	gen     int
	hits    []proto.SearchHit
	rows    []row
	total   int  // hits of every page
	done    bool // the last page's summary arrived
	more    bool // it was truncated: a next page exists
	loading bool // a page is being fetched
	notes   []string
	err     error

	cursor, offset int // rows
	width, height  int
}

// New returns empty results.
func New(st Styles) Model { return Model{KeyMap: keymap.DefaultAgentSearch(), Styles: &st} }

// Start forgets the results shown and begins those of query; it returns
// the generation Run's messages must carry (those of an older query are
// dropped).
func (m *Model) Start(query string) int {
	m.gen++
	*m = Model{KeyMap: m.KeyMap, Styles: m.Styles, gen: m.gen, width: m.width, height: m.height,
		query: query, match: termtext.NewMatcher(query), loading: true}
	return m.gen
}

// Query returns the query shown, "" before the first.
func (m Model) Query() string { return m.query }

// PageSize is how many hits a page asks for: two screens.
func (m Model) PageSize() int { return max(2*m.height, 20) }

// Add takes a message of Run. It reports whether the message was of this
// query.
func (m *Model) Add(msg HitsMsg) bool {
	if msg.gen != m.gen {
		return false
	}
	for _, h := range msg.Hits {
		if n := len(m.hits); n == 0 || m.hits[n-1].AgentID != h.AgentID || m.hits[n-1].Seq != h.Seq {
			m.rows = append(m.rows, row{hit: -1, header: groupTitle(h)})
		}
		m.hits = append(m.hits, h)
		m.rows = append(m.rows, row{hit: len(m.hits) - 1})
	}
	m.total += len(msg.Hits)
	if msg.Final {
		m.loading = false
		m.err = msg.Err
		m.done = msg.Err == nil
		m.more = msg.Summary.Truncated
		m.notes = append(m.notes, msg.Summary.Notes...)
	}
	if m.cursor < len(m.rows) && m.rows[m.cursor].hit < 0 {
		m.step(1) // the cursor rests on a hit
	}
	return true
}

// groupTitle is the header of a hit's agent and submission.
func groupTitle(h proto.SearchHit) string {
	path := h.AgentPath
	if path == "" {
		path = termtext.ShortID(h.AgentID)
	}
	return fmt.Sprintf("%s · %s · #%d", termtext.OneLine(path, 0), termtext.ShortID(h.AgentID), h.Seq)
}

// More returns where the next page starts when one is wanted: the last
// page was cut at its limit and the cursor is within a screen of the
// end. The owner runs it and calls Fetching.
func (m Model) More() (proto.SearchHitAt, bool) {
	if !m.more || m.loading || len(m.hits) == 0 || len(m.rows)-m.cursor > max(m.height, 1)+1 {
		return proto.SearchHitAt{}, false
	}
	return m.hits[len(m.hits)-1].At(), true
}

// Fetching records that the next page is asked for.
func (m *Model) Fetching() { m.loading, m.more = true, false }

// Gen returns the generation of the results (Run's gen).
func (m Model) Gen() int { return m.gen }

// SetSize sets the size of the results in cells.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = max(w, 0), max(h, 0)
	m.clamp()
}

// Update moves the cursor, jumps or closes on a key.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	km := m.KeyMap
	switch {
	case key.Matches(k, km.Close):
		return m, func() tea.Msg { return CloseMsg{} }
	case key.Matches(k, km.Jump):
		if m.cursor < len(m.rows) && m.rows[m.cursor].hit >= 0 {
			jump := JumpMsg{Hit: m.hits[m.rows[m.cursor].hit], Query: m.query}
			return m, func() tea.Msg { return jump }
		}
	case key.Matches(k, km.Down):
		m.step(1)
	case key.Matches(k, km.Up):
		m.step(-1)
	case key.Matches(k, km.PageDown):
		m.stepN(max(m.height-1, 1))
	case key.Matches(k, km.PageUp):
		m.stepN(-max(m.height-1, 1))
	case key.Matches(k, km.Top):
		m.cursor = 0
		m.step(1)
	case key.Matches(k, km.Bottom):
		m.cursor = max(len(m.rows)-1, 0)
	}
	m.clamp()
	return m, nil
}

// step moves the cursor to the next (d > 0) or previous hit row.
func (m *Model) step(d int) {
	for i := m.cursor + d; i >= 0 && i < len(m.rows); i += d {
		if m.rows[i].hit >= 0 {
			m.cursor = i
			return
		}
	}
}

func (m *Model) stepN(n int) {
	d := 1
	if n < 0 {
		d, n = -1, -n
	}
	for ; n > 0; n-- {
		m.step(d)
	}
}

// clamp keeps the cursor in view, with its group's header when it fits.
func (m *Model) clamp() {
	m.cursor = min(max(m.cursor, 0), max(len(m.rows)-1, 0))
	if m.cursor < m.offset {
		m.offset = m.cursor
		if m.offset > 0 && m.rows[m.offset-1].hit < 0 {
			m.offset--
		}
	}
	if h := max(m.height, 1); m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
}

// Title says what the results are: the query, how many hits so far, in
// how many agents, and whether more are coming.
func (m Model) Title() string {
	agents := map[string]bool{}
	for _, h := range m.hits {
		agents[h.AgentID] = true
	}
	state := ""
	switch {
	case m.loading:
		state = " · searching…"
	case m.more:
		state = "+ (more below)"
	}
	return fmt.Sprintf("search “%s” · %s%s in %s", termtext.OneLine(m.query, 0), count(m.total, "hit"), state, count(len(agents), "agent"))
}

// Footer says what went wrong or what could not be searched, and the
// keys.
func (m Model) Footer() string {
	var parts []string
	if m.err != nil {
		parts = append(parts, "✗ "+termtext.OneLine(m.err.Error(), 0))
	}
	if len(m.notes) > 0 {
		parts = append(parts, fmt.Sprintf("%d logs not searched: %s", len(m.notes), termtext.OneLine(m.notes[0], 0)))
	}
	parts = append(parts, "enter shows · esc closes")
	return strings.Join(parts, " · ")
}

// View draws the rows on screen, exactly height rows of width cells.
func (m Model) View() string {
	out := make([]string, 0, m.height)
	if len(m.rows) == 0 {
		msg := "searching every agent…"
		switch {
		case m.err != nil:
			msg = "the search failed: " + m.err.Error()
		case m.done:
			msg = "no agent's output holds “" + m.query + "”"
		}
		for i := 0; i < m.height; i++ {
			line := ""
			if i == m.height/2 {
				line = m.Styles.Muted.Render(cells.Center(termtext.OneLine(msg, 0), m.width))
			}
			out = append(out, cells.Fit(line, m.width))
		}
		return strings.Join(out, "\n")
	}
	for i := m.offset; i < m.offset+m.height; i++ {
		if i >= len(m.rows) {
			out = append(out, strings.Repeat(" ", m.width))
			continue
		}
		out = append(out, m.rowView(i))
	}
	return strings.Join(out, "\n")
}

// rowView draws row i: a header, or a hit's line number and text with
// its matches marked; the cursor's row selected.
func (m Model) rowView(i int) string {
	r := m.rows[i]
	if r.hit < 0 {
		text, _ := cells.Cut(r.header, m.width)
		return cells.Fit(m.Styles.Header.Render(text), m.width)
	}
	h := m.hits[r.hit]
	prefix := fmt.Sprintf("  %6d  ", h.Line+1)
	if i == m.cursor {
		prefix = "› " + prefix[2:]
	}
	room := max(m.width-cells.Width(prefix), 0)
	text := termtext.OneLine(h.Text, 0)
	// show the match: start a little before it when it is past the room
	if sp, ok := m.match.Index(text); ok && cells.Width(text[:sp.Start]) > room/2 {
		if cut := cells.Width(text[:sp.Start]) - room/4; cut > 0 {
			text = ansi.TruncateLeft(text, cut+1, "…")
		}
	}
	text, _ = cells.Cut(text, room)
	line := prefix + m.marked(text)
	if i == m.cursor {
		return cells.Fit(m.Styles.Selected.Render(cells.Strip(line)), m.width)
	}
	return cells.Fit(line, m.width)
}

// marked draws plain text with the query's matches marked.
func (m Model) marked(text string) string {
	spans := m.match.Spans(text)
	if len(spans) == 0 {
		return text
	}
	mark := func(s string) string { return m.Styles.Match.Render(s) }
	if m.Styles.NoColor {
		mark = m.Styles.MatchMark.Render
	}
	return cells.Mark(text, spans, mark)
}

// count is "1 hit", "2 hits".
func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
