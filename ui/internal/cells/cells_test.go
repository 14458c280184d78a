package cells

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in    string
		w     int
		want  string
		width int
	}{
		{"hello", 10, "hello", 5},
		{"hello", 5, "hello", 5},
		{"hello world", 5, "hell…", 5},
		{"hello", 1, "…", 1},
		{"hello", 0, "", 0},
		{"\x1b[31mred text\x1b[m", 4, "\x1b[31mred…\x1b[m", 4},
		{"\x1b[31mred\x1b[m", 10, "\x1b[31mred\x1b[m\x1b[m", 3},
		{"日本語テキスト", 5, "日本…", 5},
		{"ab日", 3, "ab…", 3},
		{"a\x1b[2Jb\x1b[5;5Hc\x07d\te", 10, "abcde", 5},
		{"x\x1b]0;title\x07y", 10, "xy", 2},                               // OSC title: removed whole
		{"x\x1b]8;;http://e.x\x1b\\link\x1b]8;;\x1b\\y", 10, "xlinky", 6}, // OSC 8 hyperlink: its text stays
		{"x\x1bPq#0;2;0;0;0\x1b\\y", 10, "xy", 2},                         // DCS (sixel): removed whole
	} {
		got, w := Cut(c.in, c.w)
		if got != c.want || w != c.width {
			t.Errorf("Cut(%q, %d) = %q, %d; want %q, %d", c.in, c.w, got, w, c.want, c.width)
		}
		if ansi.StringWidth(got) != w {
			t.Errorf("Cut(%q, %d): reported width %d, real %d", c.in, c.w, w, ansi.StringWidth(got))
		}
	}
}

func TestCutIsProportionalToWidth(t *testing.T) {
	long := strings.Repeat("0", 1<<20)
	got, w := Cut(long, 80)
	if w != 80 || !strings.HasSuffix(got, Ellipsis) {
		t.Fatalf("Cut of a long line: %d cells", w)
	}
	if n := testing.AllocsPerRun(10, func() { Cut(long, 80) }); n > 10 {
		t.Fatalf("%v allocations", n)
	}
}

func TestWrap(t *testing.T) {
	rows, more := Wrap("abcdefghij", 4, 0)
	if more || len(rows) != 3 || rows[0].Text != "abcd" || rows[2].Text != "ij" || rows[2].Width != 2 {
		t.Fatalf("Wrap: %+v %v", rows, more)
	}
	rows, more = Wrap("abcdefghij", 4, 2)
	if !more || len(rows) != 2 {
		t.Fatalf("Wrap with max: %+v %v", rows, more)
	}
	rows, _ = Wrap("\x1b[31mabcdef\x1b[m", 3, 0)
	if len(rows) != 2 || rows[0].Text != "\x1b[31mabc\x1b[m" || rows[1].Text != "\x1b[31mdef\x1b[m\x1b[m" {
		t.Fatalf("styled wrap: %+v", rows)
	}
	rows, _ = Wrap("", 5, 0)
	if len(rows) != 1 || rows[0].Text != "" {
		t.Fatalf("empty line: %+v", rows)
	}
	rows, _ = Wrap("日本", 1, 0)
	for _, r := range rows {
		if r.Width > 1 {
			t.Fatalf("a wide character crossed a one-cell pane: %+v", rows)
		}
	}
}

func TestStrip(t *testing.T) {
	if got := Strip("\x1b[1;31mbold red\x1b[m"); got != "bold red" {
		t.Fatalf("Strip = %q", got)
	}
	if s := "plain text"; Strip(s) != s {
		t.Fatal("Strip changed plain text")
	}
}

func TestFitAndCenter(t *testing.T) {
	if got := Fit("abc", 5); got != "abc  " {
		t.Fatalf("Fit pad = %q", got)
	}
	if got := Fit("abcdef", 4); got != "abc…" {
		t.Fatalf("Fit cut = %q", got)
	}
	if got := Center("ab", 6); got != "  ab  " {
		t.Fatalf("Center = %q", got)
	}
	if Fit("x", 0) != "" || Fit("x", -1) != "" {
		t.Fatal("Fit to nothing")
	}
}

// Head cuts at a character boundary, never inside a character.
func TestHead(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"short", 10, "short"}, {"abcdef", 3, "abc"}, {"aé", 2, "a"}, {"aé", 3, "aé"}, {"", 0, ""}} {
		if got := Head(c.in, c.n); got != c.want {
			t.Errorf("Head(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
