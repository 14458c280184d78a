// Package termtext turns the raw bytes a child writes to stdout or stderr into
// display lines that are safe to draw inside a pane of the dashboard.
//
// A line ends at "\n" or "\r\n". A bare "\r" returns to column 0 and later
// text overwrites the line cell by cell, as on a terminal; "\x1b[K" erases as
// on a terminal. Tabs expand to 8-column stops. Invalid UTF-8 becomes U+FFFD,
// one per invalid byte. SGR sequences (colours, attributes) are kept: the
// active style carries over to the next lines, is re-emitted in a compact
// normalized form at the start of each line, and every line that contains an
// SGR sequence ends with "\x1b[m"; a line without styling holds no escape
// byte. Every other escape sequence and control character is removed. A line
// wider than the converter's width cap keeps the text that fits with the
// marker "…[line cut: N more bytes in the log file]", N being about how
// many bytes of the line follow the cut in the log file; the next lines are
// not affected. The output does not depend on how the input was split into
// chunks.
package termtext

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// DefaultMaxWidth is the width cap, in display cells, of a line when
// NewConverter is given less than 1024.
const DefaultMaxWidth = 65536

const (
	minMaxWidth = 1024
	// bytesPerCell bounds the line buffer: a line may hold at most
	// bytesPerCell*maxWidth bytes (text plus SGR sequences) before it is cut.
	bytesPerCell = 8
	// clusterCap is the longest grapheme cluster kept, in bytes; a rune that
	// would make a cluster longer (a flood of combining marks) is dropped.
	clusterCap = 256
	// seqCap is the longest CSI, ESC or DCS header, in bytes, that takes
	// effect. A longer one (thousands of parameters) is still read to its
	// final byte and removed whole, without effect; a line end ends it, so
	// a sequence without a final byte hides at most the rest of its line.
	seqCap = 4096
	// strCap is the longest OSC, DCS, SOS, PM or APC string, in bytes, before
	// it is abandoned. Nothing of it is stored, so this bounds only how much
	// output an unterminated string can hide.
	strCap = 1 << 20

	markerPrefix = "…[line cut: "
	markerSuffix = " more bytes in the log file]"
)

var fffd = []byte(string(utf8.RuneError))

// Converter turns one byte stream into display lines. Not safe for concurrent
// use. Its memory is proportional to its width cap whatever the input: a few
// KiB for ordinary output; for a line at the cap, about 8 bytes per cell of
// the cap, and at most about 150 bytes per cell (10 MiB at the default) for
// an overwritten line whose every cell has its own style.
type Converter struct {
	maxWidth   int // cells per line, marker included
	byteCap    int // bytes in the line buffer before a cut
	budget     int // cells of text kept when a line is cut
	byteBudget int // bytes of text kept when a line is cut
	markerW    int // width of the marker without its digits
	plain      bool

	emit func(text []byte, width int) // the current Feed/Flush callback

	parser  ansi.Parser // escape sequences, only while inSeq
	aux     ansi.Parser // re-reads the SGR sequences this converter wrote (no handler)
	inSeq   bool
	seqLen  int  // bytes of the current escape sequence
	overCap bool // the current sequence passed seqCap: it ends without effect

	style style // the active SGR state

	hold  [utf8.UTFMax]byte // an incomplete UTF-8 sequence at the end of a Feed
	nhold int

	// The line as text plus SGR sequences (normal mode, and the kept part
	// of a cut line).
	buf        []byte
	emitted    style // the style the SGR sequences in buf leave behind
	anySGR     bool  // buf holds an SGR sequence
	committedW int   // width of buf's finished grapheme clusters
	hasPend    bool  // the last cluster may still grow
	pendStart  int   // where it starts in buf
	pendW      int   // its width
	pendWide   bool  // it is not a single ASCII byte
	blankTo    int   // erased columns before the cursor on an empty line
	crPending  bool  // a "\r" was seen; the cursor is at column 0

	cellLine // the line as cells, after "\r" and text

	// A cut line: buf holds the kept part.
	cut       bool
	cutW      int   // width of the kept part
	cutAny    bool  // the kept part holds an SGR sequence
	cutStyled bool  // the kept part ends in a non-default style
	cutSafe   bool  // the marker cannot join the kept part's last cluster
	dropped   int64 // bytes dropped after the cut
	crCount   int   // "\r" seen after the cut, not yet known not to be "\r\n"

	csiParams [parser.MaxParamsSize]ansi.Param // fastCSI's parameters
	widths    [256]widthEntry                  // runeWidth's cache
	sgrCache  [16]sgrEntry                     // appendSGRCached's cache

	out     []byte     // rendering scratch
	scratch *Converter // renders Partial when bytes are held back
}

