package output

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/termtext"
)

// defaultScrollbackBytes caps the text bytes held per submission, so that
// ten thousand maximal lines cannot take gigabytes.
const defaultScrollbackBytes = 64 << 20

// Output is the output pipeline of one submission: every byte goes to the
// log file (logFile), display lines go to a bounded scrollback, and a raw
// tail of each stream is kept for last_output. Of a chunk (a read, or a
// flood's batch of reads: runner.StartRequest.Display) completing more
// lines than the scrollback keeps, only those it keeps are built
// (termtext's FeedTail); the others are counted, so line numbers stay
// absolute. The lines' text lives in reused blocks (lineText). Feed, Take
// and Display may be called from the stdout and stderr readers at once;
// readers of the scrollback (Window) take only mu.
type Output struct {
	feedMu sync.Mutex // serializes feeds; guards everything below up to mu
	log    logFile
	// logFailed holds, once a write to the log file failed, that failure
	// in words with the path (SPEC §5); readable without feedMu.
	logFailed atomic.Pointer[string]
	// logFailedHook, when set, is called (with feedMu held) when the first
	// write to the log file fails: the agent's summary changed.
	logFailedHook func()
	// maxLog and space are the cap and the free-space floor of the log
	// (Options.MaxLogSize, Options.Space); logDropped the bytes it misses
	// (LogDropped), readable without feedMu; logChanged and noted the
	// Options' LogChanged and Noted.
	maxLog     int64
	space      *Space
	logDropped atomic.Int64
	logChanged func()
	noted      func(text string)
	released   bool // the submission is over; see Release
	conv       [2]*termtext.Converter
	tail       [2][]byte
	text       lineText // the display lines' text
	batch      lineBatch
	// lineHook, when set, receives every complete raw line of each stream
	// (without its line end), for structured agent output (SPEC §8).
	lineHook func(s runner.Stream, line []byte)
	rawLine  [2][]byte

	mu      sync.RWMutex // guards sb and open
	sb      *scrollback
	open    [2]int64 // absolute number of each stream's partial line, or -1
	evicted bool     // sb was released to save memory; Reload reads it from the log file

	notify func() // called after each change, outside the locks
	// mem is the display-line budget of every output of the host (nil:
	// none); a feed that leaves it over its limit gives lines back
	// (Memory.reclaim), outside the locks.
	mem *Memory
	// budget, when set, bounds the CPU the host spends on feeds.
	budget *Budget
	// rate counts the bytes read per bucket of time (Rate); written by
	// the feeds, read without a lock.
	rate rate
}

// Options are what New makes an Output with; every field may be left zero.
type Options struct {
	// MaxLines is --scrollback: the display lines kept (at least 1).
	MaxLines int
	// Notify is called after each change of the output, outside its
	// locks: every feed, the end, a note.
	Notify func()
	// LogFailed is called once, when the first write to the log file
	// fails (LogFailure then says why): the agent's summary changed.
	LogFailed func()
	// RawLine receives every complete raw line of each stream, without its
	// line end (a line longer than 16 MiB cut at that size), in order, for
	// structured agent output (SPEC §8).
	RawLine func(s runner.Stream, line []byte)
	// Memory is the display-line budget shared with the host's other
	// outputs (SPEC §5); nil: none.
	Memory *Memory
	// Budget bounds the CPU the host spends on feeds; nil: none.
	Budget *Budget
	// MaxLogSize is --max-log-size: the bytes the log files of the
	// submission may hold, head and tail (SPEC §5); 0: no cap.
	MaxLogSize int64
	// Space is the host's free-space floor of the log files; nil: none.
	Space *Space
	// LogChanged is called (with the output's feed lock held: do not call
	// back into the Output) when the log's state changed in a way the
	// agent's summary shows: the cap began dropping, logging paused or
	// resumed (LogDropped).
	LogChanged func()
	// Noted gets each line the output itself writes in the log pane
	// (Note), without its "subdash: ": the cap reached, logging paused or
	// resumed, a failed log file; for a transcript to say it too.
	Noted func(text string)
}

// New returns the output of a submission about to start: no log file yet
// (SetLog), no lines.
func New(opt Options) *Output {
	o := &Output{
		sb:            newScrollback(opt.MaxLines, defaultScrollbackBytes),
		open:          [2]int64{-1, -1},
		notify:        opt.Notify,
		logFailedHook: opt.LogFailed,
		lineHook:      opt.RawLine,
		mem:           opt.Memory,
		budget:        opt.Budget,
		maxLog:        max(0, opt.MaxLogSize),
		space:         opt.Space,
		logChanged:    opt.LogChanged,
		noted:         opt.Noted,
	}
	if o.mem != nil {
		o.sb.attach(o.mem)
	}
	return o
}

// Feed handles one chunk read from stream s (runner.StartRequest.Output):
// Take, then Display; p is only read during the call.
func (o *Output) Feed(s runner.Stream, p []byte) {
	o.within(func() {
		o.logLocked(s, p)
		o.displayLocked(s, p)
	})
	o.fed()
}

