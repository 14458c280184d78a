package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

const (
	// writeBehindChunk is how many bytes of a log are written between two
	// calls of writeBehind.
	writeBehindChunk = 8 << 20
	// cachedLogBytes is how many of a log's newest bytes writeBehind
	// leaves in the page cache, for readers of the log as it is written.
	cachedLogBytes = 2 * writeBehindChunk
)

// logFile is a submission's log file as its output writes it: every byte
// of the child's output, unchanged and in order (SPEC §5). A flood of
// output would fill the page cache with gigabytes of a log nobody reads
// again soon, and the kernel would spend more CPU on fresh page-cache
// pages than on anything else the output costs (about 2 CPU s per GB on
// the project's VM, against 0.4 with pages it has used before): every
// writeBehindChunk bytes, the writeback of the bytes written since the
// last time is started (sync_file_range(2), without waiting), and the
// bytes older than the newest cachedLogBytes, written back by then, are
// dropped from the page cache (posix_fadvise(2) POSIX_FADV_DONTNEED), so
// a flood keeps reusing the same few megabytes of page cache. A log that
// stays under writeBehindChunk is left to the kernel. Not safe for
// concurrent use (the Output's, under feedMu).
type logFile struct {
	f       *os.File
	err     error // the first error; nothing is written after it
	size    int64 // bytes in the file
	behind  int64 // writeback was started for the bytes before this offset
	dropped int64 // the page cache was asked to drop the bytes before this
}

// open attaches f, whose current size writing starts from.
func (l *logFile) open(f *os.File) {
	l.f = f
	if fi, err := f.Stat(); err == nil {
		l.size = fi.Size()
		l.behind, l.dropped = l.size, l.size
	}
}

// write appends p, and reports a write failure once: the first time one
// happens (later calls write nothing).
func (l *logFile) write(p []byte) (failed error) {
	if l.f == nil || l.err != nil {
		return nil
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	if err != nil {
		l.err = err
		return err
	}
	if l.size-l.behind >= writeBehindChunk {
		l.writeBehind()
	}
	return nil
}

// writeBehind starts the writeback of what was written since its last
// call and drops from the page cache what lies more than cachedLogBytes
// behind the end. Both are advice: an error costs only speed.
func (l *logFile) writeBehind() {
	fd := int(l.f.Fd())
	_ = unix.SyncFileRange(fd, l.behind, l.size-l.behind, unix.SYNC_FILE_RANGE_WRITE)
	l.behind = l.size
	if end := l.size - cachedLogBytes; end > l.dropped {
		_ = unix.Fadvise(fd, l.dropped, end-l.dropped, unix.FADV_DONTNEED)
		l.dropped = end
	}
}

// close closes the file and returns the first error of the log: a failed
// write, else a failed close.
func (l *logFile) close() error {
	if l.f == nil {
		return nil
	}
	if err := l.f.Close(); l.err == nil {
		l.err = err
	}
	return l.err
}

// name is the file's path.
func (l *logFile) name() string {
	if l.f == nil {
		return ""
	}
	return l.f.Name()
}

// SetLog attaches the submission's log file before its process starts: f
// is written from its current size on, and closed by Finish.
func (o *Output) SetLog(f *os.File) {
	o.feedMu.Lock()
	o.log.open(f)
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
	o.Note("subdash: " + msg)
	if first && o.logFailedHook != nil {
		o.logFailedHook()
	}
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
