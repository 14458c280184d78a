package termtext

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// tokens are pieces that exercise the hard cases together: clusters that
// grow (combining marks, variation selectors, ZWJ sequences, flags, prepended
// marks), wide characters, overwrites, erases, tabs, styles, strings,
// invalid bytes, and runs long enough to be cut.
var tokens = []string{
	"a", "Z", " ", "0123456789", "\n", "\r", "\r\n", "\t",
	"漢", "字", "e\u0301", "\u0301", "\u0301\u0301\u0301", "#", "\ufe0f", "\u20e3", "\ufe0e", "\u231a",
	"\u200d", "\U0001F468", "\U0001F469", "\U0001F1FA", "\U0001F1F8", "\u0600", "\u0d4e", "\u0903",
	"\u093f", "\u0915\u094d", "\u1100", "\u1161", "\u11a8", "\u200b", "\uFFFD", "\u0085",
	"\xe2", "\x82", "\xac", "\xff", "\xc0\xaf", "\x9b",
	"\x1b[31m", "\x1b[0m", "\x1b[m", "\x1b[1;4:3;38;2;1;2;3m", "\x1b[7m", "\x1b[", "\x1b",
	"\x1b[K", "\x1b[1K", "\x1b[2K", "\x1b[2J", "\x1b[5;5H", "\x1b[?25l", "\x1bc",
	"\x1b]0;title\a", "\x1b]8;;u\x1b\\", "\x1b]0;x", "\x1bP1;2q#0~~", "\x1b\\", "\x1b_G;A",
	"\x00", "\b", "\a", "\x7f",
}

func randomInput(r *rand.Rand) string {
	var sb strings.Builder
	for range r.IntN(60) {
		t := tokens[r.IntN(len(tokens))]
		for range 1 + r.IntN(3)*r.IntN(3)*r.IntN(8) {
			sb.WriteString(t)
		}
	}
	return sb.String()
}

// TestRandomTokens runs random token strings through every chunking with a
// small width cap and checks the invariants FuzzConverter checks.
func TestRandomTokens(t *testing.T) {
	n := randIters
	if testing.Short() {
		n = 300
	}
	r := rand.New(rand.NewPCG(randSeed, 11))
	for i := range int(n) {
		in := randomInput(r)
		plain := i%4 == 0
		convertAllSeed(t, 80, plain, in, uint64(i))
		c := newConverter(80, plain)
		c.Feed([]byte(in), func([]byte, int) {})
		text, _, _ := c.Partial()
		partial := string(text)
		var flushed string
		c.Flush(func(text []byte, _ int) { flushed = string(text) })
		if flushed != partial {
			t.Fatalf("%q: Partial %q, Flush %q", in, partial, flushed)
		}
	}
}

// randSeed and randIters can be raised for a long local run.
var randSeed, randIters uint64 = 7, 3000
