package termtext

import "github.com/charmbracelet/x/ansi"

// Cell mode: once text follows a "\r" on a non-empty line (or an erase
// leaves blanks before the cursor), the line becomes a row of terminal cells
// and text overwrites it at the cursor, wide characters included. Lines that
// never go back stay in the cheaper normal mode.
//
// The last cluster written is provisional, as in normal mode: the cells it
// overwrote are saved, and when the next character extends the cluster they
// are put back and the longer cluster is written instead. That keeps the
// result independent of where the input was split.

// cell is one terminal column.
type cell struct {
	off uint32 // start of the cluster in the arena
	n   uint16 // cluster length in bytes; 0 for an erased cell (drawn as a space)
	w   uint8  // 1 or 2 for a cluster or an erased cell; 0 for the right half of a wide cluster
	st  style
}

// cellLine is the cell-mode state of a Converter.
type cellLine struct {
	cellMode bool
	cells    []cell
	arena    []byte // cluster bytes; overwritten ones stay until compaction
	arena2   []byte // compaction target, kept to avoid allocating
	cursor   int    // column, 0 ≤ cursor ≤ len(cells)
	live     int    // bytes of the arena that cells use

	cellPend     bool   // the last written cluster is provisional
	pend         []byte // its bytes
	pendStyle    style
	pendCellWide bool // it is not a single ASCII byte
	snap         cellSnap
}

// cellSnap is what a provisional write changed: at most the cell before the
// cursor, the cluster's own cells, and the cell after them.
type cellSnap struct {
	from, to int
	cells    [4]cell
	n        int // len(cells) before the write
	cursor   int
	live     int
}

func (c *Converter) resetCells() {
	c.cellMode = false
	c.cells = c.cells[:0]
	c.arena = c.arena[:0]
	c.live = 0
	c.cursor = 0
	c.pend = c.pend[:0]
	c.cellPend = false
}

// toCells turns the normal-mode line into cells, with the cursor at its end.
func (c *Converter) toCells() {
	c.commitPend()
	c.resetCells()
	c.walk(c.buf, func(cl []byte, w int, st style, _ bool, _ int) bool {
		if w == 0 {
			return true
		}
		w = min(w, 2)
		off := len(c.arena)
		c.arena = append(c.arena, cl...)
		c.cells = append(c.cells, cell{off: uint32(off), n: uint16(len(cl)), w: uint8(w), st: st})
		if w == 2 {
			c.cells = append(c.cells, cell{st: st})
		}
		c.live += len(cl)
		return true
	})
	c.cursor = len(c.cells)
	c.cellMode = true
	c.buf = c.buf[:0]
	c.emitted = style{}
	c.anySGR = false
	c.committedW = 0
}

func (c *Converter) commitCellPend() { c.cellPend = false }

// cellASCII writes a run of printable ASCII at the cursor.
func (c *Converter) cellASCII(t []byte) {
	for i := range t {
		if c.cut {
			c.dropped += int64(len(t) - i)
			return
		}
		if c.cellPend && c.pendCellWide {
			c.cellRune(t[i : i+1])
			continue
		}
		c.commitCellPend()
		c.pend = append(c.pend[:0], t[i])
		c.pendStyle, c.cellPend, c.pendCellWide = c.style, true, false
		c.provWrite(c.pend, 1)
		c.checkCellCut()
	}
}

// cellRune writes one encoded character at the cursor, extending the
// provisional cluster when the segmenter says it belongs to it.
func (c *Converter) cellRune(rb []byte) {
	if c.cellPend && (c.plain || c.pendStyle == c.style) {
		old := len(c.pend)
		c.pend = append(c.pend, rb...)
		cl, w := ansi.FirstGraphemeCluster(c.pend, ansi.GraphemeWidth)
		if len(cl) == len(c.pend) {
			if len(c.pend) > clusterCap {
				c.pend = c.pend[:old]
				return
			}
			c.restoreSnap()
			c.provWrite(c.pend, w)
			c.pendCellWide = true
			c.checkCellCut()
			return
		}
		c.pend = c.pend[:old]
	}
	c.commitCellPend()
	c.pend = append(c.pend[:0], rb...)
	w := c.runeWidth(c.pend)
	c.pendStyle, c.cellPend = c.style, true
	c.pendCellWide = len(rb) > 1 || rb[0] >= 0x80
	c.provWrite(c.pend, w)
	c.checkCellCut()
}

// provWrite writes a cluster of width w at the cursor, saving what it
// overwrites. A zero-width cluster is not drawn (a terminal would put it on
// the previous cell; here it is dropped).
func (c *Converter) provWrite(text []byte, w int) {
	c.compactArena()
	w = min(w, 2)
	col := c.cursor
	s := &c.snap
	s.from, s.to = max(col-1, 0), min(col+w+1, len(c.cells))
	copy(s.cells[:], c.cells[s.from:max(s.from, s.to)])
	s.n, s.cursor, s.live = len(c.cells), col, c.live
	if w == 0 {
		return
	}
	off := len(c.arena)
	c.arena = append(c.arena, text...)
	c.writeCell(col, cell{off: uint32(off), n: uint16(len(text)), w: uint8(w), st: c.style})
}