// NewConverter returns a converter whose lines are at most maxWidth display
// cells wide (the text plus the cut marker). A maxWidth below 1024 is raised
// to DefaultMaxWidth.
func NewConverter(maxWidth int) *Converter {
	if maxWidth < minMaxWidth {
		maxWidth = DefaultMaxWidth
	}
	return newConverter(maxWidth, false)
}

// NewPlainConverter is NewConverter whose lines hold no escape sequence at
// all (SGR removed too), as Plain's.
func NewPlainConverter(maxWidth int) *Converter {
	if maxWidth < minMaxWidth {
		maxWidth = DefaultMaxWidth
	}
	return newConverter(maxWidth, true)
}

// newConverter has no lower bound on maxWidth, so tests can cut short lines;
// it must leave room for the marker (about 60 cells).
func newConverter(maxWidth int, plain bool) *Converter {
	c := &Converter{maxWidth: maxWidth, plain: plain}
	c.markerW = ansi.StringWidth(markerPrefix) + ansi.StringWidth(markerSuffix)
	c.budget = max(maxWidth-c.markerW-20, 1)
	c.byteCap = bytesPerCell * maxWidth
	c.byteBudget = c.byteCap - 2*len(markerPrefix+markerSuffix) - 40
	for _, p := range []*ansi.Parser{&c.parser, &c.aux} {
		p.SetParamsSize(parser.MaxParamsSize)
		p.SetDataSize(64) // string data is never read
	}
	c.parser.SetHandler(ansi.Handler{
		Execute:   c.execute,
		HandleCsi: c.handleCsi,
		HandleEsc: c.handleEsc,
	})
	return c
}

// Feed consumes p, which may end anywhere (inside a character or an escape
// sequence), and calls emit once per completed line, in order. text is only
// valid during the call (the callee copies it); width is its display width in
// cells, as ansi.StringWidth measures it.
func (c *Converter) Feed(p []byte, emit func(text []byte, width int)) {
	c.emit = emit
	for c.nhold > 0 && len(p) > 0 {
		// Complete the held-back character one byte at a time, so that it
		// decodes exactly as it would have in one piece.
		c.hold[c.nhold] = p[0]
		c.nhold++
		p = p[1:]
		if utf8.FullRune(c.hold[:c.nhold]) {
			tmp, n := c.hold, c.nhold
			c.nhold = 0
			c.run(tmp[:n])
		}
	}
	c.run(p)
	c.emit = nil
}

// Partial returns the current unfinished line (the text after the last line
// end), rendered exactly as a completed line would be if it ended now, and
// its width in cells; ok is false when there is none (nothing since the last
// line end, or nothing visible: only escape sequences). The slice belongs to
// the converter and is valid until the next Feed or Flush.
func (c *Converter) Partial() (text []byte, width int, ok bool) {
	if c.nhold > 0 {
		s := c.cloneForPartial()
		s.flushHold()
		text, width = s.render()
	} else {
		text, width = c.render()
	}
	return text, width, len(text) > 0
}

// Flush ends the stream: held-back bytes are processed (an incomplete UTF-8
// sequence becomes one U+FFFD per byte; an unterminated escape sequence is
// dropped), the partial line, if Partial would report one, is passed to emit
// as a line, and the converter returns to its initial state (default style).
func (c *Converter) Flush(emit func(text []byte, width int)) {
	c.emit = emit
	c.flushHold()
	if text, w := c.render(); len(text) > 0 {
		emit(text, w)
	}
	c.resetLine()
	c.abortSeq()
	c.style = style{}
	c.emit = nil
}

func (c *Converter) flushHold() {
	n := c.nhold
	c.nhold = 0
	for range n {
		if c.cut {
			c.dropped++
		} else {
			c.textRune(fffd)
		}
	}
}

// run processes p from the ground state or the escape sequence in progress.
func (c *Converter) run(p []byte) {
	for i := 0; i < len(p); {
		if c.inSeq {
			i = c.seqStep(p, i)
			continue
		}
		if c.cut {
			i = c.cutStep(p, i)
			continue
		}
		b := p[i]
		if b >= 0x20 && b < 0x7f {
			k := printableLen(p[i:])
			if i+k < len(p) && p[i+k] == '\n' && k <= c.maxWidth && c.freshLine() {
				// The common case: a whole plain line, straight through.
				c.emit(p[i:i+k], k)
				i += k + 1
				continue
			}
			c.appendASCII(p[i : i+k])
			i += k
			continue
		}
		switch {
		case b == '\n':
			c.endLine()
			i++
		case b == '\r':
			c.carriageReturn()
			i++
		case b == '\t':
			c.tab()
			i++
		case b == ansi.ESC:
			if n := c.fastCSI(p, i); n > 0 {
				i += n
				continue
			}
			c.startSeq()
			i++
		case b < 0x80: // other C0 controls and DEL
			i++
		default:
			i = c.decode(p, i)
		}
	}
}

