package termtext

import (
	"bytes"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Normal mode: the line is appended to c.buf as text and SGR sequences, and
// its width is kept up to date cluster by cluster. Grapheme clusters are
// measured exactly as ansi.StringWidth measures the finished line: the last
// cluster stays "pending" because the next character may still extend it
// (a combining mark, a variation selector, a ZWJ), so its width is
// re-measured from its start when text arrives. Segmentation never looks
// ahead, so this gives the same clusters whatever the chunking.

var spaces = bytes.Repeat([]byte{' '}, 64)

// width returns the display width of the line in normal mode.
func (c *Converter) width() int {
	if c.hasPend {
		return c.committedW + c.pendW
	}
	return c.committedW
}

// beforeText brings the line to where text can be appended: it resolves a
// pending "\r" and erased columns. It reports false when the text goes
// elsewhere (the line is cut, or is in cell mode).
func (c *Converter) beforeText() bool {
	if c.crPending {
		c.resolveCR()
	}
	if c.cellMode || c.cut {
		return false
	}
	if c.blankTo > 0 {
		n := c.blankTo
		c.blankTo = 0
		for n > 0 && !c.cut {
			k := min(n, len(spaces))
			c.appendASCII(spaces[:k])
			n -= k
		}
		return !c.cut
	}
	return true
}

// styleText emits the active style before text when it differs from what
// the line last emitted. An SGR sequence ends the pending cluster, as the
// ESC in the output ends it for ansi.StringWidth.
func (c *Converter) styleText() {
	if c.plain || c.style == c.emitted {
		return
	}
	c.commitPend()
	c.buf = c.appendSGRCached(c.buf, c.emitted, c.style)
	c.emitted = c.style
	c.anySGR = true
}

func (c *Converter) commitPend() {
	if c.cellMode {
		c.commitCellPend()
		return
	}
	if c.hasPend {
		c.committedW += c.pendW
		c.hasPend = false
		c.pendW = 0
	}
}

// appendASCII appends a run of printable ASCII to the line.
func (c *Converter) appendASCII(t []byte) {
	for len(t) > 0 {
		if c.cut {
			c.dropped += int64(len(t))
			return
		}
		if !c.beforeText() {
			if c.cellMode {
				c.cellASCII(t)
				return
			}
			continue
		}
		c.styleText()
		if c.hasPend && c.pendWide {
			// The last cluster may take this byte (after a prepended
			// mark); let the segmenter decide.
			c.runeStep(t[:1])
			t = t[1:]
			continue
		}
		// Every byte is a cluster of width 1; stop one byte past the cap.
		avail := max(min(c.maxWidth-c.width(), c.byteCap-len(c.buf)), 0)
		take := min(len(t), avail+1)
		c.buf = append(c.buf, t[:take]...)
		c.committedW += c.pendW + take - 1
		c.hasPend, c.pendW, c.pendStart, c.pendWide = true, 1, len(c.buf)-1, false
		t = t[take:]
		if take > avail {
			c.cutLine()
		}
	}
}

// textRune appends one encoded character (not ASCII, or ASCII that may join
// the previous cluster) to the line.
func (c *Converter) textRune(rb []byte) {
	if c.cut {
		c.dropped += int64(len(rb))
		return
	}
	if !c.beforeText() {
		if c.cellMode {
			c.cellRune(rb)
		} else {
			c.dropped += int64(len(rb))
		}
		return
	}
	c.styleText()
	c.runeStep(rb)
}

// runeStep appends rb and re-measures the pending cluster.
func (c *Converter) runeStep(rb []byte) {
	pos := len(c.buf)
	c.buf = append(c.buf, rb...)
	if c.hasPend {
		seg := c.buf[c.pendStart:]
		cl, w := ansi.FirstGraphemeCluster(seg, ansi.GraphemeWidth)
		if len(cl) == len(seg) { // rb extends the pending cluster
			if len(seg) > clusterCap {
				c.buf = c.buf[:pos]
				return
			}
			c.pendW, c.pendWide = w, true
			c.checkCut()
			return
		}
		c.committedW += w
	}
	w := c.runeWidth(c.buf[pos:])
	c.hasPend, c.pendStart, c.pendW = true, pos, w
	c.pendWide = len(rb) > 1 || rb[0] >= 0x80
	c.checkCut()
}

func (c *Converter) checkCut() {
	if c.width() > c.maxWidth || len(c.buf) > c.byteCap {
		c.cutLine()
	}
}

// carriageReturn handles "\r": the cursor goes to column 0. Whether it is a
// line end ("\r\n") or the start of an overwrite is decided by what follows.
func (c *Converter) carriageReturn() {
	switch {
	case c.cut:
		c.crCount++
	case c.cellMode:
		c.commitCellPend()
		c.cursor = 0
	case len(c.buf) == 0:
		c.blankTo = 0
	default:
		c.crPending = true
	}
}

// resolveCR moves the cursor to column 0 once something depends on it: the
// line switches to cell mode so later text overwrites it.
func (c *Converter) resolveCR() {
	c.crPending = false
	if c.cellMode {
		c.commitCellPend()
		c.cursor = 0
		return
	}
	if len(c.buf) == 0 {
		c.blankTo = 0
		return
	}
	c.toCells()
	c.cursor = 0
}

// tab moves to the next 8-column stop, writing spaces at the end of a line.
func (c *Converter) tab() {
	if c.cut {
		return
	}
	if c.crPending {
		c.resolveCR()
	}
	if c.cellMode {
		c.cellTab()
		return
	}
	col := c.blankTo + c.width()
	c.appendASCII(spaces[:8-col%8])
}

// cutLine cuts a line that has grown past the width or byte cap: it keeps
// the longest prefix of whole clusters that leaves room for the marker and
// drops the rest up to the line end, counting the dropped bytes.
func (c *Converter) cutLine() {
	c.commitPend()
	w, keep := 0, 0
	var keepStyle style
	keepAny := false
	c.walk(c.buf, func(_ []byte, cw int, st style, sgr bool, end int) bool {
		if w+cw > c.budget || end > c.byteBudget {
			return false
		}
		w, keep, keepStyle, keepAny = w+cw, end, st, sgr
		return true
	})
	c.setCut(keep, w, keepStyle, keepAny, int64(textBytes(c.buf[keep:])))
}

// setCut truncates buf to the kept part and switches to cut mode.
func (c *Converter) setCut(keep, w int, st style, anySGR bool, dropped int64) {
	c.buf = c.buf[:keep]
	c.cut = true
	c.cutW = w
	c.cutAny = anySGR
	c.cutStyled = !c.plain && !st.isDefault()
	c.cutSafe = c.cutStyled || keep == 0 || c.buf[keep-1] < 0x80
	c.dropped = dropped
	c.crCount = 0
	c.hasPend = false
	c.crPending = false
	c.blankTo = 0
}

// textBytes counts the bytes of b that are not SGR sequences written by
// this converter.
func textBytes(b []byte) int {
	n := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, ansi.ESC)
		if i < 0 {
			return n + len(b)
		}
		n += i
		j := bytes.IndexByte(b[i:], 'm')
		if j < 0 {
			return n
		}
		b = b[i+j+1:]
	}
	return n
}

