package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StopProcess sends SIGSTOP to pid and returns once every thread of it is
// stopped (within d, else the test fails), and sends SIGCONT at the end of
// the test. kill(2) returns before the stop is done: one thread takes the
// signal and then stops the others, and under load the rest of a Go
// process can run (and answer a request on its socket, or read one) for
// tens of milliseconds meanwhile.
func StopProcess(t testing.TB, pid int, d time.Duration) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	Eventually(t, d, fmt.Sprintf("every thread of pid %d to stop after SIGSTOP", pid), func() bool { return AllStopped(pid) })
}

// AllStopped reports whether every thread of pid is in state T (stopped),
// as /proc/<pid>/task/<tid>/stat says.
func AllStopped(pid int) bool {
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	for _, p := range stats {
		b, err := os.ReadFile(p)
		// The state follows the command name, which is in parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if err != nil || i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return len(stats) > 0
}

// FIFO makes a named pipe at path for an agent command that waits on it
// without using CPU time (`read l < "$FIFO"`, the stall tests), and
// returns a function that writes line and a newline into it, blocking
// until the command opens it for reading.
func FIFO(t testing.TB, path string) (write func(line string)) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return func(line string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteString(line + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Ended reports whether process pid has ended: there is no such process,
// or it is a zombie (state Z: ended, not reaped yet by its parent, which
// may be an init that reaps late), as /proc/<pid>/stat says.
func Ended(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}