// decode handles the non-ASCII character at p[i] and returns where the next
// one starts. An incomplete sequence at the end of p is held back.
func (c *Converter) decode(p []byte, i int) int {
	if !utf8.FullRune(p[i:]) {
		c.nhold = copy(c.hold[:], p[i:])
		return len(p)
	}
	r, size := utf8.DecodeRune(p[i:])
	switch {
	case r == utf8.RuneError && size == 1, Invisible(r):
		c.textRune(fffd)
	case r < 0xa0: // C1 controls, U+0080–U+009F
	case widthAmbiguous(r):
	case isRegional(r):
		c.textRune([]byte{regionalLetter(r)})
	default:
		c.textRune(p[i : i+size])
	}
	return i + size
}

// freshLine reports whether nothing of the current line has been written, so
// a plain line can go out without being copied.
func (c *Converter) freshLine() bool {
	return len(c.buf) == 0 && !c.cellMode && !c.crPending && c.blankTo == 0 &&
		(c.plain || c.style.isDefault())
}

// endLine emits the current line and starts the next one.
func (c *Converter) endLine() {
	text, w := c.render()
	c.emit(text, w)
	c.resetLine()
}

func (c *Converter) resetLine() {
	c.buf = c.buf[:0]
	c.emitted = style{}
	c.anySGR = false
	c.committedW = 0
	c.hasPend = false
	c.pendW = 0
	c.blankTo = 0
	c.crPending = false
	c.resetCells()
	c.cut = false
	c.dropped = 0
	c.crCount = 0
}

// render returns the current line as it would be emitted now, without
// changing the converter's state. The slice is scratch space.
func (c *Converter) render() ([]byte, int) {
	switch {
	case c.cut:
		return c.renderCut()
	case c.cellMode:
		return c.renderCellLine()
	case len(c.buf) == 0:
		return nil, 0
	case c.anySGR:
		out := append(c.buf, "\x1b[m"...)
		c.buf = out[:len(c.buf)] // keep the capacity the reset needed
		return out, c.width()
	default:
		return c.buf, c.width()
	}
}

// renderCut renders a cut line: the kept part, the marker, and the resets.
// The marker goes after the kept part in buf's spare capacity (buf does not
// change until the line ends), so a render costs the marker, not the line.
func (c *Converter) renderCut() ([]byte, int) {
	out := c.buf
	if c.cutStyled {
		out = append(out, "\x1b[m"...)
	}
	out = append(out, markerPrefix...)
	n := len(out)
	out = strconv.AppendInt(out, c.dropped, 10)
	digits := len(out) - n
	out = append(out, markerSuffix...)
	if c.cutAny {
		out = append(out, "\x1b[m"...)
	}
	c.buf = out[:len(c.buf)] // keep the capacity the marker needed
	if c.cutSafe && c.cutW <= c.budget {
		return out, c.cutW + c.markerW + digits
	}
	return c.checkWidth(out)
}

// checkWidth measures a rendered line and, should it exceed the cap (it
// cannot by construction; this is a last guard), truncates it.
func (c *Converter) checkWidth(out []byte) ([]byte, int) {
	w := ansi.StringWidth(bytesToString(out))
	if w <= c.maxWidth {
		return out, w
	}
	s := ansi.Truncate(string(out), c.maxWidth, "")
	if strings.IndexByte(s, ansi.ESC) >= 0 {
		s += "\x1b[m"
	}
	c.out = append(c.out[:0], s...)
	return c.out, ansi.StringWidth(s)
}

// cloneForPartial copies the converter's line state into c.scratch, so
// Partial can process held-back bytes without changing c.
func (c *Converter) cloneForPartial() *Converter {
	s := c.scratch
	if s == nil {
		s = &Converter{}
	}
	buf, cells, arena, pend, out := s.buf, s.cells, s.arena, s.pend, s.out
	*s = *c
	s.scratch = nil
	s.emit = nil
	s.arena2 = nil
	s.buf = append(buf[:0], c.buf...)
	s.cells = append(cells[:0], c.cells...)
	s.arena = append(arena[:0], c.arena...)
	s.pend = append(pend[:0], c.pend...)
	s.out = out
	c.scratch = s
	return s
}
