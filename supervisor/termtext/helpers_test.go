package termtext

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// line is one emitted line, copied.
type line struct {
	text  string
	width int
}

// feedChunks feeds the chunks to c, then flushes, and returns every line.
func feedChunks(c *Converter, chunks [][]byte) []line {
	var lines []line
	emit := func(text []byte, w int) { lines = append(lines, line{string(text), w}) }
	for _, ch := range chunks {
		c.Feed(ch, emit)
	}
	c.Flush(emit)
	return lines
}

func texts(lines []line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

// chunkings returns the ways the invariance tests split an input: whole,
// byte by byte, and a few pseudo-random splits derived from seed.
func chunkings(in []byte, seed uint64) map[string][][]byte {
	m := map[string][][]byte{"whole": {in}}
	var bytewise [][]byte
	for i := range in {
		bytewise = append(bytewise, in[i:i+1])
	}
	m["bytewise"] = bytewise
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	for k := range 3 {
		var chunks [][]byte
		for rest := in; len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(1+[]int{3, 17, 300}[k]))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		m[fmt.Sprintf("random%d", k)] = chunks
	}
	return m
}

// convertAll runs in through a fresh converter for each chunking, checks that
// every chunking gives the same lines, checks every line's invariants, and
// returns the lines.
func convertAll(t testing.TB, maxWidth int, plain bool, in string) []line {
	t.Helper()
	return convertAllSeed(t, maxWidth, plain, in, uint64(len(in)))
}

// convertAllSeed is convertAll with the seed of the random chunkings.
func convertAllSeed(t testing.TB, maxWidth int, plain bool, in string, seed uint64) []line {
	t.Helper()
	var want []line
	var wantName string
	names := []string{"whole", "bytewise", "random0", "random1", "random2"}
	ch := chunkings([]byte(in), seed)
	for _, name := range names {
		got := feedChunks(newConverter(maxWidth, plain), ch[name])
		for i, l := range got {
			checkLine(t, fmt.Sprintf("%s line %d", name, i), l, maxWidth, plain)
		}
		if want == nil {
			want, wantName = got, name
			continue
		}
		if !slices.Equal(got, want) {
			t.Fatalf("input %.300q: chunking %s gives\n%.2000v\nbut %s gives\n%.2000v", in, name, got, wantName, want)
		}
	}
	return want
}

// checkLine checks what every emitted line must satisfy.
func checkLine(t testing.TB, where string, l line, maxWidth int, plain bool) {
	t.Helper()
	s := l.text
	if !utf8.ValidString(s) {
		t.Fatalf("%s: invalid UTF-8 in %q", where, s)
	}
	if w := ansi.StringWidth(s); w != l.width {
		t.Fatalf("%s: reported width %d, ansi.StringWidth %d: %q", where, l.width, w, s)
	}
	// tmux (and every terminal that adds up wcwidth per character) must
	// agree: the width of the line is the sum of its characters' own
	// widths (see TestWidthAgreesWithTmux).
	if w := perCharWidth(s); w != l.width {
		t.Fatalf("%s: reported width %d, %d added up per character as tmux does: %q", where, l.width, w, s)
	}
	if l.width > maxWidth {
		t.Fatalf("%s: width %d over the cap %d: %q", where, l.width, maxWidth, s)
	}
	hasSGR := false
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b == ansi.ESC {
			if plain {
				t.Fatalf("%s: ESC in plain output %q", where, s)
			}
			j := i + 1
			if j >= len(s) || s[j] != '[' {
				t.Fatalf("%s: ESC not starting a CSI at %d: %q", where, i, s)
			}
			j++
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
				j++
			}
			if j >= len(s) || s[j] != 'm' {
				t.Fatalf("%s: CSI that is not SGR at %d: %q", where, i, s)
			}
			hasSGR = true
			i = j
			continue
		}
		if b < 0x20 || b == 0x7f {
			t.Fatalf("%s: control byte %#x at %d: %q", where, b, i, s)
		}
	}
	for _, r := range s {
		if r >= 0x80 && r < 0xa0 {
			t.Fatalf("%s: C1 control %U in %q", where, r, s)
		}
	}
	if hasSGR && !strings.HasSuffix(s, "\x1b[m") {
		t.Fatalf("%s: styled line does not end with a reset: %q", where, s)
	}
}

// run converts in with the dashboard defaults and returns the texts.
func run(t testing.TB, in string) []string {
	t.Helper()
	return texts(convertAll(t, DefaultMaxWidth, false, in))
}

func assertLines(t testing.TB, in string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("input %.300q:\n got %.2000q\nwant %.2000q", in, got, want)
	}
}

func ansiWidth(s string) int { return ansi.StringWidth(s) }

// perCharWidth adds up the width of each character of s on its own, SGR
// sequences skipped: the width a terminal that does not measure grapheme
// clusters (tmux) gives s.
func perCharWidth(s string) int {
	w := 0
	for _, r := range ansi.Strip(s) {
		w += ansi.StringWidth(string(r))
	}
	return w
}
