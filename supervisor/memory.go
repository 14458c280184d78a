package supervisor

import (
	"sync/atomic"
	"unsafe"

	"github.com/subdash/subdash/supervisor/proto"
)

// DefaultLineMemory is the default of --line-memory: bytes of display
// lines held in memory by all submissions together (SPEC §5). With the
// default --scrollback it lets 8 agents keep every line of their current
// submission while finished ones give theirs back.
const DefaultLineMemory = 24 << 20

// lineOverhead is what a display line costs besides its text: the Line
// value in its scrollback's ring. A line costs len(Text)+lineOverhead
// bytes (its text lives in a shared slab; see output.intern).
const lineOverhead = int64(unsafe.Sizeof(proto.Line{}))

// minRunningLines is how many of its newest lines a running submission
// keeps whatever the budget, so every running agent stays readable.
const minRunningLines = 500

// lineMemory is the display-line memory budget shared by every scrollback
// of one supervisor: bytes held (text plus lineOverhead a line) against a
// limit. Scrollbacks count into it as they add and drop lines; when a feed
// leaves it over the limit, finished submissions give their lines back
// first (least recently used first; they are read back from the log file
// when viewed), then the feeding submission its oldest lines.
type lineMemory struct {
	held  atomic.Int64
	limit int64
}

// over reports whether more is held than the limit allows.
func (m *lineMemory) over() bool { return m != nil && m.limit > 0 && m.held.Load() > m.limit }

// add counts d bytes more (or fewer, when negative).
func (m *lineMemory) add(d int64) {
	if m != nil {
		m.held.Add(d)
	}
}

// lineCost is what l costs in the budget, in bytes.
func lineCost(l proto.Line) int64 { return int64(len(l.Text)) + lineOverhead }

// reclaimLines brings the display lines back under the budget after o was
// fed: finished submissions' scrollbacks go first, then o's oldest lines
// down to minRunningLines. Called without any lock held.
func (s *Supervisor) reclaimLines(o *output) {
	s.mu.Lock()
	for s.lineMem.over() && len(s.resident) > 0 {
		s.resident[0].evict()
		s.resident = s.resident[1:]
	}
	s.mu.Unlock()
	if s.lineMem.over() {
		o.trimOldest(s.lineMem, minRunningLines)
	}
}

// trimOldest drops o's oldest display lines while mem is over its limit
// and more than keep lines are held.
func (o *output) trimOldest(mem *lineMemory, keep int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sb == nil {
		return
	}
	for o.sb.n > keep && mem.held.Load()+o.sb.delta > mem.limit {
		o.sb.dropOldest()
	}
	o.sb.settle()
}
