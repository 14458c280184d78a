package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangGuard bounds how long a test waits for something that must happen;
// it only turns a hang into a failure, nothing waits for it to pass.
const hangGuard = 30 * time.Second

// runAgentWithin runs the agent through Run, as runAgent does, and fails
// the test instead of hanging when it does not return within hangGuard.
func runAgentWithin(t *testing.T, dir, message string) result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- runAgent(context.Background(), dir, message) }()
	select {
	case r := <-done:
		return r
	case <-time.After(hangGuard):
		t.Fatalf("the agent did not finish %q", message)
		return result{}
	}
}

// newFIFOTree makes a directory holding one text file and a named pipe,
// both with a TODO, and returns it.
func newFIFOTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("TODO: read me\n"), 0o644))
	// Opening the pipe for reading would wait for a writer that never comes.
	must(t, syscall.Mkfifo(filepath.Join(dir, "pipe-TODO.txt"), 0o644))
	return dir
}

func TestRunSkipsFIFOs(t *testing.T) {
	dir := newFIFOTree(t)
	tests := []struct {
		message string
		want    result
	}{
		{"find TODO in .", result{StatusOK, "notes.txt:1: TODO: read me\n\nTODO: 1 in 1 file\nscanned 1 file in .\n", ""}},
		{"summarize .", result{StatusOK, "summary of .: 1 file\n" +
			"language  files  lines  bytes\n" +
			"Text          1      1   14 B\n" +
			"total         1      1   14 B\n" +
			"\nlargest files:\n  14 B  notes.txt\n", ""}},
		{"find TODO in pipe-TODO.txt", result{StatusError, "", "not a regular file or directory: pipe-TODO.txt\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.message, func(t *testing.T) {
			if got := runAgentWithin(t, dir, tt.message); got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDataFSOpensOnlyRegularFilesAndDirectories(t *testing.T) {
	dir := newFIFOTree(t)
	opened := make(chan error, 1)
	go func() {
		f, err := dataFS{}.Open(fsName(filepath.Join(dir, "pipe-TODO.txt")))
		if err == nil {
			f.Close() //nolint:errcheck // opened by mistake: the test fails on err == nil
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if !errors.Is(err, errNotRegular) {
			t.Errorf("opening a named pipe: err = %v, want %v", err, errNotRegular)
		}
	case <-time.After(hangGuard):
		t.Fatal("opening a named pipe blocked")
	}
	if _, err := (dataFS{}).Open("dev/null"); !errors.Is(err, errNotRegular) {
		t.Errorf("opening /dev/null: err = %v, want %v", err, errNotRegular)
	}
	for _, name := range []string{fsName(dir), fsName(filepath.Join(dir, "notes.txt"))} {
		f, err := dataFS{}.Open(name)
		if err != nil {
			t.Errorf("opening %s: %v", name, err)
			continue
		}
		if err := f.Close(); err != nil {
			t.Errorf("closing %s: %v", name, err)
		}
	}
}

func TestRunSkipsPseudoFilesystems(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); runtime.GOOS != "linux" || err != nil {
		t.Skip("no proc filesystem at /proc")
	}
	tests := []struct {
		message string
		want    result
	}{
		{"find TODO in /proc", result{StatusOK, "skipped /proc: proc filesystem\n\nTODO: 0\nscanned 0 files in /proc\n", ""}},
		{"audit /proc", result{StatusOK, "skipped /proc: proc filesystem\n\nTODO: 0\nFIXME: 0\nXXX: 0\nHACK: 0\nscanned 0 files in /proc\n", ""}},
		{"summarize /proc", result{StatusOK, "skipped /proc: proc filesystem\nsummary of /proc: 0 files\n", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.message, func(t *testing.T) {
			if got := runAgentWithin(t, t.TempDir(), tt.message); got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestRunSkipsPseudoFilesystemsBelowThePath walks /dev, where devpts is
// mounted at /dev/pts (with its ptmx node) on any Linux system that has
// terminals.
func TestRunSkipsPseudoFilesystemsBelowThePath(t *testing.T) {
	if _, err := os.Stat("/dev/pts/ptmx"); runtime.GOOS != "linux" || err != nil {
		t.Skip("no devpts filesystem at /dev/pts")
	}
	got := runAgentWithin(t, t.TempDir(), "find TODO in /dev")
	lines := strings.Split(got.stdout, "\n")
	if got.status != StatusOK || !slices.Contains(lines, "skipped /dev/pts: devpts filesystem") {
		t.Errorf("got %+v; want status 0 and a line saying /dev/pts was skipped", got)
	}
}
