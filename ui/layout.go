package ui

import "image"

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

// Bounds of the split (SPEC §7 "the split"): beside the log pane, the
// table takes the width its rows need (agenttable.Model.Need), leaving
// the log pane at least logShare of the width; the user may move the
// border anywhere that leaves each pane minPaneW cells (minPaneH rows
// stacked). splitStep is how far - and + move it.
const (
	logShare  = 33 // percent of the width
	minPaneW  = 24
	minPaneH  = 4
	splitStep = 4 // cells beside, a quarter of that in rows stacked
)

// pane names a pane of the dashboard: what has the focus (m zooms it,
// tab moves it) and what is zoomed.
type pane int

const (
	paneNone pane = iota
	paneTable
	paneLog
)

// split is where the user put the border between the panes (-, +, a
// drag): the table's outer width beside the log pane, its outer height
// above it; 0 where the user did not move it. Kept while the dashboard
// runs, clamped to each terminal size.
type split struct {
	tableW, tableH int
}

// layout are the sizes and places of every pane, computed once per
// resize, zoom, move of the split or change of the table's need.
type layout struct {
	tooSmall bool
	wide     bool // table beside the log pane, else stacked
	zoom     pane // the pane that takes the whole main area; paneNone: both show
	need     int  // the table's need the layout was made for
	mainH    int  // rows of the panes
	// The panes' outer sizes, border included (0 for a pane a zoom
	// hides), and their places on screen.
	tableW, tableH int
	logW, logH     int
	table, log     image.Rectangle
}

// computeLayout lays the dashboard out in a w×h terminal for a table
// that needs need inner cells, with the user's split and zoom.
func computeLayout(w, h, need int, sp split, zoom pane) layout {
	if w < MinWidth || h < MinHeight {
		return layout{tooSmall: true}
	}
	l := layout{mainH: h - barRows, wide: w >= wideWidth, zoom: zoom, need: need}
	switch {
	case zoom == paneTable:
		l.tableW, l.tableH = w, l.mainH
	case zoom == paneLog:
		l.logW, l.logH = w, l.mainH
	case l.wide:
		tw := min(max(need+2, minPaneW), w-w*logShare/100)
		if sp.tableW > 0 {
			tw = sp.tableW
		}
		l.tableW = min(max(tw, minPaneW), w-minPaneW)
		l.logW = w - l.tableW
		l.tableH, l.logH = l.mainH, l.mainH
	default:
		th := max(4, min(max(6, l.mainH*2/5), l.mainH-4))
		if sp.tableH > 0 {
			th = sp.tableH
		}
		l.tableH = min(max(th, minPaneH), l.mainH-minPaneH)
		l.logH = l.mainH - l.tableH
		l.tableW, l.logW = w, w
	}
	l.table = image.Rect(0, 0, l.tableW, l.tableH)
	switch {
	case l.logW == 0:
	case l.wide && zoom == paneNone:
		l.log = image.Rect(l.tableW, 0, w, l.logH)
	default:
		l.log = image.Rect(0, l.tableH, l.logW, l.tableH+l.logH)
	}
	return l
}

// resize lays the dashboard out for a w×h terminal (relayout).
func (m *Model) resize(w, h int) {
	m.width, m.height = max(w, 0), max(h, 0)
	m.relayout()
}

// relayout lays the dashboard out again and hands every widget its size:
// a pane a zoom hides gets none, so nothing is fetched for it.
func (m *Model) relayout() {
	m.lay = computeLayout(m.width, m.height, m.table.Need(), m.split, m.zoom)
	if m.lay.tooSmall {
		return
	}
	m.table.SetSize(max(m.lay.tableW-2, 0), max(m.lay.tableH-2, 0))
	if m.tiles.on { // the tiles hide the log pane: it fetches nothing
		m.log.SetSize(0, 0)
	} else {
		m.log.SetSize(max(m.lay.logW-2, 0), max(m.lay.logH-2, 0))
	}
	m.across.results.SetSize(max(m.lay.logW-2, 0), max(m.lay.logH-2, 0))
	m.input.SetWidth(m.width)
	if m.help.Width() != m.width {
		h := *m.help // the copies of the model share it
		h.SetWidth(m.width)
		m.help = &h
	}
	m.layoutTiles()
}

// needChanged lays the dashboard out again when the table's need changed
// (agents came or went, a fold, the filter): the split follows the
// table's content unless the user moved it.
func (m *Model) needChanged() {
	if !m.lay.tooSmall && m.width > 0 && m.table.Need() != m.lay.need {
		m.relayout()
	}
}

// moveSplit moves the border between the panes by d steps (- and +,
// SPEC §7): the table grows for d > 0. The split is then the user's,
// kept while the dashboard runs. A zoom ends first.
func (m *Model) moveSplit(d int) {
	if m.lay.tooSmall {
		return
	}
	m.zoom = paneNone
	if m.lay.wide {
		m.split.tableW = m.lay.tableW + d*splitStep
	} else {
		m.split.tableH = m.lay.tableH + d*max(splitStep/4, 1)
	}
	m.relayout()
	m.split.tableW, m.split.tableH = m.keptSplit()
}

// dragSplit puts the border between the panes at column x (beside) or
// row y (stacked), as a mouse drag does.
func (m *Model) dragSplit(x, y int) {
	if m.lay.tooSmall || m.zoom != paneNone {
		return
	}
	if m.lay.wide {
		m.split.tableW = x + 1 // the table's right border on the pointer
	} else {
		m.split.tableH = y + 1
	}
	m.relayout()
	m.split.tableW, m.split.tableH = m.keptSplit()
}

// keptSplit is the split as laid out: what the user asked, clamped.
func (m *Model) keptSplit() (int, int) {
	w, h := m.split.tableW, m.split.tableH
	if m.lay.wide {
		w = m.lay.tableW
	} else {
		h = m.lay.tableH
	}
	return w, h
}

// toggleZoom zooms the focused pane to the whole main area, or ends the
// zoom (m, SPEC §7).
func (m *Model) toggleZoom() {
	if m.zoom != paneNone {
		m.zoom = paneNone
	} else {
		m.zoom = m.focus
	}
	m.relayout()
}
