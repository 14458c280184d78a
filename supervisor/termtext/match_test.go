package termtext

import (
	"strings"
	"testing"
)

// marked returns s with every span of m's matches in brackets.
func marked(m Matcher, s string) string {
	var b strings.Builder
	at := 0
	for _, sp := range m.Spans(s) {
		b.WriteString(s[at:sp.Start] + "[" + s[sp.Start:sp.End] + "]")
		at = sp.End
	}
	return b.String() + s[at:]
}

func TestMatcherSmartCase(t *testing.T) {
	for _, c := range []struct{ query, text, want string }{
		{"fé", "CAFÉ au lait, café noir", "CA[FÉ] au lait, ca[fé] noir"}, // the letters of the text fold, not only ASCII
		{"Fé", "CAFÉ au lait, café noir, Fé", "CAFÉ au lait, café noir, [Fé]"},
		{"line", "Line 1 LINE line", "[Line] 1 [LINE] [line]"},
		{"Line", "Line 1 LINE line", "[Line] 1 LINE line"},
		{"aa", "aaaa aaa", "[aa][aa] [aa]a"},
		{"k", "\u212a KELVIN", "[\u212a] [K]ELVIN"}, // KELVIN SIGN, 3 bytes, folds to "k", 1 byte
		{"i", "\u0130stanbul", "[\u0130]stanbul"},   // İ folds to "i"
		{"ω", "\u2126 Ω ω", "[\u2126] [Ω] [ω]"},     // OHM SIGN folds to ω
		{"é", "\xff É \xfeé", "\xff [É] \xfe[é]"},   // invalid bytes keep their places
		{"x", "no match here", "no match here"},
		{"", "anything", "anything"},
	} {
		if got := marked(NewMatcher(c.query), c.text); got != c.want {
			t.Errorf("%q in %q: %q, want %q", c.query, c.text, got, c.want)
		}
	}
}

func TestMatcherMatchAndIndexAgreeWithSpans(t *testing.T) {
	texts := []string{"CAFÉ", "café", "Café", "cafe", "", "\u212aELVIN", "ÉÉÉ"}
	for _, q := range []string{"é", "É", "fé", "kelvin", "éé", ""} {
		m := NewMatcher(q)
		for _, s := range texts {
			spans := m.Spans(s)
			sp, ok := m.Index(s)
			if ok != (len(spans) > 0) || ok && sp != spans[0] {
				t.Errorf("%q in %q: Index %v %v, Spans %v", q, s, sp, ok, spans)
			}
			if m.Match(s) != (ok || q == "") {
				t.Errorf("%q in %q: Match %v, Spans %v", q, s, m.Match(s), spans)
			}
		}
	}
	if m := NewMatcher("Fé"); m.Query() != "Fé" {
		t.Errorf("Query = %q", m.Query())
	}
}

// TestMatcherPlainASCIIAllocatesNothing: a lower-case query over a line
// without upper-case letters (most lines of output) costs no allocation.
func TestMatcherPlainASCIIAllocatesNothing(t *testing.T) {
	m := NewMatcher("needle")
	line := strings.Repeat("hay ", 30) + "needle"
	if n := testing.AllocsPerRun(100, func() { _, _ = m.Index(line) }); n != 0 {
		t.Errorf("Index allocates %v times per call", n)
	}
}
