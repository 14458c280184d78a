package termtext

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzConverter checks, for any input: no panic; every line holds no control
// byte and no escape sequence other than SGR, ends with a reset when styled,
// and its reported width equals ansi.StringWidth and stays within the cap;
// whole, byte-by-byte and random chunkings give the same lines; Partial
// renders what Flush then emits; Plain and WritePlain hold no ESC at all.
func FuzzConverter(f *testing.F) {
	for _, in := range []string{h01, h02, h03, h04, h06, h07, h08, h05[199990:], "\x1b]0;" + h08} {
		f.Add([]byte(in), uint64(1))
	}
	for _, tc := range ruleCases {
		f.Add([]byte(tc.in), uint64(len(tc.in)))
	}
	f.Add([]byte(strings.Repeat("漢e\u0301\t", 30)+"\r\x1b[1mX\x1b[K"), uint64(7))
	f.Add([]byte("#\ufe0f\u20e3 \U0001F468\u200d\U0001F469\u200d\U0001F467 \u0600a \u231a\ufe0e\r\u0903x"), uint64(3))

	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		const width = 80 // small, so cuts happen; leaves 20 cells of text
		convertAllSeed(t, width, false, string(data), seed)

		// Partial before Flush is exactly what Flush emits.
		c := newConverter(width, false)
		c.Feed(data, func([]byte, int) {})
		text, w, ok := c.Partial()
		partial := string(text)
		if ok {
			checkLine(t, "partial", line{partial, w}, width, false)
		}
		var flushed string
		c.Flush(func(text []byte, _ int) { flushed = string(text) })
		if flushed != partial {
			t.Fatalf("Partial %q, Flush %q", partial, flushed)
		}

		plain := Plain(data)
		if strings.ContainsRune(plain, 0x1b) {
			t.Fatalf("ESC in Plain output %q", plain)
		}
		for _, l := range strings.Split(plain, "\n") {
			checkLine(t, "plain", line{l, ansiWidth(l)}, DefaultMaxWidth, true)
		}
		var sb strings.Builder
		if err := WritePlain(&sb, bytes.NewReader(data)); err != nil || sb.String() != plain {
			t.Fatalf("WritePlain = %q, %v; Plain = %q", sb.String(), err, plain)
		}
		sb.Reset()
		if err := WriteLines(&sb, bytes.NewReader(data), true); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(sb.String(), "\n") {
			checkLine(t, "WriteLines", line{l, ansiWidth(l)}, DefaultMaxWidth, false)
		}
	})
}

// TestWriteLinesKeepsOnlySGR: what the pager gets. Colours stay, reset at
// each line end and set again on the next line; a title (OSC 0) and mouse
// reporting (DECSET 1000) never reach the terminal.
func TestWriteLinesKeepsOnlySGR(t *testing.T) {
	in := "\x1b[31mred\nstill\x1b[0m plain\n\x1b]0;PWNED\x07\x1b[?1000hX\n"
	var sb strings.Builder
	if err := WriteLines(&sb, strings.NewReader(in), true); err != nil {
		t.Fatal(err)
	}
	if want := "\x1b[31mred\x1b[m\n\x1b[31mstill\x1b[m plain\x1b[m\nX\n"; sb.String() != want {
		t.Fatalf("WriteLines = %q, want %q", sb.String(), want)
	}
}
