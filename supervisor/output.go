package supervisor

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/subdash/subdash/supervisor/termtext"
)

// Stream numbers a submission's output streams.
type Stream int

// The output streams of a submission.
const (
	Stdout Stream = 0
	Stderr Stream = 1
)

const (
	// tailKeep is how many raw bytes of each stream are kept for last_output.
	tailKeep = 32 << 10
	// maxLastOutput is the length cap of last_output in characters (SPEC §4).
	maxLastOutput = 2000
	// truncatedMarker starts a cut last_output (SPEC §4).
	truncatedMarker = "...[truncated]"
	// defaultScrollbackBytes caps the text bytes held per submission, so that
	// ten thousand maximal lines cannot take gigabytes.
	defaultScrollbackBytes = 64 << 20
)

// output is the output pipeline of one submission: every byte goes to the log
// file, display lines go to a bounded scrollback, and a raw tail of each
// stream is kept for last_output. Feed may be called from the stdout and
// stderr readers concurrently; readers of the scrollback take only mu.
type output struct {
	feedMu sync.Mutex // serializes Feed; guards everything below up to mu
	log    logFile
	// logFailed holds, once a write to the log file failed, that failure
	// in words with the path (SPEC §5); readable without feedMu.
	logFailed atomic.Pointer[string]
	released  bool // the submission is over; see release
	conv      [2]*termtext.Converter
	tail      [2][]byte
	text      lineText // the display lines' text
	batch     lineBatch
	// lineHook, when set, receives every complete raw line of each stream
	// (without its line end), for structured agent output (SPEC §8).
	lineHook func(s Stream, line []byte)
	rawLine  [2][]byte

	mu      sync.RWMutex // guards sb and open
	sb      *scrollback
	open    [2]int64 // absolute number of each stream's partial line, or -1
	evicted bool     // sb was released to save memory; reload from the log file

	notify func() // called after each change, outside the locks
	// mem is the supervisor's display-line budget (nil: none); reclaim,
	// called outside the locks when a feed left it over its limit, gives
	// lines back (Supervisor.reclaimLines).
	mem     *lineMemory
	reclaim func(*output)
	// budget, when set, bounds the CPU the supervisor spends on feeds.
	budget *feedBudget
}

func newOutput(log *os.File, maxLines int, notify func(), budget *feedBudget) *output {
	o := &output{
		sb:     newScrollback(maxLines, defaultScrollbackBytes),
		open:   [2]int64{-1, -1},
		notify: notify,
		budget: budget,
	}
	if log != nil {
		o.log.open(log)
	}
	o.conv[Stdout] = termtext.NewConverter(termtext.DefaultMaxWidth)
	o.conv[Stderr] = termtext.NewConverter(termtext.DefaultMaxWidth)
	return o
}

// flushRawLines hands a pending unterminated raw line of each stream to
// lineHook, so that a structured submission's outcome is known before the
// pipes are closed (its main process ended while others still hold them).
func (o *output) flushRawLines() {
	o.feedMu.Lock()
	defer o.feedMu.Unlock()
	o.flushRawLinesLocked()
}

func (o *output) flushRawLinesLocked() {
	for s := Stdout; s <= Stderr; s++ {
		if o.lineHook != nil && len(o.rawLine[s]) > 0 {
			o.lineHook(s, trimCR(o.rawLine[s]))
			o.rawLine[s] = o.rawLine[s][:0]
		}
	}
}

