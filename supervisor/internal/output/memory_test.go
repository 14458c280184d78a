package output

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/subdash/subdash/supervisor/runner"
)

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
		o := New(Options{MaxLines: n})
		for fed := 0; fed < n; fed += 64 {
			o.Feed(runner.Stdout, chunk)
		}
		o.Release() // the converters and tails, which are not per line
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
