package output

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/termtext"
)

// readBackBuf is the size of the reads of a log file read back (Reload):
// 1 MiB, as the largest read of a child's pipe.
const readBackBuf = 1 << 20

// evict releases the scrollback of a finished submission: its lines leave
// the budget, Window reports it evicted until Reload.
func (o *Output) evict() {
	o.mu.Lock()
	if o.open[runner.Stdout] < 0 && o.open[runner.Stderr] < 0 && o.sb != nil {
		o.sb.detach()
		o.sb, o.evicted = nil, true
	}
	o.mu.Unlock()
}

// Reload rebuilds an evicted scrollback from the log at path (OpenLog),
// keeping its newest maxLines lines, each gap the cap or the floor left as
// its marker line (Gap.Marker); it does nothing when the lines are held.
// Both streams were written to one file, so reloaded lines do not say
// which stream they came from. A log file that is gone gives one line
// saying so (SPEC §10), not an error; the error says why the file could
// not be read. It does file I/O: call it off the UI goroutine.
func (o *Output) Reload(path string, maxLines int) error {
	o.mu.RLock()
	evicted := o.evicted
	o.mu.RUnlock()
	if !evicted {
		return nil
	}
	lg, err := OpenLog(path)
	if errors.Is(err, fs.ErrNotExist) {
		// say so in the pane, in words, instead of failing (SPEC §10)
		sb := newScrollback(maxLines, defaultScrollbackBytes)
		sb.add(noteLine("subdash: the log file of this submission is gone (" + path + "); its output cannot be shown"))
		o.mu.Lock()
		sb.attach(o.mem)
		o.sb, o.evicted = sb, false
		o.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read log file %s: %w", path, err)
	}
	defer lg.Close()
	sb := newScrollback(maxLines, defaultScrollbackBytes)
	conv := termtext.NewConverter(termtext.DefaultMaxWidth)
	var text lineText
	var batch lineBatch
	keep := func() {
		for i, l := range batch.lines(maxLines) {
			if i == 1 && batch.skipped > 0 {
				sb.skip(batch.skipped)
			}
			sb.add(l)
		}
		text.seal(sb.total() - 1)
		text.recycle(sb.first)
	}
	flush := func() {
		batch.reset(&text, runner.Stdout)
		conv.Flush(batch.add)
		keep()
	}
	buf := make([]byte, readBackBuf)
	err = lg.Walk(func(r io.Reader) error {
		for {
			n, err := r.Read(buf)
			batch.reset(&text, runner.Stdout)
			batch.skipped = conv.FeedTail(buf[:n], maxLines, batch.add)
			keep()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}, func(g Gap) error {
		flush()
		sb.add(noteLine(g.Marker()))
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot read log file %s: %w", path, err)
	}
	flush()
	o.mu.Lock()
	sb.attach(o.mem)
	o.sb, o.evicted = sb, false
	o.mu.Unlock()
	return nil
}

// noteLine is a display line subdash writes itself (plain text).
func noteLine(text string) proto.Line {
	return proto.Line{Text: text, Width: utf8.RuneCountInString(text), Stderr: true}
}

// Restored returns the output of a submission restored from an earlier
// run: no display lines until Reload reads them back from the log file
// (SPEC §10), so restored records cost no memory for output; mem is the
// budget they then count into (nil: none).
func Restored(mem *Memory) *Output {
	return &Output{open: [2]int64{-1, -1}, evicted: true, released: true, mem: mem}
}
