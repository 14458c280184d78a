package termtext

import (
	"bytes"

	"github.com/charmbracelet/x/ansi"
)

// tailBlock is how many bytes newestLines counts at a time from the end.
const tailBlock = 4096

// FeedTail is Feed for a reader that keeps only the newest keep lines, such
// as a bounded scrollback fed a read far larger than it holds. Of the lines
// p completes, emit receives the first (it may end a line begun by an
// earlier Feed) and then the newest lines, in order; skipped lines in
// between, all of which were completed by p, are counted and not built.
// Only those lines are missing: the lines emit receives, their order, and
// the converter's state afterwards are those of Feed(p, emit). When p
// completes fewer than keep+2 lines, or the lines between hold an escape
// sequence (it may change the style of the lines after them), or the newest
// lines hold a DCS string (it may swallow line ends), FeedTail is Feed and
// skipped is 0. Every line end is found in one pass over p at memory speed,
// so a read of a million short lines costs what keep of them cost.
func (c *Converter) FeedTail(p []byte, keep int, emit func(text []byte, width int)) (skipped int) {
	keep = max(keep, 0)
	first := bytes.IndexByte(p, '\n') + 1
	tail := newestLines(p, keep)
	if first == 0 || tail <= first || bytes.IndexByte(p[first:tail], ansi.ESC) >= 0 || hasDCS(p[tail:]) {
		c.Feed(p, emit)
		return 0
	}
	c.Feed(p[:first], emit)
	if c.inSeq {
		// The line end of the first line was swallowed by a DCS string.
		c.Feed(p[first:], emit)
		return 0
	}
	// The first line has ended: the converter is at the start of a line, in
	// the ground state, and p[first:tail] holds only text, line ends and
	// controls that do not outlive their line. Feeding it would emit one
	// line per line end and leave the state as it is now.
	c.Feed(p[tail:], emit)
	return bytes.Count(p[first:tail], []byte{'\n'})
}

// newestLines returns where the newest keep complete lines of p start: just
// after the line end of the line before them; -1 when p completes at most
// keep lines.
func newestLines(p []byte, keep int) int {
	need := keep + 1
	for end := len(p); end > 0; {
		start := max(0, end-tailBlock)
		n := bytes.Count(p[start:end], []byte{'\n'})
		if n < need {
			need -= n
			end = start
			continue
		}
		for i := end - 1; i >= start; i-- {
			if p[i] == '\n' {
				if need--; need == 0 {
					return i + 1
				}
			}
		}
	}
	return -1
}

// hasDCS reports whether p holds the start of a DCS string (ESC P), the
// only escape sequence a line end does not end.
func hasDCS(p []byte) bool {
	for {
		i := bytes.IndexByte(p, ansi.ESC)
		if i < 0 || i == len(p)-1 {
			return false // a P in the next read starts its string after these lines
		}
		if p[i+1] == 'P' {
			return true
		}
		p = p[i+1:]
	}
}
