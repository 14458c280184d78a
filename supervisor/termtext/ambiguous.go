package termtext

import (
	"strings"
	"unicode"
)

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
//
// Every variation selector goes (U+FE00–U+FE0F, U+E0100–U+E01EF): they
// only pick a glyph variant, and tmux widens some characters they follow.
//
// The same two models disagree on characters that join the character
// before or after them into one grapheme but have a width of their own in
// wcwidth (measured against tmux 3.3a, see TestWidthAgreesWithTmux):
// spacing combining marks (category Mc, e.g. U+0903, one cell in tmux,
// none in a cluster), prepended concatenation marks (U+0600–U+0605,
// U+06DD, U+070F, U+0890–U+0891, U+08E2, U+110BD, U+110CD: one cell in
// tmux), the soft hyphen U+00AD (one cell in tmux, none in a cluster) and
// the conjoining Hangul jamo U+1100–U+11FF, U+A960–U+A97F, U+D7B0–U+D7FF
// (tmux adds up two cells per leading jamo and none per vowel or trailing
// one; a cluster of them, or of a leading jamo and a syllable, is two).
// They are dropped too; precomposed Hangul syllables are kept.
func widthAmbiguous(r rune) bool {
	switch {
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF, r == 0x200D, r == 0xAD:
		return true
	case r >= 0x1F3FB && r <= 0x1F3FF:
		return true
	case r >= 0xE0020 && r <= 0xE007F:
		return true
	case r >= 0x1100 && r <= 0x11FF, r >= 0xA960 && r <= 0xA97F, r >= 0xD7B0 && r <= 0xD7FF:
		return true
	case r >= 0x600 && r <= 0x605, r == 0x6DD, r == 0x70F, r == 0x890, r == 0x891, r == 0x8E2, r == 0x110BD, r == 0x110CD:
		return true
	case r == 0xD4E, r == 0x111C2, r == 0x111C3, r == 0x1193F, r == 0x11941, r == 0x11A3A, r >= 0x11A84 && r <= 0x11A89, r == 0x11D46, r == 0x11F02:
		return true // the other prepended letters (Grapheme_Cluster_Break=Prepend)
	case r >= 0x900 && unicode.Is(unicode.Mc, r):
		return true
	case isLinker(r):
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

// isLinker reports the viramas, which join the consonants around them into
// one grapheme (Indic_Conjunct_Break=Linker, and more in newer Unicode
// versions than the terminal's or ours): "क्क" is
// one cluster, one cell wide, in a terminal that measures clusters, and
// two in tmux, which adds up its characters.
func isLinker(r rune) bool {
	switch r {
	case 0x94D, 0x9CD, 0xA4D, 0xACD, 0xB4D, 0xBCD, 0xC4D, 0xCCD, 0xD3B, 0xD3C, 0xD4D, 0xDCA,
		0xE3A, 0xEBA, 0xF84, 0x1039, 0x103A, 0x1714, 0x1734, 0x17D2, 0x1A60, 0x1B44, 0x1BAA,
		0x1BAB, 0x1BF2, 0x1BF3, 0x2D7F, 0xA806, 0xA8C4, 0xA953, 0xA9C0, 0xAAF6, 0xABED,
		0x10A3F, 0x11046, 0x11070, 0x1107F, 0x110B9, 0x11133, 0x11134, 0x111C0, 0x11235,
		0x112EA, 0x1134D, 0x11442, 0x114C2, 0x115BF, 0x1163F, 0x116B6, 0x1172B, 0x11839,
		0x1193D, 0x1193E, 0x119E0, 0x11A34, 0x11A47, 0x11A99, 0x11C3F, 0x11D44, 0x11D45,
		0x11D97, 0x11F41, 0x11F42:
		return true
	}
	return false
}

// isRegional reports the regional indicators U+1F1E6–U+1F1FF, two of
// which make a flag. Terminals disagree on the width of one and of a pair
// (a flag is one grapheme of two cells where clusters are measured, two
// characters of two cells each in tmux), so display text draws each as
// its letter (regionalLetter), whose width they agree on.
func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// regionalLetter is the capital letter the regional indicator r stands
// for ("U", "S" for the flag of the United States).
func regionalLetter(r rune) byte { return byte('A' + r - 0x1F1E6) }

// Invisible reports the format characters that change what text means or
// how it reads without a cell of their own (SPEC §5): the bidirectional
// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and
// marks (U+200E, U+200F, U+061C), which can make a line read otherwise than
// its bytes ("Trojan Source"), the zero-width space U+200B, the word joiner
// and invisible operators U+2060–U+2064 and the byte order mark U+FEFF. The
// log pane and every one-line text show each as U+FFFD, as invalid UTF-8,
// so that what an agent wrote is seen, not hidden; the log file keeps the
// bytes. The zero-width non-joiner U+200C stays: Persian and Indic text
// need it.
func Invisible(r rune) bool {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200B, r == 0x200E, r == 0x200F, r == 0x061C, r == 0xFEFF:
		return true
	case r >= 0x2060 && r <= 0x2064:
		return true
	}
	return false
}

// Dropped reports whether display text leaves r out (see widthAmbiguous):
// a raw line holding one may show a text its bytes do not hold (the
// search's prefilter, supervisor/internal/search).
func Dropped(r rune) bool { return widthAmbiguous(r) }
