package output

import "github.com/subdash/subdash/supervisor/proto"

// scrollback is a bounded ring of display lines addressed by absolute line
// numbers: the first line a submission printed is 0, and numbers never
// change when old lines are trimmed. Not safe for concurrent use.
type scrollback struct {
	ring     []proto.Line
	start    int   // ring index of the oldest held line
	n        int   // lines held
	first    int64 // absolute number of the oldest held line
	bytes    int   // text bytes held
	maxLines int
	maxBytes int
	mem      *Memory // the shared budget this scrollback counts into; nil: none
	delta    int64   // bytes added (or dropped) since the last settle
}

// attach makes b count into mem from now on, with what it holds.
func (b *scrollback) attach(mem *Memory) {
	b.mem, b.delta = mem, 0
	mem.add(int64(b.bytes) + int64(b.n)*lineOverhead)
}

// detach stops b counting into its budget and gives back what it holds.
func (b *scrollback) detach() {
	b.settle()
	b.mem.add(-(int64(b.bytes) + int64(b.n)*lineOverhead))
	b.mem = nil
}

// settle counts the changes since the last settle into the budget: one
// atomic add per feed, not per line.
func (b *scrollback) settle() {
	if b.delta != 0 {
		b.mem.add(b.delta)
		b.delta = 0
	}
}

// firstRing is the number of slots a scrollback starts with.
const firstRing = 16

func newScrollback(maxLines, maxBytes int) *scrollback {
	if maxLines < 1 {
		maxLines = 1
	}
	// The ring grows by doubling from firstRing slots, so that a
	// submission holds slots for about the lines it printed (a thousand
	// quiet agents would hold megabytes of empty slots).
	initial := min(maxLines, firstRing)
	return &scrollback{ring: make([]proto.Line, initial), maxLines: maxLines, maxBytes: maxBytes}
}

// total returns the absolute number one past the newest line.
func (b *scrollback) total() int64 { return b.first + int64(b.n) }

func (b *scrollback) slot(abs int64) int {
	return (b.start + int(abs-b.first)) % len(b.ring)
}

// add appends l, trimming the oldest lines beyond the caps, and returns its
// absolute number.
func (b *scrollback) add(l proto.Line) int64 {
	if b.n == len(b.ring) && len(b.ring) < b.maxLines {
		b.grow()
	}
	if b.n == len(b.ring) {
		b.dropOldest()
	}
	b.ring[(b.start+b.n)%len(b.ring)] = l
	b.n++
	b.bytes += len(l.Text)
	b.delta += lineCost(l)
	for b.bytes > b.maxBytes && b.n > 1 {
		b.dropOldest()
	}
	return b.total() - 1
}

// addAll appends lines in order, as add would one by one.
func (b *scrollback) addAll(lines []proto.Line) {
	if len(lines) >= b.maxLines {
		// all held lines and the oldest of these would be trimmed at once
		k := len(lines) - b.maxLines
		b.skip(k)
		lines = lines[k:]
	}
	for b.n+len(lines) > len(b.ring) && len(b.ring) < b.maxLines {
		b.grow()
	}
	if over := b.n + len(lines) - len(b.ring); over > 0 {
		b.dropOldestN(over)
	}
	for len(lines) > 0 {
		end := (b.start + b.n) % len(b.ring)
		n := copy(b.ring[end:min(len(b.ring), end+len(lines))], lines)
		for _, l := range lines[:n] {
			b.bytes += len(l.Text)
			b.delta += lineCost(l)
		}
		b.n += n
		lines = lines[n:]
	}
	for b.bytes > b.maxBytes && b.n > 1 {
		b.dropOldest()
	}
}

func (b *scrollback) grow() {
	size := len(b.ring) * 2
	if size > b.maxLines {
		size = b.maxLines
	}
	ring := make([]proto.Line, size)
	for i := 0; i < b.n; i++ {
		ring[i] = b.ring[(b.start+i)%len(b.ring)]
	}
	b.ring, b.start = ring, 0
}

func (b *scrollback) dropOldest() {
	old := &b.ring[b.start]
	b.bytes -= len(old.Text)
	b.delta -= lineCost(*old)
	*old = proto.Line{}
	b.start = (b.start + 1) % len(b.ring)
	b.n--
	b.first++
}

// dropOldestN drops the k oldest lines (k ≤ n), as k calls of dropOldest.
func (b *scrollback) dropOldestN(k int) {
	for k > 0 {
		seg := b.ring[b.start:min(len(b.ring), b.start+k)]
		for _, l := range seg {
			b.bytes -= len(l.Text)
			b.delta -= lineCost(l)
		}
		clear(seg)
		b.start = (b.start + len(seg)) % len(b.ring)
		b.n -= len(seg)
		b.first += int64(len(seg))
		k -= len(seg)
	}
}

// skip counts k lines as added and immediately trimmed: the held lines are
// dropped and numbering moves on by k. Only valid when at least maxLines
// lines follow at once, which would trim every held line anyway.
func (b *scrollback) skip(k int) {
	b.delta -= int64(b.bytes) + int64(b.n)*lineOverhead
	clear(b.ring)
	b.first += int64(b.n + k)
	b.start, b.n, b.bytes = 0, 0, 0
}

// replace overwrites line abs if it is still held and reports whether it was.
func (b *scrollback) replace(abs int64, l proto.Line) bool {
	if abs < b.first || abs >= b.total() {
		return false
	}
	i := b.slot(abs)
	b.bytes += len(l.Text) - len(b.ring[i].Text)
	b.delta += int64(len(l.Text) - len(b.ring[i].Text))
	b.ring[i] = l
	return true
}

// copyRange appends lines [from, from+n) that are held to dst.
func (b *scrollback) copyRange(dst []proto.Line, from int64, n int) []proto.Line {
	if from < b.first {
		from = b.first
	}
	for abs := from; abs < b.total() && n > 0; abs++ {
		dst = append(dst, b.ring[b.slot(abs)])
		n--
	}
	return dst
}
