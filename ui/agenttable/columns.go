package agenttable

import (
	"slices"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// Column widths, in cells. Every column but AGENT has one width whatever
// its rows hold: a long status, usage or change count is cut, never
// widens its column or pushes another out (SPEC §7).
const (
	markW    = 3  // the needs-you glyph, the cursor and a space: "◆› "
	statusW  = 11 // "✓ completed", the widest status
	minNameW = termtext.ShortIDLen
	maxNameW = 40 // glyphs and name; a longer one is cut with "…"
	// nameBudget is the AGENT width the columns are fitted beside: a
	// wider name is cut to leave NOW its MinNow cells rather than push a
	// column out (no row's content makes a column come or go).
	nameBudget = 14
	// MinNow is the fewest cells the NOW text keeps while a column that
	// may drop stays beside it (columns' keep): at the sizes people use,
	// 120 columns beside the log pane or 80 stacked, it keeps at least
	// this many.
	MinNow = 40
	// PrefNow is the width of NOW the table asks for beside the log pane
	// (Need): what its rows say now rarely takes more.
	PrefNow = 60
)

// colKey names a column that may drop.
type colKey int

const (
	colID colKey = iota
	colSubs
	colTime
	colUsage
	colChanges
	colActivity
	nCols
)

// column is a column that a narrow table drops. Which columns there are
// depends on the host and the table (the tree's names, usage reported, a
// work tree tracked, output rates), never on the rows on screen; which of
// them a frame draws depends on the width alone: a column stays while
// NOW keeps at least keep cells beside every column left; of the columns
// that would leave it fewer, the lowest priority drops first, and a
// column dropped before one that then had to go anyway comes back if the
// room it left is enough. AGENT, STATUS and NOW never drop; AGENT then
// STATUS shrink last, below the narrowest table that keeps them whole.
type column struct {
	key      colKey
	title    string
	width    int
	priority int
	keep     int  // cells NOW keeps before this column drops
	right    bool // right-aligned (numbers)
}

// columns are the columns that may drop, in the order they are drawn
// (after AGENT; ID before STATUS, the rest after it). ID beside a task
// name goes first: the name is a target as well (SPEC §14), and the log
// pane's title names the selected agent's id; ACTIVITY next. TIME stays
// longest: how long an agent has run is what tells a stuck one.
var columns = []column{
	{colID, "ID", termtext.ShortIDLen, 15, MinNow, false},
	{colSubs, "#", 3, 35, MinNow, true},
	{colTime, "TIME", 6, 60, MinNow, false},
	{colUsage, "USAGE", 11, 50, MinNow, true}, // "Σ $12.3456"
	{colChanges, "±", 9, 40, MinNow, true},
	{colActivity, "ACTIVITY", proto.RateBuckets, 20, MinNow, false},
}

// byPriority are the columns, the highest priority first.
var byPriority = func() []column {
	cs := slices.Clone(columns)
	slices.SortStableFunc(cs, func(a, b column) int { return b.priority - a.priority })
	return cs
}()

// layout are the widths of one frame's columns; 0 drops a column.
type layout struct {
	name, status, now int
	width             [nCols]int // per colKey
	title             string     // of the AGENT column: "ID" for a flat table without names
	// exact is set when the cells take exactly the table's width: a row
	// need not be measured again.
	exact bool
}

// present returns the widths of the columns the table has, before any
// drops: those the host and the table's agents call for.
func (m Model) present() [nCols]int {
	var w [nCols]int
	for _, c := range columns {
		on := true
		switch c.key {
		case colID:
			on = m.tree && m.order.named
		case colUsage:
			on = m.order.usage
		case colChanges:
			on = m.order.changes
		case colActivity:
			on = m.activity
		}
		if on {
			w[c.key] = c.width
		}
	}
	return w
}

// nameWidth is the AGENT column's width: the widest name cell of the
// table's rows (tree glyphs, name, a fold's count), within its bounds.
func (m Model) nameWidth() int { return min(max(m.order.nameW, minNameW), maxNameW) }

// Need returns the inner width, in cells, the table asks for beside the
// log pane (SPEC §7 "the split"): its widest name, every column it has
// and PrefNow cells of NOW. It changes when agents come or go, a fold or
// the filter changes: never per frame. Cost: O(1).
func (m Model) Need() int {
	n := markW + m.nameWidth() + 1 + statusW + 1 + PrefNow
	for _, w := range m.present() {
		if w > 0 {
			n += w + 1
		}
	}
	return n
}

// fixed returns the cells l takes besides NOW.
func fixed(l layout) int {
	n := markW + l.name + 1 + l.status + 1
	for _, w := range l.width {
		if w > 0 {
			n += w + 1
		}
	}
	return n
}

// fits reports whether NOW keeps, beside the columns of l, what every
// one of them asks. ID, beside task names, asks it beside the widest
// name whole: a name is not cut to show an id the log pane's title says.
func (m Model) fits(l layout) bool {
	for _, c := range columns {
		if l.width[c.key] == 0 {
			continue
		}
		if c.key == colID {
			whole := l
			whole.name = m.nameWidth()
			if m.width-fixed(whole) < c.keep {
				return false
			}
		}
		if m.width-fixed(l) < c.keep {
			return false
		}
	}
	return true
}

// layout fits the table's columns in its width. It depends on the width,
// the host's features and what the table's agents have, never on the rows
// on screen: a frame costs the same with ten agents or ten thousand, and
// no row's content makes a column come or go (the columns are fitted
// beside a name of nameBudget cells; the names then take what NOW leaves).
func (m Model) layout() layout {
	l := layout{name: min(m.nameWidth(), nameBudget), status: statusW, title: "ID", width: m.present()}
	if m.order.named || m.order.nested {
		l.title = "AGENT"
	}
	var dropped [nCols]int // the widths of the columns dropped
	for !m.fits(l) {
		drop := -1
		for i, c := range columns {
			if l.width[c.key] > 0 && (drop < 0 || c.priority < columns[drop].priority) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		k := columns[drop].key
		dropped[k], l.width[k] = l.width[k], 0
	}
	// A column dropped before one that had to go anyway comes back, the
	// highest priority first, when NOW then keeps what it and every
	// column left ask.
	for _, c := range byPriority {
		if dropped[c.key] == 0 {
			continue
		}
		l.width[c.key] = dropped[c.key]
		if !m.fits(l) {
			l.width[c.key] = 0
		}
	}
	// The names take what NOW leaves beyond MinNow, up to the widest.
	if room := m.width - fixed(l) - MinNow; room > 0 {
		l.name += min(room, m.nameWidth()-l.name)
	}
	// Narrower than AGENT, STATUS and a few cells of NOW: the name, then
	// the status, give way.
	const minNow = 6
	if short := minNow - (m.width - fixed(l)); short > 0 {
		l.name -= min(short, max(l.name-minNameW, 0))
	}
	if rest := m.width - fixed(l); rest < 0 {
		l.status = max(l.status+rest, 0)
	}
	l.now = max(m.width-fixed(l), 0)
	l.exact = m.width-fixed(l) >= 0
	return l
}
