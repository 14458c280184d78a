package agenttable

import (
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/internal/cells"
)

// StatusText returns the status cell of r: a symbol and a word, one of
// five, at most statusW cells: why an errored one ended, and a log file
// that could not be written, are NOW's (MessageText); frame picks the
// spinner frame of a running agent.
func StatusText(r Row, frame int) string {
	switch {
	case r.Stopping:
		return SymStopping + " stopping"
	case r.Status == proto.StatusRunning:
		return Frames[frame%len(Frames)] + " running"
	}
	return Symbol(r.Status) + " " + string(r.Status)
}

func (m Model) statusInk(r Row) theme.Ink {
	switch {
	case r.Stopping:
		return m.inks.Stopping
	case r.Status == proto.StatusRunning:
		return m.inks.Running
	case r.Status == proto.StatusCompleted:
		return m.inks.Completed
	case r.Status == proto.StatusErrored:
		return m.inks.Errored
	}
	return m.inks.Closed
}

// inks are the table's Styles as inks, made by New and SetStyles.
type inks struct {
	Header, Cell, Muted, Selected, Tree           theme.Ink
	Running, Completed, Errored, Closed, Stopping theme.Ink
	NeedsYou                                      theme.Ink
}

func inksOf(s Styles) inks {
	return inks{
		Header: theme.InkOf(s.Header), Cell: theme.InkOf(s.Cell), Muted: theme.InkOf(s.Muted), Selected: theme.InkOf(s.Selected), Tree: theme.InkOf(s.Tree),
		Running: theme.InkOf(s.Running), Completed: theme.InkOf(s.Completed), Errored: theme.InkOf(s.Errored), Closed: theme.InkOf(s.Closed),
		Stopping: theme.InkOf(s.Stopping), NeedsYou: theme.InkOf(s.NeedsYou),
	}
}

// drawn is one row as a frame draws it.
type drawn struct {
	Row
	glyphs  string // the tree's: "│  ├─ "
	name    string // the name or short id, without the glyphs
	fold    string // what a fold hides: " +3" (foldCount), "" when not folded
	status  string
	now     string // the NOW cell: marks and text (MessageText)
	spark   string // the ACTIVITY cell (activity.go), "" for none
	context bool   // an ancestor shown for a filter's match: muted
	cursor  bool
	// host marks a host's row (hosts.go); hostLost a host's row, or an
	// agent's, of a host that is lost.
	host, hostLost bool
}

// glyphs returns the tree's glyphs before an agent at depth d whose
// ancestors' "last sibling" bits are last.
func glyphs(d int32, last uint64) string {
	if d == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(int(d) * 7)
	for k := int32(1); k < d; k++ {
		if k < 64 && last&(1<<k) != 0 {
			b.WriteString("   ")
		} else {
			b.WriteString("│  ")
		}
	}
	if d < 64 && last&(1<<d) != 0 {
		b.WriteString("└─ ")
	} else {
		b.WriteString("├─ ")
	}
	return b.String()
}

// drawRow makes what row i shows: its agent's Row (RowOf, built here for
// the rows on screen only) and the tree's cells.
func (m Model) drawRow(i int) drawn {
	r := m.order.rows[i]
	if r.inner > 0 {
		return m.drawInner(i, r)
	}
	if r.host > 0 {
		return m.drawHost(i, r)
	}
	a := &m.agents[r.agent]
	now := m.now
	lostAt, lost := m.lost(a)
	if lost && !lostAt.IsZero() {
		now = lostAt // as last seen
	}
	d := drawn{Row: RowOf(*a, now, m.stopping[a.AgentID]), context: r.context, cursor: i == m.cursor}
	d.glyphs = glyphs(r.depth, r.last)
	if !m.tree {
		d.Name = "" // a host without the tree names no agent: today's table
	}
	d.name = name(d.Name, a.AgentID)
	d.fold = foldCount(r.hidden)
	d.status = StatusText(d.Row, m.frame)
	d.now = MessageText(d.Row)
	if m.activity {
		d.spark = Spark(a, m.now)
	}
	switch {
	case r.hidden > 0:
		d.now = MessageText(Row{Queued: d.Queued, QueuedN: d.QueuedN, Message: r.below.String() + " · " + d.Message})
	case r.context && r.matches == 1:
		d.now = "1 match below"
	case r.context:
		d.now = strconv.Itoa(int(r.matches)) + " matches below"
	}
	if lost {
		d.hostLost = true
		d.now = SymErrored + " host lost · " + d.now
		if d.Status == proto.StatusRunning && !d.Stopping {
			d.status = SymRunning + " running" // no spinner: nothing is seen turning
		}
	}
	return d
}

// nameCell fits d's name cell in w cells: the glyphs, the name (cut with
// "…" when too long) and what a fold hides, which is never cut.
func (d drawn) nameCell(w int) string {
	if d.fold == "" {
		return cells.Fit(d.glyphs+d.name, w)
	}
	room := w - cells.Width(d.glyphs) - len(d.fold)
	if room < 1 {
		return cells.Fit(d.glyphs+d.name+d.fold, w)
	}
	n, _ := cells.Cut(d.name, room)
	return cells.Fit(d.glyphs+n+d.fold, w)
}

