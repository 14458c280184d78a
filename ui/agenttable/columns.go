package agenttable

import (
	"slices"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/internal/cells"
)

// Column widths, in cells.
const (
	markW    = 2 // "› "
	subsW    = 2
	timeW    = 6
	minMsgW  = 6
	minStW   = 11 // "✓ completed"
	maxStW   = 24
	minNameW = termtext.ShortIDLen
	maxNameW = 40 // glyphs and name; a longer one is cut with "…"
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
)

// column is a column that a narrow table drops: a column stays while the
// message keeps at least keep cells; of the columns that would leave it
// fewer, the lowest priority drops first, until the message has what
// every column left asks. The AGENT column (tree glyphs, task name or
// short id), STATUS and the message never drop; AGENT then STATUS shrink
// last. Columns of later issues join this table (DESIGN.md keeps the
// list): a host column (priority 10, keep 30), the changes' ±N (60,
// 12). ACTIVITY, the output rate's sparkline (activity.go), drops first,
// once the message would keep fewer than 16 cells; a column dropped
// before one that then had to go anyway comes back if the room it left
// is enough. TIME stays while the message keeps
// 12 cells, # and USAGE while it keeps 6.
type column struct {
	key      colKey
	title    string
	priority int
	keep     int  // cells the message keeps before this column drops
	right    bool // right-aligned (numbers)
}

// columns are the columns that may drop, in the order they are drawn
// (after AGENT; ID before STATUS, the rest after it). ID beside a task
// name is the first to go: the name is a target as well (SPEC §14), and
// the log pane's title names the selected agent's id.
var columns = []column{
	{colID, "ID", 30, 24, false},
	{colSubs, "#", 70, minMsgW, true},
	{colTime, "TIME", 40, 12, false},
	{colUsage, "USAGE", 50, minMsgW, true},
	{colChanges, "±", 60, 12, true},
	{colActivity, "ACTIVITY", 20, 16, false},
}

// byPriority are the columns, the highest priority first.
var byPriority = func() []column {
	cs := slices.Clone(columns)
	slices.SortStableFunc(cs, func(a, b column) int { return b.priority - a.priority })
	return cs
}()

// fits reports whether the message keeps, beside fixed cells, what every
// column of l asks.
func (m Model) fits(l layout, fixed int) bool {
	for _, c := range columns {
		if l.width[c.key] > 0 && m.width-fixed < c.keep {
			return false
		}
	}
	return true
}

// layout are the widths of one frame's columns; 0 drops a column.
type layout struct {
	name, status, msg int
	width             [colActivity + 1]int // per colKey
	title             string               // of the AGENT column: "ID" for a flat table without names
	// exact is set when the cells take exactly the table's width: a row
	// need not be measured again.
	exact bool
}

// layout fits the columns of the rows drawn (rs, with their name cells)
// in the table's width: the widths follow what is on screen, so a frame
// costs the same with ten agents or ten thousand.
func (m Model) layout(rs []drawn) layout {
	l := layout{name: minNameW, status: minStW, title: "ID"}
	if m.order.named || m.order.nested {
		l.title = "AGENT"
	}
	usage, changed, spark := 0, 0, false
	for _, d := range rs {
		l.name = max(l.name, cells.Width(d.name))
		l.status = max(l.status, cells.Width(d.status))
		usage = max(usage, cells.Width(d.Usage))
		changed = max(changed, cells.Width(d.Changes))
		spark = spark || d.spark != ""
	}
	l.name, l.status = min(l.name, maxNameW), min(l.status, maxStW)
	if m.tree && m.order.named {
		l.width[colID] = termtext.ShortIDLen
	}
	l.width[colSubs], l.width[colTime] = subsW, timeW
	if usage > 0 {
		l.width[colUsage] = max(usage, len("USAGE"))
	}
	if changed > 0 {
		l.width[colChanges] = changed
	}
	if spark {
		l.width[colActivity] = max(proto.RateBuckets, len("ACTIVITY"))
	}
	fixed := func() int {
		n := markW + l.name + 1 + l.status + 1
		for _, w := range l.width {
			if w > 0 {
				n += w + 1
			}
		}
		return n
	}
	var dropped [colActivity + 1]int // the widths of the columns dropped
	for {
		drop, msg := -1, m.width-fixed()
		for i, c := range columns {
			if l.width[c.key] > 0 && msg < c.keep && (drop < 0 || c.priority < columns[drop].priority) {
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
	// highest priority first, when the message then keeps what it and
	// every column left ask (ACTIVITY dropped before ID, beside task
	// names, whose dropping made room for it).
	for _, c := range byPriority {
		if dropped[c.key] == 0 {
			continue
		}
		l.width[c.key] = dropped[c.key]
		if !m.fits(l, fixed()) {
			l.width[c.key] = 0
		}
	}
	if short := minMsgW - (m.width - fixed()); short > 0 {
		l.name -= min(short, l.name-minNameW)
	}
	if rest := m.width - fixed(); rest < 0 {
		l.status = max(l.status+rest, 0)
	}
	l.msg = max(m.width-fixed(), 0)
	l.exact = m.width-fixed() >= 0
	return l
}
