package output

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLastOutputMarkerWhereTheCutIs: "...[truncated]" opens the part of
// last_output that was cut, stdout's or stderr's (after "stderr:"), and
// only that one (SPEC §4); an untouched part reads as the child wrote it.
func TestLastOutputMarkerWhereTheCutIs(t *testing.T) {
	long := strings.Repeat("e", 5000)
	for _, c := range []struct {
		name           string
		out, errText   string
		outCut, errCut bool
		want           string
	}{
		{"both short", "answer", "warn", false, false, "answer\n\nstderr:\nwarn"},
		{"stderr only", "", "warn", false, false, "stderr:\nwarn"},
		{"only stderr cut", "stdout-done", long, false, false,
			"stdout-done\n\nstderr:\n...[truncated]" + strings.Repeat("e", 2000-len("stdout-done\n\nstderr:\n...[truncated]"))},
		{"stderr's tail overflowed", "stdout-done", "tail", false, true, "stdout-done\n\nstderr:\n...[truncated]tail"},
		{"stdout's tail overflowed", "tail", "warn", true, false, "...[truncated]tail\n\nstderr:\nwarn"},
		{"stdout alone, long", strings.Repeat("o", 3000), "", false, false, "...[truncated]" + strings.Repeat("o", 2000-14)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := composeLastOutput(c.out, c.errText, c.outCut, c.errCut); got != c.want {
				t.Errorf("got  %.120q…\nwant %.120q…", got, c.want)
			}
		})
	}
}

// TestLastOutputBounds: whatever the parts' lengths, last_output holds at
// most 2000 characters, each part's tail, and a marker exactly on the
// parts that lost characters or were flagged cut.
func TestLastOutputBounds(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		outN, errN := rng.Intn(4000), rng.Intn(4000)
		if i%5 == 0 {
			outN = 0
		}
		out, errText := strings.Repeat("o", outN), strings.Repeat("é", errN)
		outCut, errCut := rng.Intn(4) == 0 && outN > 0, rng.Intn(4) == 0 && errN > 0
		got := composeLastOutput(out, errText, outCut, errCut)
		if n := utf8.RuneCountInString(got); n > maxLastOutput {
			t.Fatalf("%d/%d: %d characters", outN, errN, n)
		}
		gotOut, gotErr, hasErr := strings.Cut(got, "stderr:\n")
		gotOut = strings.TrimSuffix(gotOut, "\n\n")
		if (errN > 0) != hasErr {
			t.Fatalf("%d/%d: stderr part present %v", outN, errN, hasErr)
		}
		for _, p := range []struct {
			got, whole string
			cut        bool
		}{{gotOut, out, outCut}, {gotErr, errText, errCut}} {
			body, marked := strings.CutPrefix(p.got, truncatedMarker)
			if !strings.HasSuffix(p.whole, body) {
				t.Fatalf("%d/%d: part %.40q is not a tail", outN, errN, p.got)
			}
			if lost := body != p.whole; marked != (lost || p.cut) {
				t.Fatalf("%d/%d cut %v: marker %v, lost %v", outN, errN, p.cut, marked, lost)
			}
		}
	}
}