// View returns exactly the table's height in rows of exactly its width: a
// header, then the rows around the selection.
func (m Model) View() string {
	if m.height <= 0 || m.width <= 0 {
		return ""
	}
	first, end := m.Shown()
	rs := make([]drawn, 0, end-first)
	sums := m.subtreeUsage()
	for i := first; i < end; i++ {
		d := m.drawRow(i)
		if r := m.order.rows[i]; r.inner == 0 && r.host == 0 {
			m.rollUp(&d, m.order.rows[i].agent, sums)
		}
		rs = append(rs, d)
	}
	l := m.layout()
	lines := make([]string, 0, m.height)
	head := drawn{Row: Row{Usage: "USAGE", Changes: "±"}, name: l.title, status: "STATUS", now: "NOW", spark: "ACTIVITY"}
	lines = append(lines, m.inks.Header.On(cells.Fit(m.join(l, head, "ID", "#", "TIME"), m.width)))
	if len(m.order.rows) == 0 && m.height > 1 {
		text := "   no agents yet: " + m.EmptyHint
		if len(m.agents) > 0 {
			text = "   no agent matches the filter"
		}
		lines = append(lines, m.inks.Muted.On(cells.Fit(text, m.width)))
	}
	for _, d := range rs {
		lines = append(lines, m.row(l, d))
	}
	blank := strings.Repeat(" ", m.width)
	for len(lines) < m.height {
		lines = append(lines, blank)
	}
	return strings.Join(lines, "\n")
}

// mark is the first markW cells of d's row: the needs-you glyph, the
// cursor and a space.
func mark(d drawn) string {
	switch {
	case d.cursor && d.NeedsYou != "":
		return SymNeedsYou + "› "
	case d.cursor:
		return " › "
	case d.NeedsYou != "":
		return SymNeedsYou + "  "
	}
	return "   "
}

// join lays out one row's cells as plain text; id, subs and elapsed are
// the ID, # and TIME cells.
func (m Model) join(l layout, d drawn, id, subs, elapsed string) string {
	var b strings.Builder
	b.Grow(m.width + 16)
	b.WriteString(mark(d))
	b.WriteString(d.nameCell(l.name))
	b.WriteByte(' ')
	m.middle(&b, l, d, id, subs, elapsed, true)
	b.WriteString(cells.Fit(d.now, l.now))
	return b.String()
}

// middle writes the cells between the name and NOW: ID, STATUS (with
// status), #, TIME, USAGE, ± and ACTIVITY, each followed by a space;
// without status the STATUS cell is left out.
func (m Model) middle(b *strings.Builder, l layout, d drawn, id, subs, elapsed string, status bool) {
	cell := func(c column, s string) {
		w := l.width[c.key]
		if w == 0 {
			return
		}
		if c.right {
			b.WriteString(strings.Repeat(" ", max(w-cells.Width(s), 0)) + cells.Fit(s, min(cells.Width(s), w)))
		} else {
			b.WriteString(cells.Fit(s, w))
		}
		b.WriteByte(' ')
	}
	cell(columns[0], id)
	if status {
		b.WriteString(cells.Fit(d.status, l.status))
		b.WriteByte(' ')
	}
	for _, c := range columns[1:] {
		switch c.key {
		case colSubs:
			cell(c, subs)
		case colTime:
			cell(c, elapsed)
		case colUsage:
			cell(c, d.Usage)
		case colChanges:
			cell(c, d.Changes)
		case colActivity:
			cell(c, d.spark)
		}
	}
}

func (m Model) row(l layout, d drawn) string {
	if d.host {
		return m.hostRow(l, d)
	}
	subs := strconv.Itoa(d.Submissions)
	el := Elapsed(d.Elapsed)
	cell := m.inks.Cell
	if d.Restored || d.context || d.Inner || d.hostLost {
		cell = m.inks.Muted
	}
	if d.Inner {
		subs = ""
	}
	if d.Restored {
		el = Age(d.Age)
	}
	id := termtext.ShortID(d.ID)
	if d.Name == "" {
		id = "" // the AGENT column shows it
	}
	if d.cursor {
		return m.inks.Selected.On(m.fit(l, m.join(l, d, id, subs, el)))
	}
	// Style the needs-you glyph, the tree's glyphs, the name and the
	// status cell; the rest is plain text.
	var b strings.Builder
	if d.NeedsYou != "" {
		b.WriteString(m.inks.NeedsYou.On(SymNeedsYou) + "  ")
	} else {
		b.WriteString("   ")
	}
	name := d.nameCell(l.name)
	if g := len(d.glyphs); g > 0 && strings.HasPrefix(name, d.glyphs) {
		b.WriteString(m.inks.Tree.On(d.glyphs))
		name = name[g:]
	}
	b.WriteString(cell.On(name))
	b.WriteByte(' ')
	if l.width[colID] > 0 {
		b.WriteString(m.inks.Muted.On(cells.Fit(id, l.width[colID])))
		b.WriteByte(' ')
	}
	st := m.statusInk(d.Row)
	if d.context || d.Inner || d.hostLost {
		st = m.inks.Muted
	}
	b.WriteString(st.On(cells.Fit(d.status, l.status)))
	b.WriteByte(' ')
	var rest strings.Builder
	l.width[colID] = 0
	m.middle(&rest, l, d, "", subs, el, false)
	rest.WriteString(cells.Fit(d.now, l.now))
	b.WriteString(cell.On(rest.String()))
	return m.fit(l, b.String())
}

// fit returns row, whose cells were each fitted to l, at the table's
// width: as it is when l's cells take that width exactly.
func (m Model) fit(l layout, row string) string {
	if l.exact {
		return row
	}
	return cells.Fit(row, m.width)
}
