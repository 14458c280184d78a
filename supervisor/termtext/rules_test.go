package termtext

import (
	"strings"
	"testing"
)

// ruleCases covers each conversion rule of SPEC §5; every case is also run
// byte by byte and in random chunks, which must give the same lines.
var ruleCases = []struct {
	name string
	in   string
	want []string
}{
	// Line ends.
	{"lf", "a\nb\n", []string{"a", "b"}},
	{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
	{"empty lines", "\n\r\n\n", []string{"", "", ""}},
	{"partial at end", "a\nbc", []string{"a", "bc"}},
	{"cr cr lf", "a\r\r\nb\n", []string{"a", "b"}},

	// Carriage return overwrites.
	{"overwrite", "abcdef\rXY\n", []string{"XYcdef"}},
	{"progress", "\rprogress 20%\rprogress 40%\n", []string{"progress 40%"}},
	{"longer overwrite", "ab\rwxyz\n", []string{"wxyz"}},
	{"cr at start", "\rabc\n", []string{"abc"}},
	{"cr at end", "abc\r", []string{"abc"}},
	{"cr then nothing", "abc\r\n", []string{"abc"}},
	{"wide overwritten by narrow", "漢字abc\rX\n", []string{"X 字abc"}},
	{"narrow overwritten by wide", "abc\r漢\n", []string{"漢c"}},
	{"half of a wide char", "a漢b\r  X\n", []string{"  Xb"}},
	{"wide over wide shifted", "漢字\r.漢\n", []string{".漢"}},
	{"combining after cr", "abc\rxe\u0301\n", []string{"xe\u0301c"}},
	{"styled overwrite", "\x1b[31mred text\x1b[0m\rXY\n", []string{"XY\x1b[31md text\x1b[m"}},
	{"style of overwriter", "plain\r\x1b[1mBO\x1b[m\n", []string{"\x1b[1mBO\x1b[main\x1b[m"}},
	{"cr then tab", "abcdefghij\r\tX\n", []string{"abcdefghXj"}},
	{"cr then tab past end", "ab\r\tX\n", []string{"ab      X"}},

	// Erase in line.
	{"el after overwrite", "abcdef\rXY\x1b[K\n", []string{"XY"}},
	{"cr el", "progress 100%\r\x1b[Kdone\n", []string{"done"}},
	{"el2 cr", "progress 100%\x1b[2K\rdone\n", []string{"done"}},
	{"el2 keeps column", "abc\x1b[2Kdef\n", []string{"   def"}},
	{"el0 at end", "abc\x1b[Kdef\n", []string{"abcdef"}},
	{"el1 in cells", "abcdef\rab\x1b[1KZ\n", []string{"  Zdef"}},

	// Tabs.
	{"tab", "a\tb\n", []string{"a       b"}},
	{"tab at stop", "12345678\td\n", []string{"12345678        d"}},
	{"leading tab", "\tx\n", []string{"        x"}},
	{"tab after wide", "漢\tx\n", []string{"漢      x"}},
	{"trailing tab", "a\t\n", []string{"a       "}},

	// UTF-8.
	{"valid", "café ✓ 漢字 🇺🇸\n", []string{"café ✓ 漢字 US"}}, // a flag as its letters: terminals disagree on its width
	{"invalid byte", "caf\xe9!\n", []string{"caf\uFFFD!"}},
	{"overlong", "\xc0\xaf\n", []string{"\uFFFD\uFFFD"}},
	{"surrogate", "\xed\xa0\x80\n", []string{"\uFFFD\uFFFD\uFFFD"}},
	{"truncated then ascii", "\xe2\x82a\n", []string{"\uFFFD\uFFFDa"}},
	{"truncated at flush", "ab\xe2\x82", []string{"ab\uFFFD\uFFFD"}},
	{"c1 as utf-8", "a\u009b31mb\u0085c\n", []string{"a31mbc"}},
	{"real fffd kept", "\uFFFD\n", []string{"\uFFFD"}},

	// SGR.
	{"sgr kept", "\x1b[31mred\x1b[0m plain\n", []string{"\x1b[31mred\x1b[m plain\x1b[m"}},
	{"sgr carries over", "\x1b[1;32mgo\nstill\x1b[m\nplain\n", []string{"\x1b[1;32mgo\x1b[m", "\x1b[1;32mstill\x1b[m", "plain"}},
	{"sgr without text", "\x1b[31m\x1b[0mplain\n", []string{"plain"}},
	{"styled empty line", "\x1b[31m\nx\n", []string{"", "\x1b[31mx\x1b[m"}},
	{"256 colour", "\x1b[38;5;208mo\x1b[48;5;17mb\n", []string{"\x1b[38;5;208mo\x1b[0;38;5;208;48;5;17mb\x1b[m"}},
	{"truecolour", "\x1b[38;2;10;20;30mt\n", []string{"\x1b[38;2;10;20;30mt\x1b[m"}},
	{"colon truecolour", "\x1b[38:2::10:20:30mt\x1b[38:2:1:2:3mu\n", []string{"\x1b[38;2;10;20;30mt\x1b[0;38;2;1;2;3mu\x1b[m"}},
	{"colon indexed", "\x1b[48:5:9mx\n", []string{"\x1b[48;5;9mx\x1b[m"}},
	{"underline styles", "\x1b[4:3mc\x1b[4:0mn\x1b[21md\n", []string{"\x1b[4:3mc\x1b[mn\x1b[4:2md\x1b[m"}},
	{"underline colour", "\x1b[4;58:2::1:2:3mu\n", []string{"\x1b[4;58:2::1:2:3mu\x1b[m"}},
	{"bright", "\x1b[91;102mb\n", []string{"\x1b[91;102mb\x1b[m"}},
	{"attribute off", "\x1b[1;3;9mx\x1b[22;23;29my\n", []string{"\x1b[1;3;9mx\x1b[my\x1b[m"}},
	{"default colours", "\x1b[31;42mx\x1b[39;49my\n", []string{"\x1b[31;42mx\x1b[my\x1b[m"}},
	{"empty params reset", "\x1b[31mx\x1b[;1my\n", []string{"\x1b[31mx\x1b[0;1my\x1b[m"}},
	{"unknown sgr ignored", "\x1b[73;31mx\n", []string{"\x1b[31mx\x1b[m"}},
	{"ris resets style", "\x1b[31mx\x1bcy\n", []string{"\x1b[31mx\x1b[my\x1b[m"}},

	// Removed sequences and controls.
	{"cursor moves", "a\x1b[1A\x1b[2;3H\x1b[5Cb\x1b[s\x1b[u\n", []string{"ab"}},
	{"dec modes", "\x1b[?1049h\x1b[?25lx\x1b[?1049l\x1b[?2004h\n", []string{"x"}},
	{"scroll region", "\x1b[1;10rx\x1b[r\n", []string{"x"}},
	{"osc title bel", "\x1b]0;title\ax\n", []string{"x"}},
	{"osc title st", "\x1b]2;title\x1b\\x\n", []string{"x"}},
	{"osc 8 keeps link text", "see \x1b]8;;https://e.x/\x1b\\the link\x1b]8;;\x1b\\.\n", []string{"see the link."}},
	{"osc 52", "\x1b]52;c;aGVsbG8=\ax\n", []string{"x"}},
	{"osc utf-8", "\x1b]0;tîtle ✓\ax\n", []string{"x"}},
	{"unterminated osc ends at newline", "\x1b]0;title\nnext\n", []string{"", "next"}},
	{"dcs sixel", "a\x1bPq#0;2;0;0;0#0~~@@vv-\n\x1b\\b\n", []string{"ab"}},
	{"apc kitty", "\x1b_Gf=100;AAAA\x1b\\x\n", []string{"x"}},
	{"sos pm", "\x1bXsos\x1b\\\x1b^pm\x1b\\x\n", []string{"x"}},
	{"esc sequences", "\x1b7\x1b8\x1b(B\x1b)0\x1b=\x1b>x\x1bMy\n", []string{"xy"}},
	{"esc c", "\x1bcafter reset\n", []string{"after reset"}},
	{"c0 controls", "a\x00\x01\a\b\v\f\x0e\x1f\x7fb\n", []string{"ab"}},
	{"can aborts", "\x1b[31\x18x\n", []string{"x"}},
	{"newline inside csi", "\x1b[31\nm\n", []string{"", ""}},
	{"c1 raw byte in csi", "\x1b[3\x9bx\n", []string{"\uFFFDx"}},
	{"utf-8 in csi", "\x1b[3é\n", []string{"é"}},
	{"esc esc", "\x1b\x1b[31mx\n", []string{"\x1b[31mx\x1b[m"}},
	{"lone esc at flush", "abc\x1b", []string{"abc"}},
	{"csi at flush", "abc\x1b[3", []string{"abc"}},
}

func TestRules(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			assertLines(t, tc.in, run(t, tc.in), tc.want)
		})
	}
}

