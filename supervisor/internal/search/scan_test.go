package search

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/termtext"
)

// reference is what a person would find: every line of the log converted
// to its display text, the pattern matched on it.
func reference(t *testing.T, p *Pattern, log []byte) []Hit {
	t.Helper()
	var hits []Hit
	lines := bytes.Split(log, []byte{'\n'})
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		text := strings.TrimSuffix(termtext.Plain(l), "\n")
		if sp, ok := p.Match(text); ok {
			hits = append(hits, Hit{Line: int64(i), Text: text, Span: sp})
		}
	}
	return hits
}

func scanAll(t *testing.T, p *Pattern, log []byte) []Hit {
	t.Helper()
	var hits []Hit
	if err := p.Scan(context.Background(), bytes.NewReader(log), func(h Hit) bool { hits = append(hits, h); return true }); err != nil {
		t.Fatal(err)
	}
	return hits
}

func TestScanFindsWhatThePersonRead(t *testing.T) {
	cases := []struct {
		name, query string
		regex       bool
		log         string
		want        []int64 // line numbers
	}{
		{"plain", "unsafe", false, "ok\nuses unsafe here\nnone\n", []int64{1}},
		{"smart case folds", "unsafe", false, "UNSAFE\nUnSafe\nsafe\n", []int64{0, 1}},
		{"upper case is exact", "Unsafe", false, "UNSAFE\nUnsafe\n", []int64{1}},
		{"SGR inside a word", "unsafe", false, "un\x1b[31msafe\x1b[0m\n", []int64{0}},
		{"carriage return rewrite", "done", false, "50%\r100% done\n", []int64{0}},
		{"text rewritten away", "50%", false, "50%\r100% done\n", nil},
		{"escape sequence is not text", "31m", false, "\x1b[31mred\x1b[0m\n", nil},
		{"crlf line ends", "b", false, "a\r\nb\r\nc\r\n", []int64{1}},
		{"tab shows as spaces", "a  ", false, "a\tb\n", []int64{0}},
		{"soft hyphen dropped", "unsafe", false, "un\u00adsafe\n", []int64{0}},
		{"kelvin sign folds to k", "kb", false, "5\u212aB\n", []int64{0}},
		{"last line without end", "end", false, "a\nthe end", []int64{1}},
		{"no hit", "absent", false, "a\nb\n", nil},
		{"bell removed", "ab", false, "a\x07b\n", []int64{0}},
		{"regex", `un\w+e`, true, "unsafe\nuse\n", []int64{0}},
		{"regex smart case", `^err`, true, "ERROR x\nan err\n", []int64{0}},
		{"regex dollar before crlf", `done$`, true, "all done\r\nno\r\n", []int64{0}},
		{"regex over SGR", `a.c`, true, "a\x1b[1mb\x1b[0mc\n", []int64{0}},
		{"non-ASCII query", "é", false, "CAFÉ\ncafe\n", []int64{0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Compile(c.query, c.regex)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, h := range scanAll(t, p, []byte(c.log)) {
				got = append(got, h.Line)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("lines %v, want %v", got, c.want)
			}
			if ref := reference(t, p, []byte(c.log)); fmt.Sprint(ref) != fmt.Sprint(scanAll(t, p, []byte(c.log))) {
				t.Errorf("scan differs from the display text's: %v", ref)
			}
		})
	}
}

// TestScanAgreesWithDisplayText compares the prefilter and confirm with
// matching every display line, on random logs full of what changes a line
// on screen.
func TestScanAgreesWithDisplayText(t *testing.T) {
	pieces := []string{"a", "b", "A", "B", "ab", "x", " ", "\t", "\n", "\r\n", "\r", "\x1b[31m", "\x1b[0m", "\x1b]0;t\x07",
		"\x07", "\x08", "\x7f", "é", "É", "\u00ad", "\u200d", "\ufe0f", "\u212a", "k", "\u0130", "i", "\xff", "日本", "\u0085", "@", "`", "\u200b", "\u202e"}
	queries := []string{"ab", "a b", "AB", "aB", "k", "i", "é", "É", "日本", "b a", "@", "x"}
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 200; n++ {
		var b strings.Builder
		for k := rng.Intn(60); k > 0; k-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		log := []byte(b.String())
		for _, q := range queries {
			for _, regex := range []bool{false, true} {
				p, err := Compile(q, regex)
				if err != nil {
					t.Fatal(err)
				}
				got, want := scanAll(t, p, log), reference(t, p, log)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("query %q (regex %v) in %q:\n got %v\nwant %v", q, regex, log, got, want)
				}
			}
		}
	}
}

