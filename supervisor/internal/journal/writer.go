package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// maxMessage bounds a message written to the journal, in bytes: a message
// may be many megabytes (a diff sent with `ctl send ID -`), and journals
// are read line by line.
const maxMessage = 64 << 10

// flushAt is how many bytes of lines WriteAll and Checkpoint gather
// before they write them.
const flushAt = 256 << 10

// retryEvery is how often a journal that missed events is due for a
// checkpoint (Due) while no write succeeded that says space is back.
const retryEvery = 5 * time.Second

// Writer appends events to a run's journal, each in one write(2), so that
// a host killed with SIGKILL loses at most a cut last line (SPEC §10).
//
// A write that fails (a full disk) is reported (Failure, Watch), and the
// events after it are still tried. Whatever part of a line it wrote is cut
// off again (ftruncate(2) back to the end of the last whole line); where
// that fails too, the next line begins on a line of its own, so that a
// record never shares a line with a cut one. Since an event that could not
// be written is missing from the file, the journal is Due for a
// checkpoint: the caller writes every record it holds in memory again
// (Checkpoint), which, once it succeeds, ends the failure. Checkpoint also
// writes the journal again when its file was removed under it (Moved: the
// state directory was removed). Its methods are safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	path string
	end  int64 // where the last whole line ends in f
	// torn: f ends in part of a line that could not be cut off.
	torn bool
	err  error // the failure now: set by a failed write, ended by a checkpoint
	// failed holds err in words with the path (SPEC §5); readable
	// without mu.
	failed atomic.Pointer[string]
	// onFail is told when writes begin to fail (see Watch).
	onFail func(msg string)
	// missed: an event could not be written since the last checkpoint;
	// spaceBack: a write succeeded since then; tried: when the last
	// checkpoint was tried.
	missed, spaceBack bool
	tried             time.Time
	// held gathers the lines written while a checkpoint is being built:
	// they go after it.
	holding bool
	held    []byte
}

// Create opens the journal at path for appending, creating it with mode
// 0600. Errors are os.OpenFile's.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, path: path}
	if fi, err := f.Stat(); err == nil {
		w.end = fi.Size()
	}
	return w, nil
}

// Write appends ev; a zero Time becomes now, and a message longer than
// 64 KiB is cut (whole characters) with a marker giving its length. It
// does nothing once the journal is closed.
func (w *Writer) Write(ev Event) {
	b := encode(ev)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(b) > 0 {
		_ = w.appendLocked(b) // a failure is kept and said (Failure, Watch)
	}
}

// WriteAll appends evs as Write does, in few large writes (a checkpoint
// of many records). A record that Carry kept as it was read is copied
// from the journal it was read from, not encoded again.
func (w *Writer) WriteAll(evs []Event) {
	if len(evs) == 1 {
		w.Write(evs[0])
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = lineChunks(evs, w.appendLocked)
}

// lineChunks hands put the lines of evs in pieces of about flushAt bytes of
// whole lines, and returns the first error put returned.
func lineChunks(evs []Event, put func([]byte) error) error {
	c := carrier{files: map[string]*os.File{}}
	defer c.close()
	var first error
	buf := make([]byte, 0, flushAt+4<<10)
	for i, ev := range evs {
		if line, ok := c.line(ev); ok {
			buf = append(buf, line...)
		} else {
			buf = append(buf, encode(ev)...)
		}
		if len(buf) >= flushAt || i == len(evs)-1 {
			if err := put(buf); err != nil && first == nil {
				first = err
			}
			buf = buf[:0]
		}
	}
	return first
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

// appendLocked writes b, whole lines, at the end of the journal, or holds
// it while a checkpoint is built. A write that fails part way is cut back
// to its last whole line (see Writer). Call with mu held.
func (w *Writer) appendLocked(b []byte) error {
	switch {
	case w.f == nil || len(b) == 0:
		return nil
	case w.holding:
		w.held = append(w.held, b...)
		return nil
	}
	return w.writeTo(w.f, b)
}

// writeTo writes b to f, the journal or the new file of a checkpoint,
// keeping end and torn. Call with mu held.
func (w *Writer) writeTo(f *os.File, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if w.torn {
		// the line the failed write cut ends here, on its own
		b = append([]byte{'\n'}, b...)
	}
	n, err := f.Write(b)
	if err == nil {
		w.end += int64(n)
		w.torn = false
		if w.missed {
			w.spaceBack = true
		}
		return nil
	}
	whole := bytes.LastIndexByte(b[:n], '\n') + 1
	w.end += int64(whole)
	if n > whole || w.torn {
		w.torn = f.Truncate(w.end) != nil
		if w.torn {
			if fi, serr := f.Stat(); serr == nil {
				w.end = fi.Size()
			}
		}
	}
	w.missed = true
	w.fail(err)
	return err
}

// fail records err as the journal's failure unless one is recorded
// already, and tells the watcher. Call with mu held.
func (w *Writer) fail(err error) {
	if w.err != nil {
		return
	}
	w.err = err
	why := err
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		why = pe.Err
	}
	w.failWith(fmt.Sprintf("journal could not be written (%v): %s; this run's records may not be restored", why, w.path))
}

// failWith records msg as the journal's failure and tells the watcher.
// Call with mu held.
func (w *Writer) failWith(msg string) {
	w.failed.Store(&msg)
	if w.onFail != nil {
		// In a goroutine: a write may come with the caller's lock held.
		go w.onFail(msg)
	}
}

// Watch has fn told when the journal begins to fail, in words with the
// path (SPEC §5): it returns the failure at once when the journal is
// failing already (fn is then told only of a later one, after a
// checkpoint ended this); else it returns "" and fn is called in a
// goroutine of its own when a write fails. A failure ends with a
// checkpoint that succeeds (Checkpoint), which its caller says.
func (w *Writer) Watch(fn func(msg string)) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onFail = fn
	return w.Failure()
}