// Take takes one chunk read from stream s (runner.StartRequest.Log): the
// log file, the raw tail of last_output and the raw lines of structured
// output get it at once; Display must get the same bytes later. p is only
// read during the call.
func (o *Output) Take(s runner.Stream, p []byte) {
	o.within(func() { o.logLocked(s, p) })
	if o.notify != nil {
		o.notify()
	}
}

// Display turns chunks of stream s that Take already took into display
// lines (runner.StartRequest.Display); p may join several of them. Of a p
// that completes more lines than the scrollback keeps, only the kept lines
// are built (termtext's FeedTail). p is only read during the call.
func (o *Output) Display(s runner.Stream, p []byte) {
	o.within(func() { o.displayLocked(s, p) })
	o.fed()
}

// within runs f with feedMu held, inside the output budget.
func (o *Output) within(f func()) {
	if o.budget != nil {
		defer o.budget.release(o.budget.acquire())
	}
	o.feedMu.Lock()
	defer o.feedMu.Unlock()
	f()
}

func (o *Output) logLocked(s runner.Stream, p []byte) {
	if o.released {
		return
	}
	if err := o.log.write(p); err != nil {
		o.failLog(err)
	}
	o.rate.add(time.Now(), len(p))
	if len(o.log.events) > 0 {
		o.logDropped.Store(o.log.droppedBytes())
		o.sayLogEvents()
	} else if o.log.max > 0 || o.log.lost > 0 {
		o.logDropped.Store(o.log.droppedBytes())
	}
	o.keepTail(s, p)
	if o.lineHook != nil {
		o.splitRaw(s, p)
	}
}

func (o *Output) displayLocked(s runner.Stream, p []byte) {
	if o.released {
		return
	}
	o.batch.reset(&o.text, s)
	if o.conv[s] == nil { // made on the stream's first output: most agents never write to stderr
		o.conv[s] = termtext.NewConverter(termtext.DefaultMaxWidth)
	}
	o.batch.skipped = o.conv[s].FeedTail(p, o.sb.maxLines, o.batch.add)
	lines := o.batch.lines(o.sb.maxLines)
	partial, hasPartial := proto.Line{}, false
	if text, width, ok := o.conv[s].Partial(); ok {
		partial, hasPartial = proto.Line{Text: o.text.put(text), Width: width, Stderr: s == runner.Stderr, Partial: true}, true
	}
	o.publish(s, lines, o.batch.skipped, partial, hasPartial)
}

// fed gives display lines back when the budget is exceeded and tells the
// host the output changed. Called without locks.
func (o *Output) fed() {
	if o.mem.over() {
		o.mem.reclaim(o)
	}
	if o.notify != nil {
		o.notify()
	}
}

// publish moves completed lines and the partial line of stream s into the
// scrollback. skipped lines ended after lines[0] and before lines[1]: they
// would be trimmed at once, so they are only counted. A partial line keeps
// its slot and is updated in place until it ends, like a terminal row.
// Called with feedMu held.
func (o *Output) publish(s runner.Stream, lines []proto.Line, skipped int, partial proto.Line, hasPartial bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.evicted {
		o.text.seal(-1) // nothing holds these lines
		o.text.recycle(0)
		return
	}
	if len(lines) > 0 {
		if o.open[s] < 0 || !o.sb.replace(o.open[s], lines[0]) {
			o.sb.add(lines[0])
		}
		o.open[s] = -1
		if skipped > 0 {
			o.sb.skip(skipped)
		}
		o.sb.addAll(lines[1:])
	}
	if hasPartial {
		if o.open[s] < 0 || !o.sb.replace(o.open[s], partial) {
			o.open[s] = o.sb.add(partial)
		}
	}
	o.sb.settle()
	o.text.seal(o.sb.total() - 1)
	o.text.recycle(o.sb.first)
}

// lineBatch collects the lines one feed produces, their text already in
// the output's blocks (lineText).
type lineBatch struct {
	text    *lineText
	stderr  bool
	out     []proto.Line
	skipped int
}

func (b *lineBatch) reset(text *lineText, s runner.Stream) {
	b.text, b.stderr, b.out, b.skipped = text, s == runner.Stderr, b.out[:0], 0
}

// add is the converter's emit function.
func (b *lineBatch) add(text []byte, width int) {
	b.out = append(b.out, proto.Line{Text: b.text.put(text), Width: width, Stderr: b.stderr})
}

// lines returns the lines that can survive: the first (it may complete a
// partial line already on screen) and the newest keep; the count of those
// between is left in b.skipped (the converter may have counted them
// already, without building them: FeedTail).
func (b *lineBatch) lines(keep int) []proto.Line {
	if keepFrom := len(b.out) - keep; keepFrom > 1 {
		b.skipped += keepFrom - 1
		n := copy(b.out[1:], b.out[keepFrom:])
		clear(b.out[1+n:])
		b.out = b.out[:1+n]
	}
	return b.out
}

