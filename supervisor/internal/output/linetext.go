package output

import (
	"math"
	"unsafe"
)

const (
	// textBlockSize is the size of the blocks display lines' text is copied
	// into, so a flood of short lines costs no allocation per line.
	textBlockSize = 64 << 10
	// firstTextBlock is the size of a submission's first block; each new
	// block doubles it up to textBlockSize, so that an agent printing a
	// line a second holds a block of a kilobyte, not 64: with a thousand
	// such agents full blocks would be half of the host's heap.
	firstTextBlock = 1 << 10
	// maxSpareBlocks bounds the blocks kept for reuse by one submission.
	maxSpareBlocks = 16
)

// lineText holds the text of one submission's display lines in blocks that
// are reused once no held line refers to them any more: a flood replaces
// its whole scrollback at every read, and reusing its blocks spares the
// allocation, zeroing and collection of as many bytes. Lines keep text in
// their block; Window copies what it returns, so a block's bytes are never
// seen again once its lines are dropped. Not safe for concurrent use (it
// is the output's, under feedMu).
type lineText struct {
	cur   *textBlock   // the block being filled; the last of used
	used  []*textBlock // blocks that may hold text of held lines, oldest first
	dirty int          // used[dirty:] may have been written since the last seal
	// sealedLen is how much of used[dirty] was written at the last seal.
	sealedLen int
	spare     [][]byte // emptied blocks of textBlockSize, for reuse
	size      int      // of the next new block; 0: firstTextBlock
}

// textBlock is one block and the newest line that may use it.
type textBlock struct {
	buf  []byte
	last int64 // absolute number of the newest line whose text may be here
}

// put copies text into the current block and returns an immutable string
// over it (text longer than a quarter block gets an allocation of its own).
func (t *lineText) put(text []byte) string {
	if len(text) == 0 {
		return ""
	}
	if len(text) > textBlockSize/4 {
		return string(text)
	}
	if t.cur == nil || len(t.cur.buf)+len(text) > cap(t.cur.buf) {
		t.next(len(text))
	}
	off := len(t.cur.buf)
	t.cur.buf = append(t.cur.buf, text...)
	return unsafe.String(&t.cur.buf[off], len(text))
}

// next starts a new current block that holds at least need bytes, a
// spare one if there is one; blocks grow from firstTextBlock to
// textBlockSize.
func (t *lineText) next(need int) {
	if t.size == 0 {
		t.size = firstTextBlock
	}
	for t.size < need {
		t.size *= 2
	}
	var buf []byte
	if n := len(t.spare); n > 0 {
		buf, t.spare = t.spare[n-1][:0], t.spare[:n-1]
	} else {
		buf = make([]byte, 0, t.size)
	}
	t.size = min(2*t.size, textBlockSize)
	t.cur = &textBlock{buf: buf, last: math.MaxInt64}
	t.used = append(t.used, t.cur)
}

// seal records that every line whose text was put since the last seal has
// an absolute number of at most last.
func (t *lineText) seal(last int64) {
	for i, b := range t.used[t.dirty:] {
		if i > 0 || len(b.buf) > t.sealedLen {
			b.last = last
		}
	}
	t.dirty = max(len(t.used)-1, 0) // the current block may still be written
	if t.cur != nil {
		t.sealedLen = len(t.cur.buf)
	}
}

// recycle makes the blocks whose every line is older than first (no longer
// held) spare. Call it after seal, with the scrollback's first line.
func (t *lineText) recycle(first int64) {
	i := 0
	for i < len(t.used)-1 && t.used[i].last < first {
		if len(t.spare) < maxSpareBlocks && cap(t.used[i].buf) == textBlockSize {
			t.spare = append(t.spare, t.used[i].buf)
		}
		i++
	}
	if i > 0 {
		n := copy(t.used, t.used[i:])
		clear(t.used[n:])
		t.used = t.used[:n]
		t.dirty = max(t.dirty-i, 0)
	}
}
