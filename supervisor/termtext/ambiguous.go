package termtext

import "strings"

// widthAmbiguous reports the code points that make terminals disagree on the
// width of an emoji sequence: variation selectors 15 and 16 (U+FE0E,
// U+FE0F), the zero-width joiner (U+200D), the skin tone modifiers
// (U+1F3FB–U+1F3FF) and tag characters (U+E0020–U+E007F). A terminal that
// measures grapheme clusters (kitty, WezTerm, Ghostty with mode 2027) draws
// "⚠️" (U+26A0 U+FE0F) two cells wide and "👍🏽" two; one that adds up
// wcwidth per code point (tmux, xterm, most others) draws them one and four
// cells wide. Whichever a dashboard assumes, the other moves every border
// after it. Without these code points each character has the same width in
// both models ("⚠" one cell, "👍" two, "👨👩👧" six), so they are dropped
// from display text; the log file keeps every byte.
func widthAmbiguous(r rune) bool {
	switch {
	case r == 0xFE0E, r == 0xFE0F, r == 0x200D:
		return true
	case r >= 0x1F3FB && r <= 0x1F3FF:
		return true
	case r >= 0xE0020 && r <= 0xE007F:
		return true
	}
	return false
}

// DropAmbiguous returns s without the code points whose width terminals
// disagree on (see widthAmbiguous), for text shown outside the log pane
// such as messages in the agents table and the input line. It returns s
// itself when there are none.
func DropAmbiguous(s string) string {
	i := strings.IndexFunc(s, widthAmbiguous)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if !widthAmbiguous(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
