package termtext

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcde", 5, "abcde"},
		{"abcdef", 5, "abcd…"},
		{"abcd", 3, "ab…"},
		{"  a \n\n b  ", 10, "a b"},
		{"a\tb\r\nc", 10, "a b c"},
		{"ab   ", 2, "ab"},
		{"a\x00\x1b[31mb", 10, "ab"}, // the sequence goes whole: no "[31m" left as text
		{"ls \x1b[?1000h -la", 20, "ls -la"},
		{"9;4;hello \x1b]9;evil\x07\r\nline\ttwo \u0085end", 40, "9;4;hello line two end"},
		{"title \x1b]0;PWNED\x1b\\ done", 40, "title done"},
		{"a\u009bb\x7fc", 10, "abc"}, // C1 and DEL
		{"ab\xffcd", 10, "ab\uFFFDcd"},
		{"fix ⚠️ warnings 👍🏽 👨‍👩‍👧", 0, "fix ⚠ warnings 👍 👨👩👧"},
		{"ship to 🇺🇸 and 🇫🇷", 0, "ship to US and FR"}, // flags as letters, as in the log pane
		{"no limit at all", 0, "no limit at all"},
		{"a\nb\tc\r\nd\x1b[31me\x1b[m\u0085f", 0, "a b c def"}, // NEL is a control, removed as in the log pane
		{"trailing escape \x1b", 0, "trailing escape"},
		{"", 10, ""},
		{"x", 1, "x"},
		{"xy", 1, "…"},
	} {
		if got := OneLine(c.in, c.n); got != c.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestOneLineReadsABoundedPrefix: only OneLineMaxRead bytes of a long text
// are read when there is a limit; "…" says the text went on.
func TestOneLineReadsABoundedPrefix(t *testing.T) {
	red := strings.Repeat("\x1b[31mx\x1b[m", 1<<20/9) // 1 MiB
	if got := OneLine(red, 120); got != strings.Repeat("x", 119)+"…" {
		t.Errorf("OneLine of 1 MiB of red x = %.30q… (%d bytes)", got, len(got))
	}
	if got := OneLine(strings.Repeat(" ", OneLineMaxRead)+"ls", 10); got != "" {
		t.Errorf("OneLine after %d spaces = %q", OneLineMaxRead, got)
	}
	if got := OneLine("ls"+strings.Repeat(" \x1b[m", OneLineMaxRead), 10); got != "ls…" {
		t.Errorf("OneLine of a cut prefix = %q, want it to end with …", got)
	}
	if got := OneLine("ls"+strings.Repeat(" ", 1<<20), 10); got != "ls" {
		t.Errorf("OneLine of a text that ends in spaces = %q", got)
	}
	long := "9;4;hello " + strings.Repeat("x", 1<<20)
	allocs := testing.AllocsPerRun(10, func() { OneLine(long, 160) })
	if allocs > 2 {
		t.Errorf("OneLine of 1 MiB allocates %v times", allocs)
	}
}

// TestOneLineIsSafe: whatever the input, the line holds no control
// character, no escape byte, no invalid UTF-8 and no width-ambiguous code
// point, at most n characters.
func TestOneLineIsSafe(t *testing.T) {
	inputs := []string{"\x1b[", "\x1b]8;;http://x\x07link\x1b]8;;\x07", "\x1bP+q\x1b\\", "\x9b31m", "\xc2", "a\u200db", strings.Repeat("\x1b[1m\n", 500)}
	for _, in := range inputs {
		for _, n := range []int{0, 1, 5, 80} {
			got := OneLine(in, n)
			if !utf8.ValidString(got) || n > 0 && utf8.RuneCountInString(got) > n {
				t.Errorf("OneLine(%q, %d) = %q", in, n, got)
			}
			for _, r := range got {
				if unicode.IsControl(r) || widthAmbiguous(r) || r != ' ' && unicode.IsSpace(r) {
					t.Errorf("OneLine(%q, %d) = %q holds %U", in, n, got, r)
				}
			}
		}
	}
}

func TestOneLineReturnsACleanLineItself(t *testing.T) {
	s := "already one clean line"
	if n := testing.AllocsPerRun(100, func() { _ = OneLine(s, 80) }); n != 0 {
		t.Errorf("OneLine of a clean line allocates %v times", n)
	}
}

func TestShortID(t *testing.T) {
	if got := ShortID("0123456789abcdef"); got != "01234567" {
		t.Errorf("ShortID = %q", got)
	}
	if got := ShortID("abc"); got != "abc" {
		t.Errorf("ShortID of a short id = %q", got)
	}
}

func TestFirstAndLastLine(t *testing.T) {
	for _, c := range []struct{ in, first, last string }{
		{"one\ntwo\n\n  \n", "one", "two"},
		{"only", "only", "only"},
		{"\n\x1b[31mred\x1b[m\n\t\n", "red", "red"},
		{"", "", ""},
		{"a\n" + strings.Repeat("x", 300), "a", strings.Repeat("x", 19) + "…"},
	} {
		if got := FirstLine(c.in, 20); got != c.first {
			t.Errorf("FirstLine(%q) = %q, want %q", c.in, got, c.first)
		}
		if got := LastLine(c.in, 20); got != c.last {
			t.Errorf("LastLine(%q) = %q, want %q", c.in, got, c.last)
		}
	}
}
