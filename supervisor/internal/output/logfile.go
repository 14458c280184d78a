package output

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/supervisor/proto"
)

const (
	// writeBehindChunk is how many bytes of a log are written between two
	// calls of writeBehind.
	writeBehindChunk = 8 << 20
	// cachedLogBytes is how many of a log's newest bytes writeBehind
	// leaves in the page cache, for readers of the log as it is written.
	cachedLogBytes = 2 * writeBehindChunk
	// tailParts is how many files the tail of a capped log is kept in: the
	// oldest goes when another starts, so the tail keeps at least 3/4 of
	// its share of the cap.
	tailParts = 4
)

// logFile is a submission's log as its output writes it (SPEC §5): the
// child's bytes, unchanged and in order, in one file, <seq>-<id>.log, or,
// under a cap (--max-log-size) or the free-space floor (Space), in parts
// (logread.go says the layout). Under a cap of max bytes the head file
// keeps the first max/2 bytes, ending at the last line end that fits;
// the rest goes to tail parts of max/2/tailParts bytes each, each cut at a
// line end where one fits (mid-line only for a line longer than a part),
// the oldest removed when a fifth begins (in the background: every file
// together stays under max, give or take the one part being removed),
// and the end, which holds the answer, is kept. While the floor holds
// logging back, bytes are counted, not written; once it lets go, a new
// part begins at the next line start.
//
// A flood of output would fill the page cache with gigabytes of a log
// nobody reads again soon, and the kernel would spend more CPU on fresh
// page-cache pages than on anything else the output costs (about 2 CPU s
// per GB on the project's VM, against 0.4 with pages it has used before):
// every writeBehindChunk bytes, the writeback of the bytes written since
// the last time is started (sync_file_range(2), without waiting), and the
// bytes older than the newest cachedLogBytes, written back by then, are
// dropped from the page cache (posix_fadvise(2) POSIX_FADV_DONTNEED), so
// a flood keeps reusing the same few megabytes of page cache. A log that
// stays under writeBehindChunk is left to the kernel. Not safe for
// concurrent use (the Output's, under feedMu).
type logFile struct {
	cur  logPart // the file being written; f is nil between parts
	base string  // the head file's path, <seq>-<id>.log
	err  error   // the first error; nothing is written after it

	max      int64 // the cap, in bytes; 0: none
	offset   int64 // the stream offset of the next byte of the child's
	headSize int64 // bytes written to the head's files
	headEnd  int64 // where the head ended in the stream; -1 while it grows
	tails    []tailPart
	capped   int64 // bytes in the tail parts the cap removed
	// removing counts the removals of tail parts in flight: a file whose
	// pages are still being written back makes unlink(2) wait for them,
	// so the oldest part goes in a goroutine of its own, not in the feed
	// (BENCHMARKS.md); removeErr holds the first that failed.
	removing  sync.WaitGroup
	removeErr atomic.Pointer[error]
	space     *Space
	paused    bool  // the floor holds logging back
	lost      int64 // bytes not written while paused
	resumed   bool  // the floor let go: the next part starts at a line start
	// events are what the writer has to say on screen since the Output
	// last took them (cap reached, paused, resumed): logEvent.
	events []logEvent
}

// logPart is one file of a log being written.
type logPart struct {
	f       *os.File
	size    int64 // bytes in the file
	behind  int64 // writeback was started for the bytes before this offset
	dropped int64 // the page cache was asked to drop the bytes before this
}

// tailPart is a tail file on disk.
type tailPart struct {
	path   string
	offset int64 // stream offset of its first byte
	size   int64 // its bytes, once it ended
}

// logEvent is something the writer says once, in the log pane.
type logEvent int

const (
	eventCapped  logEvent = iota + 1 // the head is full: from now on only the tail is kept
	eventPaused                      // the floor holds logging back
	eventResumed                     // the floor let go
)

// open attaches f, the head file (its current size is where writing
// starts), under a cap of limit bytes (0: none) and the floor space (nil:
// none).
func (l *logFile) open(f *os.File, limit int64, space *Space) {
	l.cur = logPart{f: f}
	l.base, l.max, l.space, l.headEnd = f.Name(), limit, space, -1
	if fi, err := f.Stat(); err == nil {
		l.cur.size = fi.Size()
		l.cur.behind, l.cur.dropped = l.cur.size, l.cur.size
		l.offset, l.headSize = l.cur.size, l.cur.size
	}
}