// feed handles one chunk read from stream s.
func (o *output) feed(s Stream, p []byte) {
	if o.budget != nil {
		defer o.budget.release(o.budget.acquire())
	}
	o.feedMu.Lock()
	if o.released {
		o.feedMu.Unlock()
		return
	}
	if err := o.log.write(p); err != nil {
		o.failLog(err)
	}
	o.keepTail(s, p)
	if o.lineHook != nil {
		o.splitRaw(s, p)
	}
	o.batch.reset(&o.text, s)
	o.batch.skipped = o.conv[s].FeedTail(p, o.sb.maxLines, o.batch.add)
	lines := o.batch.lines(o.sb.maxLines)
	partial, hasPartial := Line{}, false
	if text, width, ok := o.conv[s].Partial(); ok {
		partial, hasPartial = Line{Text: o.text.put(text), Width: width, Stderr: s == Stderr, Partial: true}, true
	}
	o.publish(s, lines, o.batch.skipped, partial, hasPartial)
	o.feedMu.Unlock()
	if o.mem.over() && o.reclaim != nil {
		o.reclaim(o)
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
func (o *output) publish(s Stream, lines []Line, skipped int, partial Line, hasPartial bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.evicted {
		o.text.seal(-1) // nothing holds these lines
		o.text.recycle(0)
		return
	}
	for i, l := range lines {
		if i == 1 && skipped > 0 {
			o.sb.skip(skipped)
		}
		if o.open[s] >= 0 && o.sb.replace(o.open[s], l) {
			o.open[s] = -1
			continue
		}
		o.open[s] = -1
		o.sb.add(l)
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
	out     []Line
	skipped int
}

func (b *lineBatch) reset(text *lineText, s Stream) {
	b.text, b.stderr, b.out, b.skipped = text, s == Stderr, b.out[:0], 0
}

// add is the converter's emit function.
func (b *lineBatch) add(text []byte, width int) {
	b.out = append(b.out, Line{Text: b.text.put(text), Width: width, Stderr: b.stderr})
}

// lines returns the lines that can survive: the first (it may complete a
// partial line already on screen) and the newest max; the count of those
// between is left in b.skipped (the converter may have counted them
// already, without building them: FeedTail).
func (b *lineBatch) lines(max int) []Line {
	if keepFrom := len(b.out) - max; keepFrom > 1 {
		b.skipped = keepFrom - 1
		n := copy(b.out[1:], b.out[keepFrom:])
		clear(b.out[1+n:])
		b.out = b.out[:1+n]
	}
	return b.out
}

// keepTail keeps the last tailKeep raw bytes of stream s.
func (o *output) keepTail(s Stream, p []byte) {
	t := o.tail[s]
	if len(p) >= tailKeep {
		t = append(t[:0], p[len(p)-tailKeep:]...)
	} else {
		if len(t)+len(p) > 2*tailKeep {
			n := copy(t, t[len(t)-(tailKeep-len(p)):])
			t = t[:n]
		}
		t = append(t, p...)
	}
	o.tail[s] = t
}

// splitRaw hands the complete raw lines of stream s to lineHook. A line
// longer than maxRawLine is handed on cut at that size.
func (o *output) splitRaw(s Stream, p []byte) {
	const maxRawLine = 16 << 20
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(o.rawLine[s])+len(p) > maxRawLine {
				o.lineHook(s, append(o.rawLine[s], p...))
				o.rawLine[s] = o.rawLine[s][:0]
				return
			}
			o.rawLine[s] = append(o.rawLine[s], p...)
			return
		}
		line := p[:i]
		if len(o.rawLine[s]) > 0 {
			o.rawLine[s] = append(o.rawLine[s], line...)
			line = o.rawLine[s]
		}
		o.lineHook(s, trimCR(line))
		o.rawLine[s] = o.rawLine[s][:0]
		p = p[i+1:]
	}
}

// finish flushes both converters and the raw line splitter at the end of the
// submission and closes the log file.
func (o *output) finish() error {
	o.feedMu.Lock()
	for s := Stdout; s <= Stderr; s++ {
		o.batch.reset(&o.text, s)
		o.conv[s].Flush(o.batch.add)
		o.publish(s, o.batch.lines(o.sb.maxLines), o.batch.skipped, Line{}, false)
		o.mu.Lock()
		o.open[s] = -1
		o.mu.Unlock()
	}
	o.flushRawLinesLocked()
	err := o.log.close()
	o.feedMu.Unlock()
	if o.notify != nil {
		o.notify()
	}
	return err
}

// lastOutput builds last_output (SPEC §4): the tail of stdout and, after a
// blank line and "stderr:", the tail of stderr, escape sequences removed, at
// most maxLastOutput characters, starting with truncatedMarker when cut.
func (o *output) lastOutput() string { return o.tails(true) }

// stderrOutput is last_output made of the stderr tail alone.
func (o *output) stderrOutput() string { return o.tails(false) }

func (o *output) tails(withStdout bool) string {
	o.feedMu.Lock()
	var out string
	cut := len(o.tail[Stderr]) >= tailKeep
	if withStdout {
		out = strings.TrimRight(termtext.Plain(o.tail[Stdout]), " \t\r\n")
		cut = cut || len(o.tail[Stdout]) >= tailKeep
	}
	errText := strings.TrimRight(termtext.Plain(o.tail[Stderr]), " \t\r\n")
	o.feedMu.Unlock()
	return composeLastOutput(out, errText, cut)
}

// note adds a display line written by subdash itself (not by the child), for
// example that a new agent CLI session starts. It is not written to the log
// file, which holds only the child's bytes.
func (o *output) note(text string) {
	o.mu.Lock()
	if !o.evicted {
		o.sb.add(Line{Text: text, Width: utf8.RuneCountInString(text), Stderr: true})
		o.sb.settle()
	}
	o.mu.Unlock()
}

func composeLastOutput(out, errText string, cut bool) string {
	const sep = "\n\nstderr:\n"
	outN, errN := utf8.RuneCountInString(out), utf8.RuneCountInString(errText)
	total := outN
	if errN > 0 {
		total += errN + len(sep)
	}
	if outN == 0 && errN == 0 {
		return ""
	}
	if total <= maxLastOutput && !cut {
		if errN == 0 {
			return out
		}
		if outN == 0 {
			return "stderr:\n" + errText
		}
		return out + sep + errText
	}
	budget := maxLastOutput - utf8.RuneCountInString(truncatedMarker)
	if errN == 0 {
		return truncatedMarker + tailRunes(out, budget)
	}
	budget -= len(sep)
	outQuota := min(outN, max(budget/2, budget-errN))
	errQuota := budget - outQuota
	return truncatedMarker + tailRunes(out, outQuota) + sep + tailRunes(errText, errQuota)
}

// tailRunes returns the last n characters of s.
func tailRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	count := 0
	for i := len(s); i > 0; {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
		count++
		if count == n {
			return s[i:]
		}
	}
	return s
}