// walk calls fn for each grapheme cluster of a line buffer written by this
// converter, in order, with its width, its style, whether an SGR sequence
// came before it, and where it ends. It measures exactly as the incremental
// path does. It stops when fn returns false.
func (c *Converter) walk(b []byte, fn func(cl []byte, w int, st style, sgr bool, end int) bool) {
	var st style
	sgr := false
	for i := 0; i < len(b); {
		if b[i] == ansi.ESC {
			j := bytes.IndexByte(b[i:], 'm')
			if j < 0 {
				return
			}
			c.aux.Reset()
			for _, x := range b[i : i+j+1] {
				c.aux.Advance(x)
			}
			st.applySGR(c.aux.Params())
			sgr = true
			i += j + 1
			continue
		}
		var cl []byte
		var w int
		if b[i] < 0x80 && (i+1 == len(b) || b[i+1] < 0x80) {
			cl, w = b[i:i+1], 1
		} else {
			cl, w = ansi.FirstGraphemeCluster(b[i:], ansi.GraphemeWidth)
		}
		i += len(cl)
		if !fn(cl, w, st, sgr, i) {
			return
		}
	}
}

// cutWindow is how far ahead one cutStep looks, in bytes.
const cutWindow = 4 << 10

// cutStep skips bytes of a cut line up to its end, counting them; escape
// sequences are still read so the SGR state stays right.
func (c *Converter) cutStep(p []byte, i int) int {
	// The first ESC, "\n" or "\r" ends the step. Each step looks at most
	// cutWindow bytes ahead: scanning the whole rest of p for "\n" at every
	// escape sequence would make a long line of them quadratic. A window
	// without any of the three is dropped whole and the next step goes on
	// from there.
	seg := p[i:min(len(p), i+cutWindow)]
	n := len(seg)
	if j := bytes.IndexByte(seg, ansi.ESC); j >= 0 {
		n = j
	}
	if j := bytes.IndexByte(seg[:n], '\n'); j >= 0 {
		n = j
	}
	if j := bytes.IndexByte(seg[:n], '\r'); j >= 0 {
		n = j
	}
	if n > 0 || (n < len(seg) && seg[n] == ansi.ESC) {
		c.dropped += int64(c.crCount)
		c.crCount = 0
	}
	c.dropped += int64(n)
	if n == len(seg) {
		return i + n
	}
	switch seg[n] {
	case '\n':
		c.endLine()
	case '\r':
		c.crCount++
	default:
		if k := c.fastCSI(p, i+n); k > 0 {
			return i + n + k
		}
		c.startSeq()
	}
	return i + n + 1
}

// runeWidth returns the width of one encoded character taken as a grapheme
// cluster of its own, as ansi.FirstGraphemeCluster measures it, through a
// small direct-mapped cache (the width is a function of the character).
func (c *Converter) runeWidth(rb []byte) int {
	r, _ := utf8.DecodeRune(rb)
	e := &c.widths[uint32(r)%uint32(len(c.widths))]
	if e.r == r+1 {
		return int(e.w)
	}
	_, w := ansi.FirstGraphemeCluster(rb, ansi.GraphemeWidth)
	e.r, e.w = r+1, int8(w)
	return w
}

// widthEntry caches runeWidth; r is the character plus one, so the zero
// value is empty.
type widthEntry struct {
	r rune
	w int8
}
