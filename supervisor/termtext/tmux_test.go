package termtext

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"
	"github.com/subdash/subdash/internal/testkit"
)

// TestWidthAgreesWithTmux draws generated lines, converted to display
// lines, in a real tmux and asks tmux where its cursor ended (a cursor
// position report after each line): every display line must take exactly
// the width the converter reports and the dashboard measures (SPEC §5).
// The lines mix ASCII, CJK, emoji, invalid bytes and tabs with characters
// of every combining and format category: non-spacing, spacing and
// enclosing marks (at the start of a line too), format characters,
// variation selectors, ZWJ, Hangul jamo, soft hyphens.
func TestWidthAgreesWithTmux(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; this test compares widths with tmux's own rendering")
	}
	if testing.Short() {
		t.Skip("-short: skipping the tmux rendering comparison")
	}
	var marks []rune
	for r := rune(0x300); r < 0x20000; r++ {
		if unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc, unicode.Cf) || r >= 0xFE00 && r <= 0xFE0F || r >= 0x1100 && r <= 0x11FF {
			marks = append(marks, r)
		}
	}
	bases := []string{"a", "Z", " ", "\u4e00", "\uac00", "\U0001F600", "\u26a0", "\xff", "\t", "\u05d0", "\u0915", "\u00e9", "\u2500", "\U0001F1FA\U0001F1F8", "\u0d4e", "\u00ad"}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	seed := rng.Int63()
	rng = rand.New(rand.NewSource(seed))
	const lines = 400
	var inputs, shown []string
	var widths []int
	for len(inputs) < lines {
		var b strings.Builder
		for k := rng.Intn(12); k >= 0; k-- {
			if rng.Intn(2) == 0 {
				b.WriteString(bases[rng.Intn(len(bases))])
			}
			for m := rng.Intn(3); m > 0; m-- {
				b.WriteRune(marks[rng.Intn(len(marks))])
			}
		}
		c := NewConverter(DefaultMaxWidth)
		c.Feed([]byte(b.String()+"\n"), func(text []byte, w int) {
			inputs = append(inputs, b.String())
			shown = append(shown, string(text))
			widths = append(widths, w)
		})
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lines"), []byte(strings.Join(shown, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `while IFS= read -r line; do printf '\r\033[2K%s\033[6n' "$line"; IFS= read -rsdR reply </dev/tty; echo "${reply##*;}" >> cols; done < lines; echo done >> cols; sleep 600`
	server := fmt.Sprintf("termtext-%d", os.Getpid())
	tm := func(args ...string) ([]byte, error) {
		return exec.Command(tmux, append([]string{"-L", server, "-f", "/dev/null"}, args...)...).CombinedOutput()
	}
	if err := os.WriteFile(filepath.Join(dir, "draw.sh"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := tm("new-session", "-d", "-x", "300", "-y", "10", "-c", dir, "env LANG=C.UTF-8 LC_ALL=C.UTF-8 bash draw.sh"); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _, _ = tm("kill-session") })
	cols := testkit.Poll(t, 30*time.Second, fmt.Sprintf("tmux's answers to %d cursor reports", len(shown)), func() ([]string, bool) {
		b, _ := os.ReadFile(filepath.Join(dir, "cols"))
		cols := strings.Fields(string(b))
		return cols, len(cols) > 0 && cols[len(cols)-1] == "done"
	})
	bad := 0
	for i, w := range widths {
		col, _ := strconv.Atoi(cols[i])
		ui := ansi.StringWidth(shown[i])
		if col-1 != w || ui != w {
			bad++
			if bad <= 10 {
				t.Errorf("input %+q shown as %+q: tmux draws %d cells, the converter says %d, the dashboard measures %d", inputs[i], shown[i], col-1, w, ui)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d lines disagree with tmux (seed %d)", bad, len(widths), seed)
	}
}