// write appends p as the cap and the floor allow, and reports a write
// failure once: the first time one happens (later calls write nothing).
func (l *logFile) write(p []byte) (failed error) {
	if l.base == "" || l.err != nil {
		return nil
	}
	if !l.space.allow(len(p)) {
		if !l.paused {
			l.paused = true
			l.events = append(l.events, eventPaused)
			l.endPart()
		}
		l.offset += int64(len(p))
		l.lost += int64(len(p))
		return nil
	}
	if l.paused {
		l.paused, l.resumed = false, true
		l.events = append(l.events, eventResumed)
	}
	if l.resumed {
		// what is left of the line the pause cut is not written either
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.offset += int64(len(p))
			l.lost += int64(len(p))
			return nil
		}
		l.offset += int64(i + 1)
		l.lost += int64(i + 1)
		p, l.resumed = p[i+1:], false
		if err := l.startPart(true); err != nil {
			return l.fail(err)
		}
	}
	for len(p) > 0 {
		n := len(p)
		switch {
		case l.max <= 0:
		case l.headEnd < 0:
			n = fitLines(p, l.max/2-l.headSize, l.headSize == 0)
			if n < len(p) {
				l.headEnd = l.offset + int64(n)
				l.events = append(l.events, eventCapped)
			}
		default:
			if l.cur.f == nil {
				if err := l.startPart(false); err != nil {
					return l.fail(err)
				}
			}
			n = fitLines(p, l.partMax()-l.cur.size, l.cur.size == 0)
		}
		if n > 0 {
			if err := l.writePart(p[:n]); err != nil {
				return l.fail(err)
			}
			if l.headEnd < 0 {
				l.headSize += int64(n)
			}
		}
		if n < len(p) {
			l.endPart()
		}
		l.offset += int64(n)
		p = p[n:]
	}
	return nil
}

// partMax is the size of a tail part (at least 1).
func (l *logFile) partMax() int64 { return max(1, (l.max-l.max/2)/tailParts) }

// fitLines returns how much of p fits in room bytes, cut after the last
// line end that fits; all of p when it fits whole. A file with nothing in
// it yet (empty) takes room bytes of a line longer than that; a file with
// something in it takes none of it.
func fitLines(p []byte, room int64, empty bool) int {
	if int64(len(p)) <= room {
		return len(p)
	}
	if room <= 0 {
		return 0
	}
	if i := bytes.LastIndexByte(p[:room], '\n'); i >= 0 {
		return i + 1
	}
	if empty {
		return int(room)
	}
	return 0
}

// startPart begins the next file of the log at the current offset: a tail
// part, or, while the head grows (after a pause), a head part. afterPause
// marks its name (lowSpaceSuffix) so readers say why bytes are missing
// before it. The oldest tail part goes when the tail would hold more than
// tailParts.
func (l *logFile) startPart(afterPause bool) error {
	l.endPart()
	kind := partTail
	if l.max <= 0 || l.headEnd < 0 {
		kind = partHead
	}
	name := partName(l.base, kind, l.offset, afterPause)
	if kind == partTail {
		if err := l.removeErr.Load(); err != nil {
			return *err
		}
		for len(l.tails) >= tailParts {
			l.removing.Add(1)
			go func(path string) {
				defer l.removing.Done()
				if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
					l.removeErr.CompareAndSwap(nil, &err)
				}
			}(l.tails[0].path)
			l.capped += l.tails[0].size
			l.tails = l.tails[1:]
		}
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	l.cur = logPart{f: f}
	if kind == partTail {
		l.tails = append(l.tails, tailPart{path: name, offset: l.offset})
	}
	return nil
}

// partName is the path of a part of the log base beginning at stream
// offset off: <base>.h<off> (the head, after a pause) or <base>.t<off> (the
// tail), with lowSpaceSuffix when it begins after a pause.
func partName(base string, kind byte, off int64, afterPause bool) string {
	name := base + "." + string(kind) + strconv.FormatInt(off, 10)
	if afterPause {
		name += lowSpaceSuffix
	}
	return name
}

// writePart writes p to the current file.
func (l *logFile) writePart(p []byte) error {
	c := &l.cur
	if c.f == nil {
		if err := l.startPart(false); err != nil {
			return err
		}
	}
	n, err := c.f.Write(p)
	c.size += int64(n)
	if err != nil {
		return err
	}
	if c.size-c.behind >= writeBehindChunk {
		c.writeBehind()
	}
	return nil
}

// endPart closes the current file; the next write begins another.
func (l *logFile) endPart() {
	if l.cur.f == nil {
		return
	}
	if n := len(l.tails); n > 0 && l.tails[n-1].path == l.cur.f.Name() {
		l.tails[n-1].size = l.cur.size
	}
	if err := l.cur.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	l.cur = logPart{}
}

