package output

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/subdash/subdash/supervisor/proto"
)

// lineOverhead is what a display line costs besides its text: the Line
// value in its scrollback's ring. A line costs len(Text)+lineOverhead
// bytes (its text lives in reused blocks: lineText).
const lineOverhead = int64(unsafe.Sizeof(proto.Line{}))

// MinRunningLines is how many of its newest display lines a running
// submission keeps whatever the budget (SPEC §5), so that every running
// agent stays readable.
const MinRunningLines = 500

// Memory is the display-line memory budget shared by every output of one
// host (--line-memory, SPEC §5): bytes held (text plus lineOverhead a
// line) against a limit. Scrollbacks count into it as they add and drop
// lines; when a feed leaves it over the limit, finished submissions give
// their lines back first, least recently used first (they are read back
// from the log file when viewed: Reload), then the feeding submission its
// oldest lines, down to its newest MinRunningLines. Besides the limit, at
// most maxResident finished submissions keep their lines (Keep). Its
// methods are safe for concurrent use; a nil *Memory is no budget.
type Memory struct {
	held  atomic.Int64
	limit int64 // bytes; 0 or less: no limit

	mu          sync.Mutex
	resident    []*Output // finished outputs holding lines, least recently used first
	maxResident int
}

// NewMemory returns a budget of limit bytes of display lines (0 or less:
// no limit) in which at most maxResident finished submissions keep their
// lines.
func NewMemory(limit int64, maxResident int) *Memory {
	return &Memory{limit: limit, maxResident: maxResident}
}

// Held returns the bytes of display lines held now, by every output.
func (m *Memory) Held() int64 { return m.held.Load() }

// Keep marks o, the output of a finished submission, as just used (it
// ended, or was read back), and releases the lines of the least recently
// used ones beyond maxResident.
func (m *Memory) Keep(o *Output) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropLocked(o)
	m.resident = append(m.resident, o)
	for len(m.resident) > m.maxResident {
		m.resident[0].evict()
		m.resident = m.resident[1:]
	}
}

// Forget gives back the lines of o, whose submission is gone (its agent
// was forgotten): they leave the budget, and o holds none.
func (m *Memory) Forget(o *Output) {
	m.mu.Lock()
	m.dropLocked(o)
	m.mu.Unlock()
	o.evict()
}

func (m *Memory) dropLocked(o *Output) {
	for i, r := range m.resident {
		if r == o {
			m.resident = append(m.resident[:i], m.resident[i+1:]...)
			return
		}
	}
}

// over reports whether more is held than the limit allows.
func (m *Memory) over() bool { return m != nil && m.limit > 0 && m.held.Load() > m.limit }

// add counts d bytes more (or fewer, when negative).
func (m *Memory) add(d int64) {
	if m != nil {
		m.held.Add(d)
	}
}

// reclaim brings the display lines back under the budget after o was fed:
// finished submissions' scrollbacks go first, then o's oldest lines down
// to MinRunningLines. Called without any lock held.
func (m *Memory) reclaim(o *Output) {
	m.mu.Lock()
	for m.over() && len(m.resident) > 0 {
		m.resident[0].evict()
		m.resident = m.resident[1:]
	}
	m.mu.Unlock()
	if m.over() {
		o.trimOldest(m, MinRunningLines)
	}
}

// lineCost is what l costs in the budget, in bytes.
func lineCost(l proto.Line) int64 { return int64(len(l.Text)) + lineOverhead }

// trimOldest drops o's oldest display lines while mem is over its limit
// and more than keep lines are held.
func (o *Output) trimOldest(mem *Memory, keep int) {
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
