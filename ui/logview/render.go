package logview

import (
	"strings"

	"github.com/subdash/subdash/ui/internal/cells"
)

// Refresh renders the rows on screen again from what the pane holds; call
// it when the log changed. It costs time proportional to the pane's size,
// whatever the log's. Items the view needs that are not held yet are blank
// until their page arrives (Request, SetPage).
func (m *Model) Refresh() {
	m.rows = m.rows[:0]
	if !m.open || m.width <= 0 || m.height <= 0 {
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
}

// renderBottom shows the last rows of the log and records where they
// start. Until the newest items arrive it shows the end of the last tail
// page, which is at most a change behind.
func (m *Model) renderBottom() {
	end := m.heldEnd()
	if !m.heldTail && end < m.total {
		m.st.Top = Pos{m.total, 0} // the bottom is not held yet
		return
	}
	var chunks [][]string // newest first
	n := 0
	top := Pos{end, 0}
	for abs := end - 1; abs >= m.held.From && n < m.height; abs-- {
		it, _ := m.item(abs)
		r := m.rowsOf(abs, it)
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
// do not fill the pane and the pane holds the log's end, the view is
// aligned to the bottom, still paused.
func (m *Model) renderFrom() {
	if m.st.Top.Item < m.first {
		m.st.Top = Pos{m.first, 0}
	}
	var rows []string
	for abs := m.st.Top.Item; len(rows) < m.height; abs++ {
		it, ok := m.item(abs)
		if !ok {
			break
		}
		r := m.rowsOf(abs, it)
		if abs == m.st.Top.Item {
			if m.st.Top.Row >= len(r) {
				m.st.Top.Row = len(r) - 1
			}
			r = r[m.st.Top.Row:]
		}
		rows = append(rows, r...)
	}
	if len(rows) < m.height && m.total > 0 && m.fetched && m.heldEnd() >= m.total && m.move == 0 {
		if _, ok := m.item(m.st.Top.Item); ok {
			m.renderBottom()
			return
		}
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

// back returns the position n rows before p, stopping at the oldest item;
// rest is how many rows are still to go once the items before the held
// ones arrive.
func (m *Model) back(p Pos, n int) (_ Pos, rest int) {
	if m.st.Follow && p.Item >= m.total && m.total > 0 {
		p = Pos{m.total - 1, 0}
	}
	if n <= p.Row {
		p.Row -= n
		return p, 0
	}
	n -= p.Row
	p.Row = 0
	for n > 0 {
		prev := p.Item - 1
		if prev < m.first {
			return Pos{max(p.Item, m.first), 0}, 0
		}
		it, ok := m.item(prev)
		if !ok {
			return p, n
		}
		rc := len(m.rowsOf(prev, it))
		if n <= rc {
			return Pos{prev, rc - n}, 0
		}
		n -= rc
		p = Pos{prev, 0}
	}
	return p, 0
}

// forward returns the position n rows after p; past the end it returns the
// end. rest is how many rows are still to go once the items after the held
// ones arrive.
func (m *Model) forward(p Pos, n int) (_ Pos, rest int) {
	if p.Item < m.first {
		p = Pos{m.first, 0}
	}
	for n > 0 {
		if p.Item >= m.total {
			return Pos{m.total, 0}, 0
		}
		it, ok := m.item(p.Item)
		if !ok {
			return p, n
		}
		rc := len(m.rowsOf(p.Item, it))
		if n < rc-p.Row {
			return Pos{p.Item, p.Row + n}, 0
		}
		n -= rc - p.Row
		p = Pos{p.Item + 1, 0}
	}
	return p, 0
}

// rowsFrom counts the rows from p to the end of the log, stopping at
// limit; rows not held count as limit (more than the pane needs to know).
func (m *Model) rowsFrom(p Pos, limit int) int {
	if p.Item < m.first {
		p = Pos{m.first, 0}
	}
	n := -p.Row
	for abs := p.Item; abs < m.total; abs++ {
		it, ok := m.item(abs)
		if !ok {
			return limit
		}
		n += len(m.rowsOf(abs, it))
		if n >= limit {
			return n
		}
	}
	return max(n, 0)
}

// rowsOf renders item abs into rows of exactly the pane's width, for
// each frame anew: only the items on screen are rendered.
func (m *Model) rowsOf(abs int64, it Item) []string {
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
	return rows
}

// style applies NO_COLOR, search highlighting and the stderr style to one
// line.
func (m *Model) style(abs int64, line string, stderr bool) string {
	if m.Styles.NoColor {
		line = cells.Strip(line)
	}
	if m.search.match.Query() != "" {
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