func TestUnstyledLinesHaveNoEscape(t *testing.T) {
	in := "\x1b[31mred\x1b[0m\nplain\n\x1b[2Jclear\x1b]0;t\a\n"
	got := run(t, in)
	for _, l := range got[1:] {
		if strings.ContainsRune(l, 0x1b) {
			t.Errorf("unstyled line %q holds an escape", l)
		}
	}
}

// TestSGRStateBounded feeds many SGR sequences without a reset: the
// re-emitted style stays one short sequence.
func TestSGRStateBounded(t *testing.T) {
	var sb strings.Builder
	for i := range 100000 {
		sb.WriteString([]string{"\x1b[1m", "\x1b[31m", "\x1b[38;5;200m", "\x1b[4m", "\x1b[48;2;1;2;3m"}[i%5])
	}
	sb.WriteString("\nnext\n")
	got := run(t, sb.String())
	want := "\x1b[1;4;38;5;200;48;2;1;2;3mnext\x1b[m"
	if len(got) != 2 || got[1] != want {
		t.Fatalf("got %q, want second line %q", got, want)
	}
}

// TestSplitAtEveryByte splits a mixed input at every position into two
// chunks; each split must give the lines of the whole input.
func TestSplitAtEveryByte(t *testing.T) {
	in := []byte("x\x1b[38;2;1;2;3mé\x1b]8;;u\x1b\\漢\xe2\x82\r\n\tab\rc\u0301\x1b[K\x1b[0m🇺🇸\xff\n")
	want := feedChunks(NewConverter(0), [][]byte{in})
	for i := range in {
		got := feedChunks(NewConverter(0), [][]byte{in[:i], in[i:]})
		if len(got) != len(want) {
			t.Fatalf("split at %d: %+v, want %+v", i, got, want)
		}
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("split at %d: %+v, want %+v", i, got, want)
			}
		}
	}
}

func TestNewConverterRaisesSmallWidth(t *testing.T) {
	for _, w := range []int{-1, 0, 80, 1023} {
		if got := NewConverter(w).maxWidth; got != DefaultMaxWidth {
			t.Errorf("NewConverter(%d).maxWidth = %d, want %d", w, got, DefaultMaxWidth)
		}
	}
	if got := NewConverter(2000).maxWidth; got != 2000 {
		t.Errorf("NewConverter(2000).maxWidth = %d", got)
	}
}
