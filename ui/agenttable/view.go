package agenttable

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/internal/cells"
)

// Column widths, in cells.
const (
	markW   = 2 // "› "
	subsW   = 2
	timeW   = 6
	minMsgW = 6
	minStW  = 11 // "✓ completed"
	maxStW  = 24
)

// StatusText returns the status cell of r: a symbol and a word, with the
// reason for errored; frame picks the spinner frame of a running agent.
// A row whose log file or journal could not be written ends with
// " ✗ no log" (the message line and help say which and where).
func StatusText(r Row, frame int) string {
	s := ""
	switch {
	case r.Stopping:
		s = SymStopping + " stopping"
	case r.Status == proto.StatusRunning:
		s = Frames[frame%len(Frames)] + " running"
	case r.Status == proto.StatusErrored && r.Reason != "":
		s = SymErrored + " errored (" + r.Reason + ")"
	default:
		s = Symbol(r.Status) + " " + string(r.Status)
	}
	if r.Failing {
		s += " " + SymErrored + " no log"
	}
	return s
}

func (m Model) statusStyle(r Row) lipgloss.Style {
	switch {
	case r.Stopping:
		return m.Styles.Stopping
	case r.Status == proto.StatusRunning:
		return m.Styles.Running
	case r.Status == proto.StatusCompleted:
		return m.Styles.Completed
	case r.Status == proto.StatusErrored:
		return m.Styles.Errored
	}
	return m.Styles.Closed
}

// layout are the column widths for the current rows and width; 0 drops a
// column.
type layout struct{ status, subs, time, usage, msg int }

func (m Model) layout() layout {
	st := minStW
	for _, r := range m.rows {
		st = max(st, cells.Width(StatusText(r, 0)))
	}
	l := layout{status: min(st, maxStW), subs: subsW, time: timeW}
	for _, r := range m.rows {
		l.usage = max(l.usage, cells.Width(r.Usage))
	}
	if l.usage > 0 {
		l.usage = max(l.usage, len("USAGE"))
	}
	fixed := func() int {
		n := markW + termtext.ShortIDLen + 1 + l.status + 1
		for _, w := range []int{l.subs, l.time, l.usage} {
			if w > 0 {
				n += w + 1
			}
		}
		return n
	}
	// When the message gets too narrow, columns go in this order.
	for _, w := range []*int{&l.time, &l.usage, &l.subs} {
		if m.width-fixed() < minMsgW {
			*w = 0
		}
	}
	if rest := m.width - fixed(); rest < 0 {
		l.status = max(l.status+rest, 0)
	}
	l.msg = max(m.width-fixed(), 0)
	return l
}

// View returns exactly the table's height in rows of exactly its width: a
// header, then the rows around the selection.
func (m Model) View() string {
	if m.height <= 0 || m.width <= 0 {
		return ""
	}
	l := m.layout()
	lines := make([]string, 0, m.height)
	lines = append(lines, m.Styles.Header.Render(cells.Fit(m.join(l, "", "ID", "STATUS", "#", "TIME", "USAGE", "LAST MESSAGE"), m.width)))
	if len(m.rows) == 0 && m.height > 1 {
		lines = append(lines, m.Styles.Muted.Render(cells.Fit("  no agents yet: press n to spawn one", m.width)))
	}
	for i := m.offset; i < len(m.rows) && len(lines) < m.height; i++ {
		lines = append(lines, m.row(l, i))
	}
	blank := strings.Repeat(" ", m.width)
	for len(lines) < m.height {
		lines = append(lines, blank)
	}
	return strings.Join(lines, "\n")
}

// join lays out one row's cells as plain text.
func (m Model) join(l layout, mark, id, status, subs, elapsed, usage, msg string) string {
	var b strings.Builder
	b.WriteString(cells.Fit(mark, markW))
	b.WriteString(cells.Fit(id, termtext.ShortIDLen))
	b.WriteByte(' ')
	b.WriteString(cells.Fit(status, l.status))
	b.WriteByte(' ')
	if l.subs > 0 {
		b.WriteString(strings.Repeat(" ", max(l.subs-cells.Width(subs), 0)) + cells.Fit(subs, min(cells.Width(subs), l.subs)))
		b.WriteByte(' ')
	}
	if l.time > 0 {
		b.WriteString(cells.Fit(elapsed, l.time))
		b.WriteByte(' ')
	}
	if l.usage > 0 {
		b.WriteString(strings.Repeat(" ", max(l.usage-cells.Width(usage), 0)) + cells.Fit(usage, min(cells.Width(usage), l.usage)))
		b.WriteByte(' ')
	}
	b.WriteString(cells.Fit(msg, l.msg))
	return b.String()
}

func (m Model) row(l layout, i int) string {
	r := m.rows[i]
	st := StatusText(r, m.frame)
	subs := strconv.Itoa(r.Submissions)
	el := Elapsed(r.Elapsed)
	cell := m.Styles.Cell
	if r.Restored {
		el, cell = Age(r.Age), m.Styles.Muted
	}
	if i == m.cursor {
		return m.Styles.Selected.Render(cells.Fit(m.join(l, "›", termtext.ShortID(r.ID), st, subs, el, r.Usage, MessageText(r)), m.width))
	}
	// Style the status cell alone; the rest is plain text.
	var b strings.Builder
	b.WriteString(cells.Fit("", markW))
	b.WriteString(cell.Render(cells.Fit(termtext.ShortID(r.ID), termtext.ShortIDLen)))
	b.WriteByte(' ')
	b.WriteString(m.statusStyle(r).Render(cells.Fit(st, l.status)))
	rest := strings.TrimPrefix(m.join(l, "", "", "", subs, el, r.Usage, MessageText(r)), strings.Repeat(" ", markW+termtext.ShortIDLen+1+l.status))
	if r.NeedsYou != "" {
		// The mark stands out; the rest of the row is plain text.
		mark := SymNeedsYou + " needs you"
		if i := strings.Index(rest, mark); i >= 0 {
			b.WriteString(m.Styles.Cell.Render(rest[:i]) + m.Styles.NeedsYou.Render(mark))
			rest = rest[i+len(mark):]
		}
	}
	b.WriteString(cell.Render(rest))
	return cells.Fit(b.String(), m.width)
}
