package builtin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// blockingFS stands for a file whose reads never answer (/proc/kmsg, a
// FIFO without a writer): opening the file named block says so on opened,
// then waits until release is closed.
type blockingFS struct {
	fs.FS
	block   string
	opened  chan<- struct{}
	release <-chan struct{}
}

func (b blockingFS) Open(name string) (fs.File, error) {
	if name == b.block {
		b.opened <- struct{}{}
		<-b.release
	}
	return b.FS.Open(name)
}

// errSigterm is the cause `subdash agent` gives its context on SIGTERM.
var errSigterm = errors.New("SIGTERM received")

func TestStopWhileAReadBlocks(t *testing.T) {
	for _, message := range []string{"find TODO in .", "summarize ."} {
		t.Run(message, func(t *testing.T) {
			dir := t.TempDir()
			must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("TODO: blocks\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("TODO: never reached\n"), 0o644))
			opened, release := make(chan struct{}, 1), make(chan struct{})
			// The task left behind goes on once released, writing nowhere.
			t.Cleanup(func() { close(release) })
			cfg := config{dir: dir, maxFileSize: defaultMaxFileSize, fsys: blockingFS{
				FS: dataFS{}, block: fsName(filepath.Join(dir, "a.txt")), opened: opened, release: release,
			}}

			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- runStoppable(ctx, cfg, strings.NewReader(message), &stdout, &stderr)
			}()
			select {
			case <-opened:
			case <-time.After(hangGuard):
				t.Fatal("the task never opened a.txt")
			}
			cancel(errSigterm)
			select {
			case status := <-done:
				if status != StatusError || stdout.String() != "" || stderr.String() != "stopped: SIGTERM received\n" {
					t.Errorf("got status %d, stdout %q, stderr %q; want 1, nothing, stopped", status, stdout.String(), stderr.String())
				}
			case <-time.After(hangGuard):
				t.Fatal("the agent did not stop while a read blocked")
			}
		})
	}
}

func TestStopWhileReadingTheTask(t *testing.T) {
	stdin, writer := io.Pipe()           // the task never comes
	t.Cleanup(func() { writer.Close() }) //nolint:errcheck // io.PipeWriter.Close always returns nil
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	cancel(errSigterm)
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, stdin, &stdout, &stderr, t.TempDir(), nil) }()
	select {
	case status := <-done:
		if status != StatusError || stdout.String() != "" || stderr.String() != "stopped: SIGTERM received\n" {
			t.Errorf("got status %d, stdout %q, stderr %q; want 1, nothing, stopped", status, stdout.String(), stderr.String())
		}
	case <-time.After(hangGuard):
		t.Fatal("the agent did not stop while reading stdin")
	}
}
