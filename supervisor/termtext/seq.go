package termtext

import (
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// Escape sequences are recognised by ansi.Parser, the DEC ANSI state
// machine, fed one byte at a time from the ESC on; its state is all that is
// carried across Feed calls, so nothing is held back and a split sequence is
// read exactly as a whole one. Text never goes through the parser. Two
// departures from a terminal keep a log pane readable: a byte of 0x80 or
// more ends a CSI or ESC sequence and is read as text (raw C1 bytes are not
// controls in UTF-8 output), and a "\n" ends an unterminated OSC, SOS, PM or
// APC string, so a forgotten terminator hides one line, not the rest of the
// output. Only SGR (kept), EL (applied to the line) and RIS (resets the
// style) have any effect; everything else is dropped.

// startSeq starts an escape sequence at an ESC byte.
func (c *Converter) startSeq() {
	c.parser.Advance(ansi.ESC)
	c.inSeq = true
	c.seqLen = 1
	c.overCap = false
	if c.cut {
		c.dropped++
	}
}

// abortSeq drops the escape sequence in progress.
func (c *Converter) abortSeq() {
	c.parser.Reset()
	c.inSeq = false
	c.overCap = false
}

func isStringState(s parser.State) bool {
	return s == parser.DcsStringState || s >= parser.OscStringState && s <= parser.ApcStringState
}

// seqStep feeds the bytes of p from i to the parser until the sequence ends
// or p does, and returns where it stopped. A string longer than strCap is
// abandoned at exactly the byte that passes the cap, whatever the
// chunking; that byte and the rest are read as text. A CSI, ESC or DCS
// header longer than seqCap goes on to its final byte without effect
// (overCap), or is abandoned at a line end, which is then read as text.
func (c *Converter) seqStep(p []byte, i int) int {
	for i < len(p) {
		b := p[i]
		st := c.parser.State()
		limit := seqCap
		if isStringState(st) {
			limit = strCap
			// String data is never used: skip it without the parser.
			j, end := i, min(len(p), i+max(strCap-c.seqLen, 0))
			for j < end && p[j] >= 0x20 {
				j++
			}
			c.seqLen += j - i
			if c.cut {
				c.dropped += int64(j - i)
			}
			i = j
			if i == len(p) {
				return i
			}
			b = p[i]
			if b == '\n' && st != parser.DcsStringState {
				c.abortSeq()
				return i
			}
		} else if b >= 0x80 || c.overCap && b == '\n' {
			c.abortSeq()
			return i
		}
		if c.seqLen >= limit {
			if limit == strCap {
				c.abortSeq()
				return i
			}
			c.overCap = true
		}
		c.seqLen++
		if c.cut && b != '\n' {
			c.dropped++
		}
		c.parser.Advance(b)
		i++
		if b == ansi.ESC {
			c.seqLen = 1 // a new sequence starts (or a string ends with ST)
			c.overCap = false
		}
		if c.parser.State() == parser.GroundState {
			c.inSeq = false
			return i
		}
	}
	return i
}

// execute handles a C0 control inside a CSI or ESC sequence, where a
// terminal acts on it without ending the sequence.
func (c *Converter) execute(b byte) {
	switch b {
	case '\n':
		c.endLine()
	case '\r':
		if !c.cut {
			c.carriageReturn()
		}
	case '\t':
		c.tab()
	}
}

func (c *Converter) handleCsi(cmd ansi.Cmd, params ansi.Params) {
	if c.overCap || cmd.Prefix() != 0 || cmd.Intermediate() != 0 {
		return
	}
	switch cmd.Final() {
	case 'm':
		if !c.plain {
			c.style.applySGR(params)
		}
	case 'K':
		mode, _, _ := params.Param(0, 0)
		c.eraseLine(mode)
	}
}

func (c *Converter) handleEsc(cmd ansi.Cmd) {
	if !c.overCap && cmd.Final() == 'c' && cmd.Intermediate() == 0 { // RIS
		c.style = style{}
	}
}

// eraseLine applies EL (CSI K): 0 erases from the cursor to the end of the
// line, 1 from the start through the cursor, 2 the whole line. The cursor
// does not move.
func (c *Converter) eraseLine(mode int) {
	if c.cut || mode > 2 {
		return
	}
	if c.crPending {
		c.crPending = false
		if mode != 1 {
			c.clearLine(0)
			return
		}
		c.resolveCRTo0()
	}
	if !c.cellMode {
		if mode != 0 {
			c.clearLine(c.blankTo + c.width())
		}
		return
	}
	c.commitCellPend()
	switch mode {
	case 0:
		if c.cursor == 0 {
			c.clearLine(0)
			return
		}
		c.eraseCells(c.cursor, len(c.cells))
		c.cells = c.cells[:c.cursor]
	case 1:
		c.eraseCells(0, c.cursor+1)
		for _, cl := range c.cells {
			if cl.n != 0 {
				return
			}
		}
		c.clearLine(c.cursor)
	case 2:
		c.clearLine(c.cursor)
	}
}

// resolveCRTo0 is resolveCR for an erase: a non-empty line goes to cell
// mode with the cursor at column 0.
func (c *Converter) resolveCRTo0() {
	if len(c.buf) == 0 && !c.cellMode {
		c.blankTo = 0
		return
	}
	if !c.cellMode {
		c.toCells()
	}
	c.commitCellPend()
	c.cursor = 0
}

// clearLine empties the line, leaving the cursor at column col.
func (c *Converter) clearLine(col int) {
	c.resetLine()
	c.blankTo = col
}