// window copies up to n lines starting at absolute line from. Their text
// is copied too (into one allocation), since the scrollback's blocks are
// reused once their lines are dropped (lineText).
func (o *output) window(from int64, n int) (first, total int64, lines []Line, evicted bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.evicted {
		return 0, 0, nil, true
	}
	if n > 0 {
		lines = o.sb.copyRange(make([]Line, 0, min(n, o.sb.n)), from, n)
		ownText(lines)
	}
	return o.sb.first, o.sb.total(), lines, false
}

// ownText gives lines text of their own: a copy in one allocation.
func ownText(lines []Line) {
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

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// release drops what only a live submission needs (the converters, the
// scratch batch, the raw tails and line splitter): a finished submission
// keeps its display lines only. Call it after finish and after last_output
// was computed.
func (o *output) release() {
	o.feedMu.Lock()
	o.released = true
	o.conv = [2]*termtext.Converter{}
	o.batch = lineBatch{}
	o.tail = [2][]byte{}
	o.rawLine = [2][]byte{}
	o.text = lineText{}
	o.feedMu.Unlock()
}

// evict releases the scrollback of a finished submission.
func (o *output) evict() {
	o.mu.Lock()
	if o.open[Stdout] < 0 && o.open[Stderr] < 0 && o.sb != nil {
		o.sb.detach()
		o.sb, o.evicted = nil, true
	}
	o.mu.Unlock()
}

// reload rebuilds an evicted scrollback from the log file. Both streams were
// written to one file, so reloaded lines do not say which stream they came
// from.
func (o *output) reload(path string, maxLines int) error {
	o.mu.RLock()
	evicted := o.evicted
	o.mu.RUnlock()
	if !evicted {
		return nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		// say so in the pane, in words, instead of failing (SPEC §10)
		sb := newScrollback(maxLines, defaultScrollbackBytes)
		text := "subdash: the log file of this submission is gone (" + path + "); its output cannot be shown"
		sb.add(Line{Text: text, Width: utf8.RuneCountInString(text), Stderr: true})
		o.mu.Lock()
		sb.attach(o.mem)
		o.sb, o.evicted = sb, false
		o.mu.Unlock()
		return nil
	}
	if err != nil {
		return &Error{CodeInternal, "cannot read log file " + path + ": " + err.Error()}
	}
	defer f.Close()
	sb := newScrollback(maxLines, defaultScrollbackBytes)
	conv := termtext.NewConverter(termtext.DefaultMaxWidth)
	add := func(text []byte, width int) { sb.add(Line{Text: string(text), Width: width}) }
	buf := make([]byte, readBufSize)
	for {
		n, err := f.Read(buf)
		conv.Feed(buf[:n], add)
		if err != nil {
			break
		}
	}
	conv.Flush(add)
	o.mu.Lock()
	sb.attach(o.mem)
	o.sb, o.evicted = sb, false
	o.mu.Unlock()
	return nil
}

// restoredOutput is the output of a submission restored from an earlier
// run: no display lines until LoadOutput reads them back from the log file
// (SPEC §10), so restored records cost no memory for output.
func restoredOutput() *output {
	return &output{open: [2]int64{-1, -1}, evicted: true, released: true}
}
