package termtext

import (
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The repro strings of /work/shared/cases/README.md, as the child's output
// (printf already applied; shell loops unrolled).
const (
	h01 = "\033[31;1mRED-NO-RESET\nline two\n\033[7mREVERSE-NO-RESET\n" + "plain\n"
	h02 = "step 1/3\n" + "\033[1A\033[2Kstep 2/3\n" + "\033[1A\033[2Kstep 3/3\n\033[5;5HJUNK\n"
	h03 = "old 1\nold 2\n" + "\033[2J\033[Hnew after clear\n" + "\033cafter reset\n"
	h04 = "\rprogress 20%" + "\rprogress 40%" + "\rprogress 60%" + "\rprogress 80%" + "\rprogress 100%" +
		"\n" + "abcdef\rXY\n" + "crlf line\r\n"
	h06 = "caf\351 latte #col\n\377\376\001\002\200\300\257\a\b\013\014 bin\nvisible-after-binary\n"
	h07 = "a\tb\n1234567\tc\n12345678\td\n\tindented\n"
	h08 = "partial-line-no-newline" + " ...finished"
)

var (
	h05 = strings.Repeat("0", 200000) + "\n" + "after-long-line\n"
	h15 = strings.Repeat("0", 200000) // stderr; stdout gets "stdout-done\n"
)

func TestH01SGRLeftOpen(t *testing.T) {
	assertLines(t, h01, run(t, h01), []string{
		"\x1b[1;31mRED-NO-RESET\x1b[m",
		"\x1b[1;31mline two\x1b[m",
		"\x1b[1;7;31mREVERSE-NO-RESET\x1b[m",
		"\x1b[1;7;31mplain\x1b[m",
	})
}

func TestH02CursorMovement(t *testing.T) {
	assertLines(t, h02, run(t, h02), []string{"step 1/3", "step 2/3", "step 3/3", "JUNK"})
}

func TestH03ClearAndReset(t *testing.T) {
	assertLines(t, h03, run(t, h03), []string{"old 1", "old 2", "new after clear", "after reset"})
}

func TestH04CarriageReturnProgress(t *testing.T) {
	assertLines(t, h04, run(t, h04), []string{"progress 100%", "XYcdef", "crlf line"})

	// While it runs, the one line updates in place.
	c := NewConverter(0)
	for i, step := range []string{"\rprogress 20%", "\rprogress 40%", "\rprogress 100%"} {
		c.Feed([]byte(step), func([]byte, int) { t.Fatalf("step %d emitted a line", i) })
		text, w, ok := c.Partial()
		if want := step[1:]; !ok || string(text) != want || w != len(want) {
			t.Errorf("step %d: Partial() = %q, %d, %v; want %q", i, text, w, ok, want)
		}
	}
}

func TestH05LongLine(t *testing.T) {
	lines := convertAll(t, DefaultMaxWidth, false, h05)
	if len(lines) != 2 || lines[1].text != "after-long-line" {
		t.Fatalf("got %d lines, last %q", len(lines), lines[len(lines)-1].text)
	}
	c := NewConverter(0)
	kept := strings.Repeat("0", c.budget)
	want := kept + markerPrefix + strconv.Itoa(200000-c.budget) + markerSuffix
	if lines[0].text != want {
		t.Errorf("cut line = %.40q…%q, want …%q", lines[0].text, lines[0].text[len(kept)-5:], want[len(kept)-5:])
	}
	if lines[0].width > DefaultMaxWidth || lines[0].width < DefaultMaxWidth-64 {
		t.Errorf("cut line width %d", lines[0].width)
	}
}

func TestH06InvalidUTF8AndControls(t *testing.T) {
	assertLines(t, h06, run(t, h06), []string{
		"caf\uFFFD latte #col",
		"\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD bin",
		"visible-after-binary",
	})
}

func TestH07Tabs(t *testing.T) {
	got := run(t, h07)
	assertLines(t, h07, got, []string{"a       b", "1234567 c", "12345678        d", "        indented"})
	for i, ch := range []string{"b", "c", "d"} {
		if col := strings.Index(got[i], ch); col != []int{8, 8, 16}[i] {
			t.Errorf("%q at column %d", ch, col)
		}
	}
}

func TestH08PartialLine(t *testing.T) {
	c := NewConverter(0)
	if _, _, ok := c.Partial(); ok {
		t.Fatal("Partial() ok before any input")
	}
	noLine := func(text []byte, _ int) { t.Fatalf("emitted %q before the end", text) }
	c.Feed([]byte("partial-line-no-newline"), noLine)
	if text, w, ok := c.Partial(); !ok || string(text) != "partial-line-no-newline" || w != 23 {
		t.Errorf("Partial() = %q, %d, %v", text, w, ok)
	}
	c.Feed([]byte(" ...finished"), noLine)
	var got []string
	c.Flush(func(text []byte, _ int) { got = append(got, string(text)) })
	assertLines(t, h08, got, []string{"partial-line-no-newline ...finished"})
	if _, _, ok := c.Partial(); ok {
		t.Error("Partial() ok after Flush")
	}
}

func TestH15StderrFlood(t *testing.T) {
	stderr := convertAll(t, DefaultMaxWidth, false, h15)
	if len(stderr) != 1 || !strings.HasSuffix(stderr[0].text, markerSuffix) {
		t.Errorf("stderr lines: %d", len(stderr))
	}
	assertLines(t, "stdout-done\n", run(t, "stdout-done\n"), []string{"stdout-done"})
}

func TestPartial(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"", "", false},
		{"done\n", "", false},
		{"done\n\x1b[31m", "", false},
		{"done\n\x1b[31mred", "\x1b[31mred\x1b[m", true},
		{"abc\rX", "Xbc", true},
		{"caf\xc3", "caf\uFFFD", true},
		{"漢\rX\xe2\x82", "X\uFFFD\uFFFD", true},
		{"ab\x1b]0;ti", "ab", true},
		{"a\tb\x1b[", "a       b", true},
	} {
		c := NewConverter(0)
		c.Feed([]byte(tc.in), func([]byte, int) {})
		text, w, ok := c.Partial()
		if string(text) != tc.want || ok != tc.ok || w != ansi.StringWidth(tc.want) {
			t.Errorf("%q: Partial() = %q, %d, %v; want %q, %v", tc.in, text, w, ok, tc.want, tc.ok)
		}
		// Partial does not change what comes next.
		var flushed string
		c.Flush(func(text []byte, _ int) { flushed = string(text) })
		if flushed != tc.want {
			t.Errorf("%q: Flush emitted %q after Partial, want %q", tc.in, flushed, tc.want)
		}
	}
}

