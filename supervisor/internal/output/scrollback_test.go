package output

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
)

// feedLines feeds n numbered lines "0".."n-1" to a fresh output in one chunk
// per call of chunks, and returns its scrollback window.
func feedLines(t *testing.T, maxLines int, chunks ...int) ([]string, int64, int64) {
	t.Helper()
	o := New(Options{MaxLines: maxLines})
	next := 0
	for _, n := range chunks {
		var b []byte
		for i := 0; i < n; i++ {
			b = strconv.AppendInt(b, int64(next), 10)
			b = append(b, '\n')
			next++
		}
		o.Feed(runner.Stdout, b)
	}
	first, total, lines, _ := o.Window(0, 1<<30)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Text
	}
	return out, first, total
}

func TestScrollbackKeepsNewestLinesWhenAChunkHoldsMore(t *testing.T) {
	for _, chunks := range [][]int{{25}, {3, 25}, {10, 11}, {11}, {12}, {9, 1, 30, 2}} {
		total := 0
		for _, n := range chunks {
			total += n
		}
		got, first, end := feedLines(t, 10, chunks...)
		if end != int64(total) || first != int64(total-10) || len(got) != 10 {
			t.Fatalf("chunks %v: window [%d,%d) with %d lines", chunks, first, end, len(got))
		}
		for i, l := range got {
			if l != strconv.Itoa(total-10+i) {
				t.Fatalf("chunks %v: line %d = %q, want %d", chunks, i, l, total-10+i)
			}
		}
	}
}

func TestPartialLineIsCompletedInPlace(t *testing.T) {
	o := New(Options{MaxLines: 10})
	o.Feed(runner.Stdout, []byte("a\npart"))
	o.Feed(runner.Stderr, []byte("err line\n"))
	o.Feed(runner.Stdout, []byte("ial\n"))
	_, _, lines, _ := o.Window(0, 10)
	got := []string{}
	for _, l := range lines {
		got = append(got, l.Text)
	}
	if len(got) != 3 || got[0] != "a" || got[1] != "partial" || got[2] != "err line" || lines[1].Partial || !lines[2].Stderr {
		t.Fatalf("lines = %q", got)
	}
}

// TestFloodKeepsLinesRightAcrossReusedBlocks: reads far larger than the
// scrollback (the converter skips most of their lines and the text blocks
// of dropped lines are reused), each followed by a small read that drops
// few lines, keep the newest lines, numbered from the first line ever
// printed, with their own text; lines a reader was given earlier do not
// change when the blocks they came from are reused; and the blocks held
// stay bounded.
func TestFloodKeepsLinesRightAcrossReusedBlocks(t *testing.T) {
	const keep = 1000
	o := New(Options{MaxLines: keep})
	text := func(n int) string { return "line " + strconv.Itoa(n) + " of the flood" + strings.Repeat(".", n%97) }
	next := 0               // absolute number of the partial line after each read
	ended := map[int]bool{} // lines that were partial at the end of a read
	var earlier []proto.Line
	var earlierWant []string
	for read := 0; read < 80; read++ {
		var b []byte
		if read > 0 {
			b = append(b, " ends\n"...) // ends the partial line of the read before
			ended[next] = true
			next++
		}
		count := 300 // drops a few lines; the blocks of the rest must stay
		if read%5 == 0 {
			count = 3000 + read*7
		}
		for i := 0; i < count; i++ {
			b = append(b, text(next)+"\n"...)
			next++
		}
		b = append(b, text(next)...)
		o.Feed(runner.Stdout, b)
		first, total, lines, _ := o.Window(0, 1<<30)
		if total != int64(next+1) || first != total-keep || len(lines) != keep {
			t.Fatalf("read %d: window [%d,%d) with %d lines, want [%d,%d) with %d", read, first, total, len(lines), next+1-keep, next+1, keep)
		}
		for i, l := range lines {
			n := int(first) + i
			want := text(n)
			if ended[n] {
				want += " ends"
			}
			if l.Text != want || l.Partial != (i == keep-1) {
				t.Fatalf("read %d: line %d = %q (partial %v), want %q", read, n, l.Text, l.Partial, want)
			}
		}
		for i, l := range earlier {
			if l.Text != earlierWant[i] {
				t.Fatalf("read %d: a line handed out at read 5 changed from %q to %q", read, earlierWant[i], l.Text)
			}
		}
		if read == 5 {
			earlier = lines
			for _, l := range lines {
				earlierWant = append(earlierWant, string([]byte(l.Text)))
			}
		}
	}
	if held := len(o.text.used) + len(o.text.spare); held > 2*(keep*80/textBlockSize+2)+maxSpareBlocks {
		t.Fatalf("%d text blocks held for %d lines of about 80 bytes", held, keep)
	}
}

