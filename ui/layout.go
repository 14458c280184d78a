package ui

// Minimum terminal size for the full layout; below it the dashboard shows
// a "terminal too small" message.
const (
	MinWidth  = 40
	MinHeight = 10
)

// wideWidth is the width from which the table sits beside the log pane.
const wideWidth = 110

// barRows are the rows under the panes: message line, status line, help.
const barRows = 3

// layout are the sizes of every pane, computed once per resize.
type layout struct {
	tooSmall       bool
	wide           bool // table beside the log pane, else stacked
	mainH          int  // rows of the panes
	tableW, tableH int  // outer size, border included
	logW, logH     int
}

// computeLayout lays the dashboard out in a w×h terminal.
func computeLayout(w, h int) layout {
	if w < MinWidth || h < MinHeight {
		return layout{tooSmall: true}
	}
	l := layout{mainH: h - barRows}
	if w >= wideWidth {
		l.wide = true
		l.tableW = min(max(w*9/20, 52), 76)
		l.logW = w - l.tableW
		l.tableH, l.logH = l.mainH, l.mainH
		return l
	}
	l.tableW, l.logW = w, w
	l.tableH = max(4, min(max(6, l.mainH*2/5), l.mainH-4))
	l.logH = l.mainH - l.tableH
	return l
}

// resize lays the dashboard out again and hands every widget its size.
func (m *Model) resize(w, h int) {
	m.width, m.height = max(w, 0), max(h, 0)
	m.lay = computeLayout(m.width, m.height)
	if m.lay.tooSmall {
		return
	}
	m.table.SetSize(m.lay.tableW-2, m.lay.tableH-2)
	m.log.SetSize(m.lay.logW-2, m.lay.logH-2)
	m.across.results.SetSize(m.lay.logW-2, m.lay.logH-2)
	m.input.SetWidth(m.width)
	if m.help.Width() != m.width {
		h := *m.help // the copies of the model share it
		h.SetWidth(m.width)
		m.help = &h
	}
}