// Finish flushes both converters and the raw line splitter at the end of
// the submission and closes the log file. It returns the log file's first
// failure: a write (LogFailure says it too) or the close.
func (o *Output) Finish() error {
	o.feedMu.Lock()
	for s := runner.Stdout; s <= runner.Stderr; s++ {
		if o.conv[s] == nil {
			continue // the stream wrote nothing to display
		}
		o.batch.reset(&o.text, s)
		o.conv[s].Flush(o.batch.add)
		o.publish(s, o.batch.lines(o.sb.maxLines), o.batch.skipped, proto.Line{}, false)
		o.mu.Lock()
		o.open[s] = -1
		o.mu.Unlock()
	}
	o.flushRawLinesLocked()
	err := o.log.close()
	if n := o.log.droppedBytes(); n > 0 {
		o.logDropped.Store(n)
		var why []string
		if o.log.capped > 0 {
			why = append(why, fmt.Sprintf("%s dropped by --max-log-size %s", proto.FormatBytes(o.log.capped), proto.FormatSize(o.log.max)))
		}
		if o.log.lost > 0 {
			why = append(why, fmt.Sprintf("%s not written while free space was low", proto.FormatBytes(o.log.lost)))
		}
		o.say(fmt.Sprintf("%d bytes of this output are not in its log file %s (%s); the pager, ctl logs and a read-back mark where",
			n, filepath.Base(o.log.name()), strings.Join(why, ", ")))
	}
	o.feedMu.Unlock()
	if o.notify != nil {
		o.notify()
	}
	return err
}

// say puts a line subdash writes itself in the log pane ("subdash: "
// and text) and hands text to Options.Noted.
func (o *Output) say(text string) {
	o.Note("subdash: " + text)
	if o.noted != nil {
		o.noted(text)
	}
}

// Note adds a display line written by subdash itself (not by the child),
// for example that a new agent CLI session starts: text is plain text, on
// stderr's side. It is not written to the log file, which holds only the
// child's bytes.
func (o *Output) Note(text string) {
	o.mu.Lock()
	if !o.evicted {
		o.sb.add(proto.Line{Text: text, Width: utf8.RuneCountInString(text), Stderr: true})
		o.sb.settle()
	}
	o.mu.Unlock()
}

// Window copies up to n display lines starting at absolute line from (the
// first line the submission printed is 0), and returns them with the
// absolute number of the oldest line held and one past the newest. The
// caller owns lines; their text is copied too (into one allocation), since
// the scrollback's blocks are reused once their lines are dropped
// (lineText). evicted is true when the lines were released to save memory
// (Reload reads them back); nothing else is returned then.
func (o *Output) Window(from int64, n int) (first, total int64, lines []proto.Line, evicted bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.evicted {
		return 0, 0, nil, true
	}
	if n > 0 {
		lines = o.sb.copyRange(make([]proto.Line, 0, min(n, o.sb.n)), from, n)
		ownText(lines)
	}
	return o.sb.first, o.sb.total(), lines, false
}

// lastLineLook is how many of the newest display lines LastLine looks
// at for one with text.
const lastLineLook = 16

// LastLine returns the newest display line with text in it (a partial one
// too), as one clean line of at most n runes (termtext.OneLine: escape
// sequences and control characters removed, the log pane's cleaning),
// looking at the newest lastLineLook lines only; "" when none of them
// has text or the lines were released from memory. The string is the
// caller's. Cost: those lines' length, whatever the scrollback holds.
func (o *Output) LastLine(n int) string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.evicted {
		return ""
	}
	for abs := o.sb.total() - 1; abs >= max(o.sb.first, o.sb.total()-lastLineLook); abs-- {
		if s := termtext.OneLine(o.sb.ring[o.sb.slot(abs)].Text, n); s != "" {
			return strings.Clone(s) // the line's text is in a reused block
		}
	}
	return ""
}

// ownText gives lines text of their own: a copy in one allocation.
func ownText(lines []proto.Line) {
	size := 0
	for _, l := range lines {
		size += len(l.Text)
	}
	buf := make([]byte, 0, size)
	for i, l := range lines {
		off := len(buf)
		buf = append(buf, l.Text...)
		if len(l.Text) > 0 {
			lines[i].Text = unsafe.String(&buf[off], len(l.Text))
		}
	}
}

// Release drops what only a live submission needs (the converters, the
// scratch batch, the raw tails and line splitter): a finished submission
// keeps its display lines only. Call it after Finish and after last_output
// was computed (LastOutput); later feeds are ignored.
func (o *Output) Release() {
	o.feedMu.Lock()
	o.released = true
	o.conv = [2]*termtext.Converter{}
	o.batch = lineBatch{}
	o.tail = [2][]byte{}
	o.rawLine = [2][]byte{}
	o.text = lineText{}
	o.feedMu.Unlock()
}
