package ui

import (
	"image"

	tea "charm.land/bubbletea/v2"
)

// The mouse (SPEC §7): a click selects a row or an inner agent (on a
// folded row's count or a parent's tree glyphs it unfolds or folds), the
// wheel over the table moves the selection and over the log pane scrolls
// it (following stops, as with K), and a drag of the border between the
// panes moves the split. Nothing needs it: every act has its key. Mouse
// events reach the dashboard only in normal mode (focus first: the input,
// a question and the help have the keyboard) and never while the
// terminal is too small. Options.NoMouse turns reporting off (--mouse=
// false), which also leaves the terminal's own selection to a plain drag;
// with reporting on, most terminals select text with shift held.

// wheelLines is how many lines a wheel event scrolls the log pane.
const wheelLines = 3

// zoneKind is what a zone of the screen is, for the mouse.
type zoneKind int

const (
	zoneNone  zoneKind = iota
	zoneTable          // the table, its border and header included
	zoneLog            // the log pane (or what replaces it: the search across agents)
	zoneSplit          // the border between the panes: a drag moves it
)

// zone is a part of the screen a mouse event may hit: its kind and its
// rectangle (0-based cells, Max exclusive), inner its inside without the
// border.
type zone struct {
	kind        zoneKind
	rect, inner image.Rectangle
}

// zones lists the parts of the screen a mouse event may hit, the one
// that wins where they overlap first; laid out with the panes (layout),
// so hit-testing costs nothing per frame.
func (l layout) zones() []zone {
	if l.tooSmall {
		return nil
	}
	var zs []zone
	if l.zoom == paneNone && !l.table.Empty() && !l.log.Empty() {
		// the two border lines that meet between the panes
		split := image.Rect(l.table.Max.X-1, 0, l.table.Max.X+1, l.mainH)
		if !l.wide {
			split = image.Rect(0, l.table.Max.Y-1, l.table.Max.X, l.table.Max.Y+1)
		}
		zs = append(zs, zone{kind: zoneSplit, rect: split})
	}
	for _, p := range []struct {
		kind zoneKind
		r    image.Rectangle
	}{{zoneTable, l.table}, {zoneLog, l.log}} {
		if !p.r.Empty() {
			zs = append(zs, zone{kind: p.kind, rect: p.r, inner: p.r.Inset(1)})
		}
	}
	return zs
}

// hit returns the zone at cell (x, y), kind zoneNone for none.
func (l layout) hit(x, y int) zone {
	pt := image.Pt(x, y)
	for _, z := range l.zones() {
		if pt.In(z.rect) {
			return z
		}
	}
	return zone{}
}

// mouseOn reports whether the dashboard takes mouse events now.
func (m Model) mouseOn() bool {
	return !m.opts.NoMouse && !m.lay.tooSmall && m.mode == modeNormal
}

// onMouse handles a mouse event.
func (m *Model) onMouse(msg tea.MouseMsg) tea.Cmd {
	ev := msg.Mouse()
	_, release := msg.(tea.MouseReleaseMsg)
	if w, wheel := msg.(tea.MouseWheelMsg); wheel && m.mode == modeHelp && !m.opts.NoMouse {
		m.helpTop = max(m.helpTop+map[bool]int{true: -wheelLines, false: wheelLines}[w.Button == tea.MouseWheelUp], 0)
		return nil
	}
	if release || !m.mouseOn() {
		m.dragging = false
		return nil
	}
	if m.tilesOn() {
		m.tilesMouse(msg)
		return nil
	}
	switch msg.(type) {
	case tea.MouseMotionMsg:
		if m.dragging {
			m.dragSplit(ev.X, ev.Y)
			m.syncLog(false)
		}
		return nil
	case tea.MouseWheelMsg:
		return m.onWheel(ev)
	case tea.MouseClickMsg:
		if ev.Button == tea.MouseLeft {
			return m.onClick(ev)
		}
	}
	return nil
}

// onClick handles a click of the left button at ev.
func (m *Model) onClick(ev tea.Mouse) tea.Cmd {
	z := m.lay.hit(ev.X, ev.Y)
	switch z.kind {
	case zoneSplit:
		m.dragging = true
	case zoneTable:
		m.focus = paneTable
		row, fold, ok := m.table.RowAt(ev.X-z.inner.Min.X, ev.Y-z.inner.Min.Y)
		if !ok {
			return nil
		}
		if fold {
			m.table.ToggleFold(row)
			m.needChanged()
		} else {
			m.table.SelectRow(row)
		}
		m.syncLog(false)
	case zoneLog:
		m.focus = paneLog
	}
	return nil
}

// onWheel handles a turn of the wheel at ev: over the table it moves the
// selection, over the log pane it scrolls.
func (m *Model) onWheel(ev tea.Mouse) tea.Cmd {
	up := ev.Button == tea.MouseWheelUp
	if !up && ev.Button != tea.MouseWheelDown {
		return nil
	}
	switch m.lay.hit(ev.X, ev.Y).kind {
	case zoneTable:
		if up {
			m.table.MoveUp()
		} else {
			m.table.MoveDown()
		}
		m.syncLog(false)
	case zoneLog:
		if m.shown.agent == "" {
			return nil
		}
		if up {
			m.log.ScrollUp(wheelLines)
		} else {
			m.log.ScrollDown(wheelLines)
		}
	}
	return nil
}
