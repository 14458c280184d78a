package builtin

import (
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// waitTaken waits until the pipe w writes to (through writers that
// Unwrap) is empty, the reader having taken what was written, for at most
// d; at once when w is not a pipe. An agent's stdout and stderr are two
// pipes its host reads apart: what the agent writes on one after waiting
// here reaches the host after what it wrote on the other.
func waitTaken(w io.Writer, d time.Duration) {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	fd := int(f.Fd())
	deadline := time.Now().Add(d)
	for step := 100 * time.Microsecond; ; step = min(2*step, 10*time.Millisecond) {
		n, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD: the bytes the pipe holds
		if err != nil || n == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(step)
	}
}
