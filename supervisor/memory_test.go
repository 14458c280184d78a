package supervisor

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/subdash/subdash/supervisor/runner"
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
	if held := s.lineMem.held.Load(); held > limit {
		t.Fatalf("display lines hold %d bytes, over the budget of %d", held, limit)
	}
	w, err := s.Window(ids[3], 0, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(w.Lines); n < minRunningLines || n >= 10000 || w.Lines[n-1].Text != "20000" {
		t.Fatalf("the latest submission holds %d lines ending %q; want its newest lines, fewer than --scrollback", n, w.Lines[len(w.Lines)-1].Text)
	}
	first, err := s.Window(ids[0], 0, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Evicted {
		t.Fatalf("the first, finished submission still holds %d lines", len(first.Lines))
	}
	// Viewed again, it is read back from its log file.
	if err := s.LoadOutput(ids[0], 0); err != nil {
		t.Fatal(err)
	}
	back, err := s.Window(ids[0], 0, 19999, 1)
	if err != nil || len(back.Lines) != 1 || back.Lines[0].Text != "20000" {
		t.Fatalf("read back: %+v, %v", back, err)
	}
}

// TestDisplayLineCost: a display line held in a scrollback costs at most
// twice its text plus 64 bytes of heap, measured.
func TestDisplayLineCost(t *testing.T) {
	for _, size := range []int{8, 40, 200} {
		const n = 50000
		line := append(bytes.Repeat([]byte("x"), size-1), '\n')
		chunk := bytes.Repeat(line, 64)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		o := newOutput(nil, n, nil, nil)
		for fed := 0; fed < n; fed += 64 {
			o.feed(runner.Stdout, chunk)
		}
		o.release() // the converters and tails, which are not per line
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := o.sb.n
		per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(held)
		runtime.KeepAlive(o)
		t.Logf("%d-byte lines: %d bytes each", size-1, per)
		if text := int64(size - 1); per > 2*text+64 {
			t.Errorf("a display line of %d bytes costs %d bytes of heap (%d lines held); want at most %d", text, per, held, 2*text+64)
		}
	}
}
