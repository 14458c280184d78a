package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// maxMessage bounds a message written to the journal, in bytes: a message
// may be many megabytes (a diff sent with `ctl send ID -`), and journals
// are read line by line.
const maxMessage = 64 << 10

// Writer appends events to a run's journal, each in one write(2), so that
// a host killed with SIGKILL loses at most a cut last line (SPEC §10). The
// first write that fails is kept and reported (Failure, Watch); the
// events after it are still tried. Its methods are safe for concurrent
// use.
type Writer struct {
	mu  sync.Mutex
	f   *os.File
	err error // the first write error
	// failed holds the first write error in words with the path (SPEC
	// §5); readable without mu.
	failed atomic.Pointer[string]
	// onFail is told of the first write error (see Watch).
	onFail func(msg string)
}

// Create opens the journal at path for appending, creating it with mode
// 0600. Errors are os.OpenFile's.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f}, nil
}

// Write appends ev; a zero Time becomes now, and a message longer than
// 64 KiB is cut (whole characters) with a marker giving its length. It
// does nothing once the journal is closed.
func (w *Writer) Write(ev Event) {
	b := encode(ev)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil && len(b) > 0 {
		if _, err := w.f.Write(b); err != nil {
			w.fail(err)
		}
	}
}

// WriteAll appends evs as Write does, in one buffered write (a checkpoint
// of many records). A record that Carry kept as it was read is copied
// from the journal it was read from, not encoded again.
func (w *Writer) WriteAll(evs []Event) {
	if len(evs) == 1 {
		w.Write(evs[0])
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return
	}
	bw := bufio.NewWriterSize(w.f, 256<<10)
	c := carrier{files: map[string]*os.File{}}
	defer c.close()
	for _, ev := range evs {
		if line, ok := c.line(ev); ok {
			_, _ = bw.Write(line)
		} else {
			_, _ = bw.Write(encode(ev))
		}
	}
	if err := bw.Flush(); err != nil {
		w.fail(err)
	}
}

// encode returns ev as one JSON line, or nothing when it cannot be
// encoded.
func encode(ev Event) []byte {
	if ev.Time.IsZero() {
		ev.Time = proto.Time{Time: time.Now()}
	}
	ev.Message = proto.MessageHead(ev.Message, len(ev.Message), maxMessage)
	b, err := json.Marshal(ev)
	if err != nil {
		return nil
	}
	return append(b, '\n')
}

// fail records the first write error. Call with mu held.
func (w *Writer) fail(err error) {
	if w.err != nil {
		return
	}
	w.err = err
	why := err
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		why = pe.Err
	}
	msg := fmt.Sprintf("journal could not be written (%v): %s; this run's records may not be restored", why, w.f.Name())
	w.failed.Store(&msg)
	if w.onFail != nil {
		// In a goroutine: a write may come with the caller's lock held.
		go w.onFail(msg)
	}
}

// Watch has fn told of the journal's first write failure, in words with
// the path (SPEC §5): it returns the failure at once when the journal
// failed already (fn is then never called); else it returns "" and fn is
// called in a goroutine of its own when a write fails.
func (w *Writer) Watch(fn func(msg string)) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.Failure()
	}
	w.onFail = fn
	return ""
}

// Failure returns the journal's first write failure in words with the
// path, or "" while every write succeeded.
func (w *Writer) Failure() string {
	if p := w.failed.Load(); p != nil {
		return *p
	}
	return ""
}

// OK reports whether the journal is open and every write so far
// succeeded.
func (w *Writer) OK() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f != nil && w.err == nil
}

// Close closes the journal; later writes do nothing. It returns the
// file's close error, nil when closed already.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
