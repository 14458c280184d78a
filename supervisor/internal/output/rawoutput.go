package output

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/termtext"
)

// What an Output keeps of the raw bytes besides the log file: the tail of
// each stream, for last_output (SPEC §4), and the raw lines handed to a
// structured agent's transcript (SPEC §8).

const (
	// tailKeep is how many raw bytes of each stream are kept for last_output.
	tailKeep = 32 << 10
	// maxLastOutput is the length cap of last_output in characters (SPEC §4).
	maxLastOutput = 2000
	// truncatedMarker starts a cut last_output (SPEC §4).
	truncatedMarker = "...[truncated]"
)

// keepTail keeps the last tailKeep raw bytes of stream s.
func (o *Output) keepTail(s runner.Stream, p []byte) {
	t := o.tail[s]
	if len(p) >= tailKeep {
		t = append(t[:0], p[len(p)-tailKeep:]...)
	} else {
		if len(t)+len(p) > 2*tailKeep {
			n := copy(t, t[len(t)-(tailKeep-len(p)):])
			t = t[:n]
		}
		t = append(t, p...)
	}
	o.tail[s] = t
}

// splitRaw hands the complete raw lines of stream s to lineHook. A line
// longer than maxRawLine is handed on cut at that size.
func (o *Output) splitRaw(s runner.Stream, p []byte) {
	const maxRawLine = 16 << 20
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(o.rawLine[s])+len(p) > maxRawLine {
				o.lineHook(s, append(o.rawLine[s], p...))
				o.rawLine[s] = o.rawLine[s][:0]
				return
			}
			o.rawLine[s] = append(o.rawLine[s], p...)
			return
		}
		line := p[:i]
		if len(o.rawLine[s]) > 0 {
			o.rawLine[s] = append(o.rawLine[s], line...)
			line = o.rawLine[s]
		}
		o.lineHook(s, trimCR(line))
		o.rawLine[s] = o.rawLine[s][:0]
		p = p[i+1:]
	}
}

// LastOutput builds last_output (SPEC §4): the tail of stdout and, after a
// blank line and "stderr:", the tail of stderr, escape sequences removed, at
// most 2000 characters (maxLastOutput), "...[truncated]" opening each part
// that was cut. Call it before Release.
func (o *Output) LastOutput() string { return o.tails(true) }

// StderrOutput is last_output made of the stderr tail alone (SPEC §8: where
// a CLI with structured output that failed before its first event says
// why).
func (o *Output) StderrOutput() string { return o.tails(false) }

// LastOutputOf is last_output made of text alone (SPEC §8: a structured
// submission's final answer), cut as LastOutput cuts.
func LastOutputOf(text string) string { return composeLastOutput(text, "", false, false) }

// SplitLastOutput returns the stdout and the stderr parts of a
// last_output that LastOutput, StderrOutput or LastOutputOf made (SPEC
// §4: the stdout tail, then a blank line, "stderr:" and the stderr tail),
// each with its truncatedMarker if it was cut. A stdout part that itself
// holds a blank line and "stderr:" is split at the last one.
func SplitLastOutput(s string) (stdout, stderr string) {
	if rest, ok := strings.CutPrefix(s, "stderr:\n"); ok {
		return "", rest
	}
	if i := strings.LastIndex(s, "\n\nstderr:\n"); i >= 0 {
		return s[:i], s[i+len("\n\nstderr:\n"):]
	}
	return s, ""
}

func (o *Output) tails(withStdout bool) string {
	o.feedMu.Lock()
	var out string
	outCut, errCut := false, len(o.tail[runner.Stderr]) >= tailKeep
	if withStdout {
		out = strings.TrimRight(termtext.Plain(o.tail[runner.Stdout]), " \t\r\n")
		outCut = len(o.tail[runner.Stdout]) >= tailKeep
	}
	errText := strings.TrimRight(termtext.Plain(o.tail[runner.Stderr]), " \t\r\n")
	o.feedMu.Unlock()
	return composeLastOutput(out, errText, outCut, errCut)
}

// composeLastOutput joins the stdout part out and the stderr part errText
// of last_output within maxLastOutput characters, each part keeping its
// tail. A part is cut when its raw tail already was (outCut, errCut) or
// when it does not fit; a cut part starts with truncatedMarker, so the
// marker stands where the cut is: before the stdout part, or after
// "stderr:" (SPEC §4). Stdout gets at least half the room when it needs
// it, stderr what is left.
func composeLastOutput(out, errText string, outCut, errCut bool) string {
	outN, errN := utf8.RuneCountInString(out), utf8.RuneCountInString(errText)
	if outN == 0 && errN == 0 {
		return ""
	}
	sep := ""
	switch {
	case errN > 0 && outN > 0:
		sep = "\n\nstderr:\n"
	case errN > 0:
		sep = "stderr:\n"
	}
	avail := maxLastOutput - len(sep)
	marker := utf8.RuneCountInString(truncatedMarker)
	split := func(room int) (int, int) {
		qo := min(outN, max(room/2, room-errN))
		return qo, min(errN, room-qo)
	}
	qo, qe := split(avail)
	// A marker takes room, which may cut the other part too: settle.
	for i := 0; i < 3; i++ {
		outCut, errCut = outCut || qo < outN, errCut || qe < errN
		room := avail
		if outCut {
			room -= marker
		}
		if errCut {
			room -= marker
		}
		qo, qe = split(room)
	}
	var b strings.Builder
	if outN > 0 {
		if outCut {
			b.WriteString(truncatedMarker)
		}
		b.WriteString(tailRunes(out, qo))
	}
	b.WriteString(sep)
	if errN > 0 {
		if errCut {
			b.WriteString(truncatedMarker)
		}
		b.WriteString(tailRunes(errText, qe))
	}
	return b.String()
}

// tailRunes returns the last n characters of s.
func tailRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	count := 0
	for i := len(s); i > 0; {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
		count++
		if count == n {
			return s[i:]
		}
	}
	return s
}

// FlushRawLines hands a pending unterminated raw line of each stream to
// Options.RawLine, so that a structured submission's outcome is known
// before the pipes are closed (its main process ended while others still
// hold them).
func (o *Output) FlushRawLines() {
	o.feedMu.Lock()
	defer o.feedMu.Unlock()
	o.flushRawLinesLocked()
}

func (o *Output) flushRawLinesLocked() {
	for s := runner.Stdout; s <= runner.Stderr; s++ {
		if o.lineHook != nil && len(o.rawLine[s]) > 0 {
			o.lineHook(s, trimCR(o.rawLine[s]))
			o.rawLine[s] = o.rawLine[s][:0]
		}
	}
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