func (c *Converter) restoreSnap() {
	s := &c.snap
	c.cells = c.cells[:s.n]
	if s.to > s.from {
		copy(c.cells[s.from:s.to], s.cells[:s.to-s.from])
	}
	c.cursor, c.live = s.cursor, s.live
}

// writeCell puts nc at col and moves the cursor past it. A wide cluster
// that is half overwritten is erased, as a terminal does.
func (c *Converter) writeCell(col int, nc cell) {
	end := col + int(nc.w)
	if col > 0 && col < len(c.cells) && c.cells[col].w == 0 {
		c.blankCell(col - 1)
	}
	if end < len(c.cells) && c.cells[end-1].w == 2 {
		c.blankCell(end)
	}
	for len(c.cells) < end {
		c.cells = append(c.cells, cell{w: 1})
	}
	for i := col; i < end; i++ {
		c.live -= int(c.cells[i].n)
	}
	c.cells[col] = nc
	c.live += int(nc.n)
	if nc.w == 2 {
		c.cells[col+1] = cell{st: nc.st}
	}
	c.cursor = end
}

func (c *Converter) blankCell(i int) {
	c.live -= int(c.cells[i].n)
	c.cells[i] = cell{w: 1}
}

// eraseCells erases the columns [a, b), and the other half of a wide
// cluster cut by either edge.
func (c *Converter) eraseCells(a, b int) {
	b = min(b, len(c.cells))
	if a >= b {
		return
	}
	if a > 0 && c.cells[a].w == 0 {
		c.blankCell(a - 1)
	}
	if b < len(c.cells) && c.cells[b-1].w == 2 {
		c.blankCell(b)
	}
	for i := a; i < b; i++ {
		c.blankCell(i)
	}
}

// cellTab moves the cursor to the next 8-column stop, adding spaces past the
// end of the line.
func (c *Converter) cellTab() {
	c.commitCellPend()
	target := (c.cursor/8 + 1) * 8
	for c.cursor < target && !c.cut {
		if c.cursor < len(c.cells) {
			c.cursor = min(target, len(c.cells))
			continue
		}
		off := len(c.arena)
		c.arena = append(c.arena, ' ')
		c.cells = append(c.cells, cell{off: uint32(off), n: 1, w: 1, st: c.style})
		c.live++
		c.cursor++
		c.checkCellCut()
	}
}

func (c *Converter) checkCellCut() {
	if len(c.cells) > c.maxWidth || c.live > c.byteCap {
		c.cutCells()
	}
}

// cutCells cuts a cell-mode line that has grown past a cap: the first
// budget cells are kept as normal-mode text.
func (c *Converter) cutCells() {
	c.commitCellPend()
	keep := min(len(c.cells), c.budget)
	if keep > 0 && c.cells[keep-1].w == 2 {
		c.blankCell(keep - 1)
	}
	var dropped int64
	for _, cl := range c.cells[keep:] {
		dropped += int64(cl.n)
	}
	c.cells = c.cells[:keep]
	var anySGR bool
	var last style
	c.buf, anySGR, last = c.renderCells(c.buf[:0])
	w := ansi.StringWidth(bytesToString(c.buf))
	c.resetCells()
	c.setCut(len(c.buf), w, last, anySGR, dropped)
}

// renderCells appends the cells, without erased cells at the end, to dst,
// with SGR sequences where the style changes. It reports whether it wrote
// any SGR sequence and the style it leaves behind.
func (c *Converter) renderCells(dst []byte) ([]byte, bool, style) {
	end := len(c.cells)
	for end > 0 && c.cells[end-1].n == 0 && c.cells[end-1].w == 1 {
		end--
	}
	var em style
	anySGR := false
	for _, cl := range c.cells[:end] {
		if cl.w == 0 {
			continue
		}
		if !c.plain && cl.st != em {
			dst = appendSGR(dst, em, cl.st)
			em, anySGR = cl.st, true
		}
		if cl.n == 0 {
			dst = append(dst, ' ')
		} else {
			dst = append(dst, c.arena[cl.off:cl.off+uint32(cl.n)]...)
		}
	}
	return dst, anySGR, em
}

// renderCellLine renders a cell-mode line. Its width is measured on the
// result, because clusters of neighbouring cells can join once they are
// side by side.
func (c *Converter) renderCellLine() ([]byte, int) {
	out, anySGR, _ := c.renderCells(c.out[:0])
	if anySGR {
		out = append(out, "\x1b[m"...)
	}
	c.out = out
	return c.checkWidth(out)
}

// compactArena drops overwritten cluster bytes once they dominate the arena.
func (c *Converter) compactArena() {
	if len(c.arena) <= 2*c.live+4096 {
		return
	}
	a := c.arena2[:0]
	for i := range c.cells {
		cl := &c.cells[i]
		if cl.n == 0 {
			continue
		}
		off := len(a)
		a = append(a, c.arena[cl.off:cl.off+uint32(cl.n)]...)
		cl.off = uint32(off)
	}
	c.arena, c.arena2 = a, c.arena
}
