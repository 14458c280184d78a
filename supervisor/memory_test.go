package supervisor

import (
	"strconv"
	"testing"

	"github.com/subdash/subdash/supervisor/internal/output"
)

// TestLineMemoryIsOneBudget: display lines of all submissions share one
// budget (SPEC §5): finished submissions give theirs back first (read back
// from the log file when viewed), then the running one its oldest lines;
// --scrollback still caps one submission.
func TestLineMemoryIsOneBudget(t *testing.T) {
	const limit = 256 << 10
	s := newTestSupervisor(t, evalCommand, func(c *Config) { c.LineMemory = limit })
	var ids []string
	for i := 0; i < 4; i++ {
		id := spawn(t, s, "seq 1 20000")
		waitFinal(t, s, id)
		ids = append(ids, id)
	}
	if held := s.lineMem.Held(); held > limit {
		t.Fatalf("display lines hold %d bytes, over the budget of %d", held, limit)
	}
	w, err := s.Window(t.Context(), ids[3], 0, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(w.Lines); n < output.MinRunningLines || n >= 10000 || w.Lines[n-1].Text != "20000" {
		t.Fatalf("the latest submission holds %d lines ending %q; want its newest lines, fewer than --scrollback", n, w.Lines[len(w.Lines)-1].Text)
	}
	first, evicted, err := s.window(ids[0], 0, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !evicted {
		t.Fatalf("the first, finished submission still holds %d lines", len(first.Lines))
	}
	// Viewed again, it is read back from its log file.
	back, err := s.Window(t.Context(), ids[0], 0, 19999, 1)
	if err != nil || len(back.Lines) != 1 || back.Lines[0].Text != "20000" {
		t.Fatalf("read back: %+v, %v", back, err)
	}
}

// Finished submissions beyond the memory limit are released, least
// recently used first, and read back from their log files on demand.
func TestOldSubmissionsAreReleasedAndReadBack(t *testing.T) {
	s := newTestSupervisor(t, `read m; echo "output of $m"`)
	s.lineMem = output.NewMemory(s.cfg.LineMemory, 3) // before any output counts into it
	id := spawn(t, s, "run1")
	waitFinal(t, s, id)
	for i := 2; i <= 6; i++ {
		if _, err := s.Send(t.Context(), id, "run"+strconv.Itoa(i), false); err != nil {
			t.Fatal(err)
		}
		waitFinal(t, s, id)
	}
	evicted := func(seq int) bool { _, ev, _ := s.window(id, seq, 0, 10); return ev }
	for seq := 1; seq <= 6; seq++ {
		if want := seq <= 3; evicted(seq) != want {
			t.Fatalf("submission %d evicted = %v, want %v", seq, evicted(seq), want)
		}
	}
	for _, seq := range []int{1, 2} {
		w, _ := s.Window(t.Context(), id, seq, 0, 10)
		if len(w.Lines) != 1 || w.Lines[0].Text != "output of run"+strconv.Itoa(seq) {
			t.Fatalf("submission %d read back: %+v", seq, w)
		}
	}
	// reading back 1 and 2 released the two least recently used: 4 and 5
	for seq, want := range map[int]bool{1: false, 2: false, 3: true, 4: true, 5: true, 6: false} {
		if evicted(seq) != want {
			t.Fatalf("submission %d evicted = %v, want %v", seq, evicted(seq), want)
		}
	}
}

// TestAForgottenAgentGivesItsLinesBack: the display lines of a forgotten
// agent leave the line budget (SPEC §5), so a later agent keeps every line
// the budget has room for, not only what a ghost of the forgotten one left.
func TestAForgottenAgentGivesItsLinesBack(t *testing.T) {
	const limit = 512 << 10 // room for about 14,000 short lines
	s := newTestSupervisor(t, evalCommand, func(c *Config) { c.LineMemory = limit })
	gone := spawn(t, s, "seq 1 10000")
	waitFinal(t, s, gone)
	if _, err := s.Forget(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	id := spawn(t, s, "seq 1 8000")
	waitFinal(t, s, id)
	w, err := s.Window(t.Context(), id, 0, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if w.First != 0 || len(w.Lines) != 8000 {
		t.Fatalf("the agent after a forgotten one holds lines %d to %d of its 8000; the budget has room for all", w.First+1, w.Total)
	}
}
