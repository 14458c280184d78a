package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// OneLineMaxRead is how many bytes of its text OneLine reads at most when
// it is given a limit: a message of megabytes costs no more than a short
// one, however many escape sequences or spaces its start holds.
const OneLineMaxRead = 64 << 10

// OneLine returns s as one line of at most n characters (runes; n < 1 means
// no limit) that is safe to draw in the dashboard, to send inside an escape
// sequence (a desktop notification) and to put in an environment variable.
// It is the one cleaner of text that comes from outside (a message, an
// error, a summary an agent CLI reported) for a single line:
//
//   - escape sequences (CSI, OSC, DCS, SOS, PM, APC, a two-byte ESC
//     sequence) are removed whole, as from an agent's output (SPEC §5): no
//     "[31m" is left as text;
//   - other control characters (C0, DEL, C1, NEL included) are removed, as
//     in the log pane; invalid UTF-8 and the invisible format characters
//     (Invisible: bidi controls, U+200B, U+FEFF) become U+FFFD, as there;
//   - every run of white space (line breaks and tabs included) becomes one
//     space, and no space leads or trails;
//   - the code points terminals disagree on the width of are dropped (see
//     DropAmbiguous) and a regional indicator is its letter, as in the log
//     pane, so the line takes the cells the dashboard counts.
//
// With a limit, a longer line is cut to n characters, the last one "…",
// and "…" also ends a line whose text went on past the OneLineMaxRead
// bytes read. OneLine returns s itself when it is already such a line.
func OneLine(s string, n int) string {
	if isOneLine(s, n) {
		return s
	}
	limit := len(s)
	if n > 0 && limit > OneLineMaxRead {
		limit = OneLineMaxRead
		for limit > 0 && !utf8.RuneStart(s[limit]) {
			limit--
		}
	}
	out := make([]rune, 0, min(limit, max(n, 0)+1))
	space := false
	i := 0
	for i < limit && (n < 1 || len(out) <= n) {
		c := s[i]
		if c == 0x1b {
			_, _, w, _ := ansi.DecodeSequence(s[i:limit], ansi.NormalState, nil)
			i += max(w, 1)
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:limit])
		i += w
		switch {
		case unicode.IsSpace(r) && (r < 0x80 || r > 0x9f):
			space = len(out) > 0
			continue
		case r == utf8.RuneError && w <= 1:
			// invalid UTF-8, as the log pane shows it
		case Invisible(r):
			r = utf8.RuneError // seen, as in the log pane
		case unicode.IsControl(r), widthAmbiguous(r):
			continue
		case isRegional(r):
			r = rune(regionalLetter(r)) // as in the log pane
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
	}
	more := i < len(s) && strings.TrimSpace(s[i:]) != ""
	switch {
	case n < 1:
	case len(out) > n || more && len(out) == n:
		out = append(out[:n-1], '…')
	case more && len(out) > 0:
		out = append(out, '…')
	}
	return string(out)
}

// isOneLine reports whether s is printable ASCII with single spaces inside,
// at most n bytes long when n > 0: what OneLine would return unchanged.
func isOneLine(s string, n int) bool {
	if n > 0 && len(s) > n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			if i == 0 || i == len(s)-1 || s[i-1] == ' ' {
				return false
			}
			continue
		}
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// ShortIDLen is how many characters of an agent id the dashboard, the
// notifications and the notes show.
const ShortIDLen = 8

// ShortID returns the short form of an agent id: its first ShortIDLen
// characters (the whole id when shorter). SPEC §6 lets a unique prefix of
// at least 4 characters name the agent.
func ShortID(id string) string {
	if len(id) > ShortIDLen {
		return id[:ShortIDLen]
	}
	return id
}

// FirstLine returns the first line of s with text in it as OneLine makes
// it, at most n runes (n < 1: no limit); "" when no line has text.
func FirstLine(s string, n int) string {
	for s != "" {
		line, rest, _ := strings.Cut(s, "\n")
		if l := OneLine(line, n); l != "" {
			return l
		}
		s = rest
	}
	return ""
}

// LastLine returns the last line of s with text in it as OneLine makes
// it, at most n runes (n < 1: no limit); "" when no line has text. It
// reads s from its end: the cost is that of the lines after the one it
// returns, not of s.
func LastLine(s string, n int) string {
	for s != "" {
		i := strings.LastIndexByte(s, '\n')
		if l := OneLine(s[i+1:], n); l != "" {
			return l
		}
		if i < 0 {
			return ""
		}
		s = s[:i]
	}
	return ""
}