func TestScanLongLinesAndReads(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("first\n")
	b.WriteString(strings.Repeat("x", 3*readSize)) // a line longer than three reads
	b.WriteString("\nthe needle\n")
	for b.Len() < 3*readSize+readSize/2 {
		b.WriteString("filler line\n")
	}
	b.WriteString("needle at the end\n")
	p, _ := Compile("needle", false)
	hits := scanAll(t, p, b.Bytes())
	want := reference(t, p, b.Bytes())
	if len(hits) != 2 || fmt.Sprint(hits) != fmt.Sprint(want) {
		t.Fatalf("hits %v, want %v", hits, want)
	}
	px, _ := Compile("xxx", false)
	if h := scanAll(t, px, b.Bytes()); len(h) != 1 || h[0].Line != 1 {
		t.Fatalf("the long line: %d hits", len(h))
	}
}

func TestScanStops(t *testing.T) {
	p, _ := Compile("a", false)
	n := 0
	err := p.Scan(context.Background(), strings.NewReader("a\na\na\n"), func(Hit) bool { n++; return n < 2 })
	if err != nil || n != 2 {
		t.Fatalf("n %d err %v", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Scan(ctx, strings.NewReader("a\n"), func(Hit) bool { return true }); err != context.Canceled {
		t.Fatalf("a cancelled scan: %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	if _, err := Compile("(", true); err == nil || err.Error() != `bad regular expression "(": missing closing ): `+"`(`" {
		t.Fatalf("bad regex: %v", err)
	}
	if _, err := Compile("", false); err == nil {
		t.Fatal("an empty query compiled")
	}
}

func TestCandidateOfJSON(t *testing.T) {
	cases := []struct {
		query, log string
		want       bool
	}{
		{`say "hi"`, `{"text":"say \"hi\""}` + "\n", true},
		{"absent", `{"text":"nothing"}` + "\n", false},
		{"red", `{"text":"\u001b[31mred"}` + "\n", true},
		{"x", `{"text":"\u00e9"}` + "\n", true}, // an escape may hide anything
		// the transcript view adds marks and words around the fields
		{"✓ result · 38.3k in", `{"type":"x"}` + "\n", true},
		{"↳ linux", `{"content":"Linux"}` + "\n", true},
		{"↳ linux", `{"content":"Darwin"}` + "\n", false},
		{"thinking…", `{"type":"x"}` + "\n", true},
		{"Bash  uname -s", `{"name":"Bash","input":{"command":"uname -s"}}` + "\n", true},
	}
	for _, c := range cases {
		p, _ := Compile(c.query, false)
		got, err := p.Candidate(context.Background(), strings.NewReader(c.log))
		if err != nil || got != c.want {
			t.Errorf("%q in %s: %v %v, want %v", c.query, c.log, got, err, c.want)
		}
	}
}

// ScanFrom numbers a part's lines from its first and counts them, a last
// line without its end counted when it shows: parts of a capped log.
func TestScanFromCountsLines(t *testing.T) {
	p, _ := Compile("x", false)
	for _, c := range []struct {
		part string
		want int64
	}{{"a\nb\n", 2}, {"a\nx", 2}, {"a\n\x1b[0m", 1}, {"", 0}} {
		var lines []int64
		n, err := p.ScanFrom(context.Background(), strings.NewReader(c.part), 10, func(h Hit) bool { lines = append(lines, h.Line); return true })
		if err != nil || n != c.want {
			t.Errorf("%q: %d lines %v, want %d", c.part, n, err, c.want)
		}
		if c.part == "a\nx" && (len(lines) != 1 || lines[0] != 11) {
			t.Errorf("hit lines %v, want [11]", lines)
		}
	}
}
