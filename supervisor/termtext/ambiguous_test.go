package termtext

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// Emoji sequences whose width depends on the terminal's model come out as
// characters every model measures alike (found with tmux 3.3a, where "⚠️"
// moved the pane border one cell and "👍🏽" scrolled the whole screen).
func TestWidthAmbiguousSequencesAreSimplified(t *testing.T) {
	for _, c := range []struct {
		in, want string
		width    int
	}{
		{"warn ⚠️ done\n", "warn ⚠ done", 11},
		{"check ✔️ fine\n", "check ✔ fine", 12},
		{"ok ✅ fine\n", "ok ✅ fine", 10},
		{"👍🏽\n", "👍", 2},
		{"👨‍👩‍👧\n", "👨👩👧", 6},
		{"1️⃣\n", "1⃣", 1},
		{"\x1b[31m⚠️\x1b[m x\n", "\x1b[31m⚠\x1b[m x\x1b[m", 3},
	} {
		for name, chunks := range chunkings([]byte(c.in), 7) {
			got := feedChunks(NewConverter(0), chunks)
			if len(got) != 1 || got[0].text != c.want || got[0].width != c.width || ansi.StringWidth(got[0].text) != c.width {
				t.Errorf("%s: %q → %+v, want %q width %d", name, c.in, got, c.want, c.width)
			}
		}
		got := feedChunks(NewConverter(0), [][]byte{[]byte(c.in)})
		if len(got) != 1 || got[0].text != c.want || got[0].width != c.width || ansi.StringWidth(got[0].text) != c.width {
			t.Errorf("%q → %+v, want %q width %d", c.in, got, c.want, c.width)
		}
	}
	if got := DropAmbiguous("fix ⚠️ warnings 👍🏽"); got != "fix ⚠ warnings 👍" {
		t.Errorf("DropAmbiguous = %q", got)
	}
	if s := "plain"; DropAmbiguous(s) != s {
		t.Error("DropAmbiguous changed plain text")
	}
}