// Failure returns the journal's failure in words with the path, or ""
// while every write since the last checkpoint succeeded.
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
	return w.f != nil && w.err == nil && !w.missed
}

// Moved reports whether the journal's path no longer names the file it
// writes (removed with its folder, or replaced): what it writes is lost
// until a checkpoint writes the journal again there (Checkpoint).
func (w *Writer) Moved() bool {
	w.mu.Lock()
	f := w.f
	w.mu.Unlock()
	if f == nil {
		return false
	}
	at, err := os.Stat(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	mine, ferr := f.Stat()
	return err == nil && ferr == nil && !os.SameFile(at, mine)
}

// Due reports whether an event could not be written since the last
// checkpoint and a checkpoint is worth trying now: a write succeeded
// since (space is back), or retryEvery passed since the last try.
func (w *Writer) Due(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f != nil && w.missed && (w.spaceBack || now.Sub(w.tried) >= retryEvery)
}

// Checkpoint writes the journal's records again (SPEC §5, §10): the
// events build returns, every record the caller holds in memory, then the
// events written while build ran (held until then, so nothing the records
// say is undone by a line written before them). When the journal's file
// was removed (Moved), its folder is made again (mode 0700) and the lines
// the old file held are copied to a new one there first. build is called
// without any lock of the Writer; it may take the caller's own.
//
// A checkpoint that succeeds ends the journal's failure (Failure is ""
// after it). The error says what failed, with the path; the journal then
// stays failing and Due again after retryEvery. A closed journal writes
// nothing and returns nil.
func (w *Writer) Checkpoint(build func() []Event) error {
	w.mu.Lock()
	if w.f == nil || w.holding {
		w.mu.Unlock()
		return nil
	}
	w.holding, w.tried, w.spaceBack = true, time.Now(), false
	w.mu.Unlock()
	evs := build()
	moved := w.Moved()
	w.mu.Lock()
	defer w.mu.Unlock()
	held := w.held
	w.holding, w.held = false, nil
	if w.f == nil {
		return nil // closed meanwhile: Close wrote what was held
	}
	var err error
	if moved {
		err = w.rewriteLocked(evs, held)
	} else {
		err = lineChunks(evs, w.appendLocked)
		if werr := w.appendLocked(held); err == nil {
			err = werr
		}
	}
	if err != nil {
		w.missed = true
		if w.err == nil {
			w.fail(err)
		}
		return fmt.Errorf("cannot write the journal %s again: %v", w.path, err)
	}
	w.err, w.missed = nil, false
	w.failed.Store(nil)
	return nil
}

// rewriteLocked makes the journal again at its path, whose file is gone:
// its folder, a new file holding the whole lines of the old one (still
// open), evs and held, put in place by rename(2) once complete. On an
// error the old file stays the one written. Call with mu held.
func (w *Writer) rewriteLocked(evs []Event, held []byte) error {
	if err := os.MkdirAll(filepath.Dir(w.path), 0o700); err != nil {
		return err
	}
	tmp := w.path + ".new"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	old, oldEnd, oldTorn := w.f, w.end, w.torn
	w.end, w.torn = 0, false
	_, err = io.Copy(f, io.NewSectionReader(old, 0, oldEnd))
	if err == nil {
		w.end = oldEnd
		put := func(b []byte) error { return w.writeTo(f, b) }
		if err = lineChunks(evs, put); err == nil {
			err = put(held)
		}
	}
	if err == nil {
		err = os.Rename(tmp, w.path)
	}
	if err != nil {
		_ = f.Close() // removed below: nothing of it is kept
		_ = os.Remove(tmp)
		w.end, w.torn = oldEnd, oldTorn
		return err
	}
	_ = old.Close() // removed already: nothing more reaches it
	w.f = f
	return nil
}

// Close closes the journal; later writes do nothing. Lines held for a
// checkpoint being built are written first. It returns the file's close
// error, nil when closed already.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	if w.holding {
		w.holding = false
		_ = w.writeTo(w.f, w.held) // a failure is said by Failure
		w.held = nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