func TestLongLines(t *testing.T) {
	const w = 100
	c := newConverter(w, false)
	budget := c.budget
	for _, tc := range []struct {
		name string
		in   string
		kept string
		more int
	}{
		{"ascii", strings.Repeat("x", 300) + "\nnext\n", strings.Repeat("x", budget), 300 - budget},
		{"exactly the cap", strings.Repeat("x", w) + "\nnext\n", strings.Repeat("x", w), -1},
		{"wide", strings.Repeat("漢", 100) + "\nnext\n", strings.Repeat("漢", budget/2), 3 * (100 - budget/2)},
		{"styled", "\x1b[32m" + strings.Repeat("g", 200) + "\x1b[0m tail\nnext\n",
			"\x1b[32m" + strings.Repeat("g", budget) + "\x1b[m", 200 - budget + len("\x1b[0m tail")},
		{"overwritten", strings.Repeat("a", 50) + "\r" + strings.Repeat("b", 150) + "\nnext\n",
			strings.Repeat("b", budget), 150 - budget},
		{"zero width flood", "ab" + strings.Repeat("\u200b", 1000) + "\nnext\n", "", -2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := texts(convertAll(t, w, false, tc.in))
			if len(lines) != 2 || lines[1] != "next" {
				t.Fatalf("lines: %q", lines)
			}
			switch tc.more {
			case -1:
				if lines[0] != tc.kept {
					t.Errorf("got %q, want %q", lines[0], tc.kept)
				}
			case -2:
				if !strings.HasSuffix(lines[0], markerSuffix) {
					t.Errorf("not cut: %q", lines[0])
				}
			default:
				want := tc.kept + markerPrefix + strconv.Itoa(tc.more) + markerSuffix
				if strings.Contains(tc.kept, "\x1b") {
					want += "\x1b[m"
				}
				if lines[0] != want {
					t.Errorf("got  %q\nwant %q", lines[0], want)
				}
			}
		})
	}
}

// TestMemoryBounded feeds a line that never ends, a progress line
// overwritten forever, and an OSC string that never ends: the buffers stay
// within a small multiple of the width cap.
func TestMemoryBounded(t *testing.T) {
	chunk := []byte(strings.Repeat("0123456789\u200b\x1b[31m漢\x1b[0m", 1000))
	ts := []byte(strings.Repeat("t", 1<<16))
	for _, tc := range []struct {
		name    string
		first   []byte
		each    []byte
		wantCut bool
	}{
		{"long line", nil, chunk, true},
		{"overwritten line", nil, append([]byte("\r"), chunk[:len(chunk)/2]...), false},
		{"endless osc", []byte("\x1b]0;"), ts, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConverter(0)
			c.Feed(tc.first, func([]byte, int) {})
			for range 300 {
				c.Feed(tc.each, func([]byte, int) {})
				c.Partial()
			}
			limit := 2 * bytesPerCell * DefaultMaxWidth
			if cap(c.buf) > limit || cap(c.arena) > limit || cap(c.out) > limit || len(c.cells) > DefaultMaxWidth+2 {
				t.Errorf("buffers grew: buf %d, arena %d, out %d, cells %d",
					cap(c.buf), cap(c.arena), cap(c.out), len(c.cells))
			}
			if c.cut != tc.wantCut {
				t.Errorf("cut = %v", c.cut)
			}
		})
	}
}

// TestUnterminatedStringCap shows that an OSC that never ends hides at most
// strCap bytes: what comes after is text again.
func TestUnterminatedStringCap(t *testing.T) {
	in := "\x1b]0;" + strings.Repeat("t", strCap) + "visible\n"
	got := run(t, in)
	if len(got) != 1 || !strings.HasSuffix(got[0], "visible") || len(got[0]) > 20 {
		t.Fatalf("got %d lines, %.40q", len(got), got[0])
	}
}

// TestLongCSIIsRemovedWhole: a CSI of 5,000 parameters, past seqCap, is
// removed to its final byte, without effect (no colour), whatever the
// chunking: none of its tail shows as text. One without a final byte
// ends at the line end, and the next line is text again.
func TestLongCSIIsRemovedWhole(t *testing.T) {
	params := strings.Repeat("31;", 5000)
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"with its final byte", "a\x1b[" + params + "1mb\nnext\n", []string{"ab", "next"}},
		{"private, with intermediates", "a\x1b[?" + params + "1 qb\n", []string{"ab"}},
		{"without a final byte", "a\x1b[" + params + "\nnext\n", []string{"a", "next"}},
		{"a new sequence inside it", "a\x1b[" + params + "\x1b[31mb\x1b[m\n", []string{"a\x1b[31mb\x1b[m"}},
		{"a long ESC sequence", "a\x1b" + strings.Repeat(" ", 5000) + "Fb\n", []string{"ab"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertLines(t, tc.in, run(t, tc.in), tc.want)
		})
	}
}