// fail records the first error and closes the file.
func (l *logFile) fail(err error) error {
	l.err = err
	if l.cur.f != nil {
		_ = l.cur.f.Close()
		l.cur = logPart{}
	}
	return err
}

// writeBehind starts the writeback of what was written since its last
// call and drops from the page cache what lies more than cachedLogBytes
// behind the end. Both are advice: an error costs only speed.
func (c *logPart) writeBehind() {
	fd := int(c.f.Fd())
	_ = unix.SyncFileRange(fd, c.behind, c.size-c.behind, unix.SYNC_FILE_RANGE_WRITE)
	c.behind = c.size
	if end := c.size - cachedLogBytes; end > c.dropped {
		_ = unix.Fadvise(fd, c.dropped, end-c.dropped, unix.FADV_DONTNEED)
		c.dropped = end
	}
}

// dropped returns the bytes of the child's output the log does not hold:
// those the cap dropped between the head and the tail, and those not
// written while the floor held logging back.
func (l *logFile) droppedBytes() int64 { return l.capped + l.lost }

// close closes the file, waits for the removals of tail parts, and
// returns the first error of the log: a failed write, else a failed close
// or removal.
func (l *logFile) close() error {
	l.endPart()
	l.removing.Wait()
	if err := l.removeErr.Load(); err != nil && l.err == nil {
		l.err = *err
	}
	return l.err
}

// name is the head file's path.
func (l *logFile) name() string { return l.base }

// SetLog attaches the submission's log file before its process starts: f
// is written from its current size on, under the cap and the floor of the
// Options, and closed by Finish (with the parts the cap made).
func (o *Output) SetLog(f *os.File) {
	o.feedMu.Lock()
	o.log.open(f, o.maxLog, o.space)
	o.feedMu.Unlock()
}

// failLog records that the log file could not be written: the failure in
// words with the path, for the agent's summary (SPEC §5), and a line in
// the scrollback where the log stops. Called with feedMu held.
func (o *Output) failLog(err error) {
	why := err
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		why = pe.Err // "file too large", "no space left on device"
	}
	msg := fmt.Sprintf("log file could not be written (%v): %s; output from here on is on screen only", why, o.log.name())
	first := o.logFailed.Swap(&msg) == nil
	o.say(msg)
	if first && o.logFailedHook != nil {
		o.logFailedHook()
	}
}

// sayLogEvents puts what the log writer has to say in the log pane.
// Called with feedMu held.
func (o *Output) sayLogEvents() {
	l := &o.log
	for _, ev := range l.events {
		switch ev {
		case eventCapped:
			half := proto.FormatSize(l.max / 2)
			o.say(fmt.Sprintf("the log file keeps the first %s of this output (above) and from here on its last %s (--max-log-size %s): the lines between stay on screen, not in %s",
				half, half, proto.FormatSize(l.max), filepath.Base(l.base)))
		case eventPaused:
			o.say(fmt.Sprintf("logging paused: %s; this output shows here but is not written to %s until space returns", o.space.why(), filepath.Base(l.base)))
		case eventResumed:
			o.say(fmt.Sprintf("logging resumed: %d bytes (%s) of this output were not written to its log file while free space was low", l.lost, proto.FormatBytes(l.lost)))
		}
		if o.logChanged != nil {
			o.logChanged()
		}
	}
	l.events = l.events[:0]
}

// LogFailure returns the log file's write failure in words with its path
// (SPEC §5), or "" when every write succeeded; a nil Output has none.
func (o *Output) LogFailure() string {
	if o == nil {
		return ""
	}
	if p := o.logFailed.Load(); p != nil {
		return *p
	}
	return ""
}

// LogDropped returns the bytes of the submission's output its log file
// does not hold (SPEC §5): dropped by the cap, or not written while free
// space was below the floor; 0 for a nil Output.
func (o *Output) LogDropped() int64 {
	if o == nil {
		return 0
	}
	return o.logDropped.Load()
}

// errLogRemoved is the failure of a log file removed while it was
// written (its state directory was removed).
var errLogRemoved = errors.New("removed with its folder")

// CheckLog looks whether the log file being written is still at its path
// and, when it is not (removed with the state directory), fails the log
// as a failed write does (SPEC §5): the failure, with the path, is the
// agent's and the log pane says where output goes on screen only. It
// reports whether it failed the log now.
func (o *Output) CheckLog() bool {
	o.feedMu.Lock()
	defer o.feedMu.Unlock()
	l := &o.log
	if l.base == "" || l.err != nil {
		return false
	}
	path := l.base
	if l.cur.f != nil {
		path = l.cur.f.Name()
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	o.failLog(l.fail(&fs.PathError{Op: "write", Path: path, Err: errLogRemoved}))
	return true
}
