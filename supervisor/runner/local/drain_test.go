package local

import (
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/runner"
)

// TestDrainReadsWhatThePipeHolds: once the group is gone, what it left in
// its pipe is read to the end even when the output is taken more slowly
// than maxDrain allows for a process that writes on (a loaded machine):
// the log then holds every byte (TestLogFileHoldsExactlyTheBytesWritten's
// flake under load).
func TestDrainReadsWhatThePipeHolds(t *testing.T) {
	defer func(d time.Duration) { maxDrain = d }(maxDrain)
	maxDrain = time.Second
	const n = 900 << 10 // fits in the pipe: the child exits at once
	var got atomic.Int64
	slow := func(_ runner.Stream, b []byte) {
		got.Add(int64(len(b)))
		time.Sleep(600 * time.Millisecond)
	}
	p, err := startProcess("head -c 921600 /dev/zero", t.TempDir(), os.Environ(), func(w io.WriteCloser) { w.Close() }, streamSink{log: slow}, nil) //nolint:errcheck // the child's stdin, nothing written: its Close cannot lose data
	if err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	if groupAlive(p.pgid) {
		t.Fatal("the group outlived its only process")
	}
	p.Drain()
	if got.Load() != n {
		t.Fatalf("read %d bytes of the %d the child left in its pipe", got.Load(), n)
	}
}
