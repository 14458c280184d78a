package logview

import (
	"strings"

	"github.com/subdash/subdash/ui/internal/cells"
)

// fetch asks the source for n items from abs and records the log's bounds.
func (m *Model) fetch(from int64, n int) Page {
	pg, err := m.src.Page(from, n)
	m.err = err
	if err != nil {
		return Page{First: m.first, Total: m.total}
	}
	m.evicted = pg.Evicted
	m.first, m.total = pg.First, pg.Total
	return pg
}

// tail fetches the last n items and returns them with the absolute number
// of the first.
func (m *Model) tail(n int) (Page, int64) {
	pg := m.fetch(0, 0)
	from := max(pg.First, pg.Total-int64(n))
	pg = m.fetch(from, n)
	return pg, max(from, pg.First)
}

// Refresh fetches the items on screen and renders them again; call it when
// the log changed. It costs time proportional to the pane's size, whatever
// the log's.
func (m *Model) Refresh() {
	m.rows = m.rows[:0]
	if m.src == nil || m.width <= 0 || m.height <= 0 {
		m.pad()
		return
	}
	if m.st.Follow {
		m.renderBottom()
	} else {
		m.renderFrom()
	}
	m.pad()
	m.search.prune(m.first)
	m.trimCache()
}

// renderBottom shows the last rows of the log and records where they start.
func (m *Model) renderBottom() {
	pg, start := m.tail(m.height)
	var chunks [][]string // newest first
	n := 0
	top := Pos{pg.Total, 0}
	for i := len(pg.Items) - 1; i >= 0 && n < m.height; i-- {
		abs := start + int64(i)
		r := m.rowsOf(abs, pg.Items[i])
		skip := max(len(r)-(m.height-n), 0)
		chunks = append(chunks, r[skip:])
		n += len(r) - skip
		top = Pos{abs, skip}
	}
	m.st.Top = top
	for i := len(chunks) - 1; i >= 0; i-- {
		m.rows = append(m.rows, chunks[i]...)
	}
}

// renderFrom shows the log from the paused top row. When the rows after it
// do not fill the pane, the view is aligned to the bottom, still paused.
func (m *Model) renderFrom() {
	if m.st.Top.Item < m.first {
		m.st.Top = Pos{m.first, 0}
	}
	pg := m.fetch(m.st.Top.Item, m.height)
	if m.st.Top.Item < pg.First { // trimmed since: keep to the oldest held
		m.st.Top = Pos{pg.First, 0}
		pg = m.fetch(m.st.Top.Item, m.height)
	}
	var rows []string
	for i, it := range pg.Items {
		r := m.rowsOf(m.st.Top.Item+int64(i), it)
		if i == 0 {
			if m.st.Top.Row >= len(r) {
				m.st.Top.Row = len(r) - 1
			}
			r = r[m.st.Top.Row:]
		}
		rows = append(rows, r...)
		if len(rows) >= m.height {
			break
		}
	}
	if len(rows) < m.height && m.total > 0 {
		m.renderBottom()
		return
	}
	m.rows = append(m.rows, rows[:min(len(rows), m.height)]...)
}

// pad fills the pane with blank rows.
func (m *Model) pad() {
	blank := strings.Repeat(" ", m.width)
	for len(m.rows) < m.height {
		m.rows = append(m.rows, blank)
	}
}

// back returns the position n rows before p, stopping at the oldest item.
func (m *Model) back(p Pos, n int) Pos {
	if m.st.Follow && p.Item >= m.total && m.total > 0 {
		p = Pos{m.total - 1, 0}
	}
	if n <= p.Row {
		p.Row -= n
		return p
	}
	n -= p.Row
	p.Row = 0
	from := max(m.first, p.Item-int64(n))
	if from >= p.Item {
		return Pos{max(p.Item, m.first), 0}
	}
	pg := m.fetch(from, int(p.Item-from))
	start := max(from, pg.First)
	for i := len(pg.Items) - 1; i >= 0; i-- {
		rc := len(m.rowsOf(start+int64(i), pg.Items[i]))
		if n <= rc {
			return Pos{start + int64(i), rc - n}
		}
		n -= rc
	}
	return Pos{max(start, pg.First), 0}
}

// forward returns the position n rows after p; past the end it returns the
// end.
func (m *Model) forward(p Pos, n int) Pos {
	pg := m.fetch(p.Item, n+1)
	if p.Item < pg.First {
		p = Pos{pg.First, 0}
		pg = m.fetch(p.Item, n+1)
	}
	row := p.Row
	for i, it := range pg.Items {
		rc := len(m.rowsOf(p.Item+int64(i), it))
		if n < rc-row {
			return Pos{p.Item + int64(i), row + n}
		}
		n -= rc - row
		row = 0
	}
	return Pos{p.Item + int64(len(pg.Items)), 0}
}

// rowsFrom counts the rows from p to the end of the log, stopping at limit.
func (m *Model) rowsFrom(p Pos, limit int) int {
	pg := m.fetch(p.Item, limit)
	if p.Item < pg.First {
		p = Pos{pg.First, 0}
		pg = m.fetch(p.Item, limit)
	}
	n := -p.Row
	for i, it := range pg.Items {
		n += len(m.rowsOf(p.Item+int64(i), it))
		if n >= limit {
			return n
		}
	}
	return max(n, 0)
}

// rowsOf renders item abs into rows of exactly the pane's width, from the
// cache when its text is unchanged.
func (m *Model) rowsOf(abs int64, it Item) []string {
	if c, ok := m.cache[abs]; ok && c.text == it.Text {
		return c.rows
	}
	var rows []string
	for _, line := range strings.Split(it.Text, "\n") {
		line = m.style(abs, line, it.Stderr)
		if m.wrap {
			wr, _ := cells.Wrap(line, m.width, 0)
			for _, r := range wr {
				rows = append(rows, padRow(r.Text, r.Width, m.width))
			}
			continue
		}
		s, w := cells.Cut(line, m.width)
		rows = append(rows, padRow(s, w, m.width))
	}
	m.cache[abs] = cached{text: it.Text, rows: rows}
	return rows
}

// style applies NO_COLOR, search highlighting and the stderr style to one
// line.
func (m *Model) style(abs int64, line string, stderr bool) string {
	if m.Styles.NoColor {
		line = cells.Strip(line)
	}
	if m.search.query != "" {
		if hl, ok := m.highlight(abs, line); ok {
			return hl
		}
	}
	if stderr && !m.Styles.NoColor && strings.IndexByte(line, 0x1b) < 0 && line != "" {
		return m.Styles.Stderr.Render(line)
	}
	return line
}

func padRow(s string, w, width int) string {
	if w >= width {
		return s
	}
	return s + strings.Repeat(" ", width-w)
}

// trimCache forgets rendered items far from the screen.
func (m *Model) trimCache() {
	if len(m.cache) <= 4*m.height+64 {
		return
	}
	lo := m.st.Top.Item - int64(2*m.height)
	hi := m.st.Top.Item + int64(3*m.height)
	for k := range m.cache {
		if k < lo || k > hi {
			delete(m.cache, k)
		}
	}
}
