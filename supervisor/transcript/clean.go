package transcript

import (
	"strings"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/termtext"
)

// maxCleanBytes bounds how much of a string plainPrefix reads for a line
// of tool output, of which a few hundred characters are kept (a one-line
// summary reads termtext.OneLineMaxRead).
const maxCleanBytes = 64 << 10

// plain returns text an agent CLI reported as the dashboard draws it
// (termtext): escape sequences (CSI, OSC, DCS, SOS, PM, APC, two-byte ESC)
// removed whole, other control characters removed, "\r" overwriting the
// line as on a terminal, tabs expanded to 8-column stops and the code points
// terminals disagree on the width of dropped; "\n" is kept. Every
// multi-line string an entry holds goes through it before it is cut, and
// every one-line field through termtext.OneLine, so no cut or collapse can
// leave the tail of a sequence ("[?1000h") as text. It returns s itself
// when s holds only printable ASCII and newlines.
func plain(s string) string {
	if !needsPlain(s) {
		return s
	}
	// termtext.WritePlain reads 32 KiB at a time, which keeps a long line
	// full of sequences linear; termtext.Plain takes it in one piece.
	var b strings.Builder
	b.Grow(len(s))
	_ = termtext.WritePlain(&b, strings.NewReader(s)) // neither side fails
	return b.String()
}

// plainPrefix returns plain of the first maxCleanBytes of s (cut at a
// character boundary; a sequence cut there is dropped) and whether s was
// longer.
func plainPrefix(s string) (string, bool) {
	if len(s) <= maxCleanBytes {
		return plain(s), false
	}
	n := maxCleanBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return plain(s[:n]), true
}

func needsPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n') || c >= 0x7f {
			return true
		}
	}
	return false
}
