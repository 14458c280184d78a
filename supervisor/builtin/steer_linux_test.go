package builtin

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/transcript"
)

// endWatch is an agent's stdout that notes, when the line ending a task
// is written, how many bytes of stderr the pipe still held (not taken by
// its reader, the host).
type endWatch struct {
	testkit.SyncBuffer
	stderr *os.File // the read end of the stderr pipe
	mu     sync.Mutex
	held   []int
}

func (e *endWatch) Write(p []byte) (int, error) {
	if transcript.IsBuiltinEnd(p) {
		n, _ := unix.IoctlGetInt(int(e.stderr.Fd()), unix.TIOCINQ)
		e.mu.Lock()
		e.held = append(e.held, n)
		e.mu.Unlock()
	}
	return e.SyncBuffer.Write(p)
}

// TestSteeredEndFollowsItsErrors: in stream-json a task not understood
// says why on stderr, then ends with "↪ task failed" on stdout once the
// host has taken all of stderr, so the log, which gets the two pipes
// apart, shows the error first; a task that ran ends with "↪ task done",
// a line that does not read as if the agent still waited.
func TestSteeredEndFollowsItsErrors(t *testing.T) {
	er, ew, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer er.Close() //nolint:errcheck // a pipe of the test
	stdin, w := io.Pipe()
	out := &endWatch{stderr: er}
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), stdin, out, ew, t.TempDir(), []string{"--input-format", "stream-json"})
		ew.Close() //nolint:errcheck // the agent's stderr, ended
	}()
	// The host's reader of stderr, slower than the agent writes.
	var errOut testkit.SyncBuffer
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := er.Read(buf)
			_, _ = errOut.Write(buf[:n])
			if err != nil {
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	write(t, w, userJSON("first", "do nonsense"))
	waitFor(t, &out.SyncBuffer, transcript.BuiltinFailed)
	write(t, w, userJSON("second", "summarize ."))
	waitFor(t, &out.SyncBuffer, transcript.BuiltinDone)
	w.Close() //nolint:errcheck // stdin's end: the agent ends
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not end when stdin closed")
	}
	if !strings.Contains(errOut.String(), `task not understood: "do nonsense"`) {
		t.Fatalf("stderr %q", errOut.String())
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if len(out.held) != 2 || out.held[0] != 0 {
		t.Fatalf("the end lines were written with %v bytes of stderr not taken yet, want none", out.held)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; last != transcript.BuiltinDone {
		t.Fatalf("the output ends with %q, want %q:\n%s", last, transcript.BuiltinDone, out.String())
	}
}
