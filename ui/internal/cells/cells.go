// Package cells cuts, wraps, pads and cleans text measured in terminal
// cells, keeping SGR styling and dropping every other escape sequence and
// control character, so that nothing drawn crosses a pane border or moves
// the terminal's cursor.
//
// Cut and Wrap cost time proportional to the cells they keep, not to the
// length of the line, so a 64 KiB line costs no more than a short one.
package cells

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/subdash/subdash/supervisor/termtext"
)

// Reset ends every styled row.
const Reset = "\x1b[m"

// Ellipsis marks text cut at the right edge.
const Ellipsis = "…"

// next decodes the item at s[0]: a grapheme cluster (width ≥ 0), an SGR
// sequence (sgr true), or something to drop (width -1).
func next(s string) (item string, width int, sgr bool) {
	c := s[0]
	switch {
	case c == 0x1b:
		seq := escape(s)
		return seq, -1, len(seq) > 2 && seq[1] == '[' && seq[len(seq)-1] == 'm'
	case c < 0x20 || c == 0x7f:
		return s[:1], -1, false
	case c < 0x80:
		return s[:1], 1, false
	}
	cl, w := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
	if cl == "" {
		return s[:1], -1, false
	}
	if strings.HasPrefix(cl, "\u0085") || (len(cl) == 2 && cl[0] == 0xc2 && cl[1] >= 0x80 && cl[1] <= 0x9f) {
		return cl, -1, false // C1 control
	}
	return cl, w, false
}

// escape returns the escape sequence at the start of s (s[0] is ESC), as
// x/ansi's parser delimits it: a CSI sequence up to its final byte, an OSC,
// DCS, SOS, PM or APC string up to its terminator (a title is removed whole,
// not left as text), or ESC and the bytes of a two-byte sequence. An
// unterminated string runs to the end of s.
func escape(s string) string {
	if len(s) < 2 {
		return s
	}
	_, _, n, _ := ansi.DecodeSequence(s, ansi.NormalState, nil)
	if n < 1 {
		n = 1
	}
	return s[:n]
}

func isReset(seq string) bool { return seq == "\x1b[m" || seq == "\x1b[0m" }

// Cut returns the first w cells of s, with Ellipsis in the last cell when s
// is wider than w, and its width. SGR sequences are kept and the result ends
// with Reset when it holds any; other escape sequences and control
// characters are dropped.
func Cut(s string, w int) (string, int) {
	if w <= 0 {
		return "", 0
	}
	var b strings.Builder
	used, cutLen, cutUsed := 0, -1, 0
	styled := false
	for i := 0; i < len(s); {
		item, cw, sgr := next(s[i:])
		i += len(item)
		if cw < 0 {
			if sgr {
				b.WriteString(item)
				styled = true
			}
			continue
		}
		if cutLen < 0 && used+cw > w-1 {
			cutLen, cutUsed = b.Len(), used
		}
		if used+cw > w {
			out := b.String()[:cutLen] + Ellipsis
			if styled {
				out += Reset
			}
			return out, cutUsed + 1
		}
		b.WriteString(item)
		used += cw
	}
	if styled {
		b.WriteString(Reset)
	}
	return b.String(), used
}

// Row is one wrapped row of text and its width in cells.
type Row struct {
	Text  string
	Width int
}

// Wrap breaks s into rows of at most w cells, at most maxRows rows (maxRows ≤ 0:
// no limit), and reports whether rows were left out. Each row ends with
// Reset when styled; a row continuing a styled span starts with the SGR
// sequences still active, so colours carry over the break.
func Wrap(s string, w, maxRows int) (rows []Row, more bool) {
	if w <= 0 {
		return nil, s != ""
	}
	var b strings.Builder
	var active []string // SGR sequences since the last reset
	used, styled := 0, false
	flush := func() {
		if styled {
			b.WriteString(Reset)
		}
		rows = append(rows, Row{b.String(), used})
		b.Reset()
		used, styled = 0, false
		for _, a := range active {
			b.WriteString(a)
			styled = true
		}
	}
	for i := 0; i < len(s); {
		item, cw, sgr := next(s[i:])
		if cw < 0 {
			i += len(item)
			if sgr {
				b.WriteString(item)
				styled = true
				if isReset(item) {
					active = active[:0]
				} else {
					active = append(active, item)
				}
			}
			continue
		}
		i += len(item)
		if used+cw > w {
			if maxRows > 0 && len(rows)+1 >= maxRows {
				flush()
				return rows, true
			}
			flush()
			if cw > w { // a wide character in a one-cell pane
				item, cw = Ellipsis, 1
			}
		}
		b.WriteString(item)
		used += cw
	}
	flush()
	return rows, false
}

// Strip returns s without escape sequences and control characters.
func Strip(s string) string {
	if !needsClean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		item, cw, _ := next(s[i:])
		i += len(item)
		if cw >= 0 {
			b.WriteString(item)
		}
	}
	return b.String()
}

func needsClean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == 0xc2 {
			return true
		}
	}
	return false
}

// Width returns the display width of s, escape sequences excluded.
// Printable ASCII is counted by its length (most cells of a table are).
func Width(s string) int {
	if printableASCII(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

// printableASCII reports whether s is printable ASCII only: one cell per
// byte.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// Fit returns s cut (with Ellipsis) or padded with spaces to exactly w
// cells. s may hold SGR from lipgloss.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := Width(s)
	if sw > w {
		s, sw = Cut(s, w)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// Center returns s padded on both sides to w cells (cut when wider).
func Center(s string, w int) string {
	sw := Width(s)
	if sw >= w {
		return Fit(s, w)
	}
	left := (w - sw) / 2
	return strings.Repeat(" ", left) + s + strings.Repeat(" ", w-sw-left)
}

// Head returns s cut to at most n bytes at a character boundary: a bound
// on what is cleaned, measured or searched of a text that may be
// megabytes (a message, an activity), so that its cost does not grow with
// the text. Shorter text comes back whole.
func Head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Mark returns plain text with each of spans (byte ranges of text,
// ascending, not overlapping) drawn by mark: how the log pane and the
// search across agents show matches.
func Mark(text string, spans []termtext.Span, mark func(string) string) string {
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(text[at:sp.Start])
		b.WriteString(mark(text[sp.Start:sp.End]))
		at = sp.End
	}
	b.WriteString(text[at:])
	return b.String()
}