// TestReadBackKeepsTheNewestLines: a log far larger than the scrollback,
// read back from its file, shows the same newest lines, numbered the same,
// as the output that was fed it as it came, in small reads.
func TestReadBackKeepsTheNewestLines(t *testing.T) {
	const keep = 1000
	var log []byte
	for i := 0; i < 3*readBackBuf/20; i++ {
		log = append(log, "line "+strconv.Itoa(i)+"\n"...)
		switch i {
		case 7:
			log = append(log, "\x1b[1mbold\x1b[m\n"...)
		case 80000: // in the first read; the lines of the second, skipped or not, are bold
			log = append(log, "\x1b[1mbold from here\n"...)
		}
	}
	log = append(log, "no line end"...)
	path := filepath.Join(t.TempDir(), "1.log")
	if err := os.WriteFile(path, log, 0o600); err != nil {
		t.Fatal(err)
	}
	fed := New(Options{MaxLines: keep})
	for p := log; len(p) > 0; p = p[min(len(p), 4096):] {
		fed.Feed(runner.Stdout, p[:min(len(p), 4096)])
	}
	_ = fed.Finish()
	wantFirst, wantTotal, want, _ := fed.Window(0, keep)
	o := Restored(nil)
	if err := o.Reload(path, keep); err != nil {
		t.Fatal(err)
	}
	first, total, got, _ := o.Window(0, keep)
	if first != wantFirst || total != wantTotal || len(got) != len(want) {
		t.Fatalf("read back [%d,%d) with %d lines, fed [%d,%d) with %d", first, total, len(got), wantFirst, wantTotal, len(want))
	}
	for i := range got {
		if got[i].Text != want[i].Text || got[i].Width != want[i].Width {
			t.Fatalf("line %d read back %q, fed %q", first+int64(i), got[i].Text, want[i].Text)
		}
	}
	if !strings.HasPrefix(got[0].Text, "\x1b[1m") {
		t.Fatalf("line %d %q: the style set before the skipped lines is lost", first, got[0].Text)
	}
}

// TestAddAllIsAddOneByOne: appending a batch of lines holds the same lines,
// numbers and counts as appending them one at a time, whatever the ring's
// fill, wrap, line cap and byte cap.
func TestAddAllIsAddOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for iter := 0; iter < 2000; iter++ {
		maxLines, maxBytes := 1+r.IntN(40), 1+r.IntN(400)
		one, all := newScrollback(maxLines, maxBytes), newScrollback(maxLines, maxBytes)
		next := 0
		for batch := 0; batch < 6; batch++ {
			lines := make([]proto.Line, r.IntN(60))
			for i := range lines {
				lines[i] = proto.Line{Text: strings.Repeat("x", r.IntN(30)) + strconv.Itoa(next)}
				next++
			}
			for _, l := range lines {
				one.add(l)
			}
			all.addAll(lines)
			got, want := all.copyRange(nil, 0, 1<<30), one.copyRange(nil, 0, 1<<30)
			if all.first != one.first || all.bytes != one.bytes || all.delta != one.delta || !slices.Equal(got, want) {
				t.Fatalf("cap %d lines %d bytes, batch %d: addAll holds [%d..] %d bytes %d delta %v, add holds [%d..] %d bytes %d delta %v",
					maxLines, maxBytes, batch, all.first, all.bytes, all.delta, got, one.first, one.bytes, one.delta, want)
			}
		}
	}
}
