package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"runtime"
	"sync"
)

// Reading a journal's lines (Read, readRun). A journal that carries many
// records is large (tens of megabytes), and decoding its lines is most of
// a restoring host's start (SPEC §10): a journal
// of parallelFrom bytes or more is read in chunks of whole lines that the
// machine's cores decode at once, handed to the caller in line order.

// parallelFrom is the size from which a journal's lines are decoded on
// every core; chunk is how much of it one core decodes at a time.
const (
	parallelFrom = 1 << 20
	chunk        = 256 << 10
)

// Read reads the journal at path and hands fn each of its events, in line
// order. A line that cannot be read (damaged, or cut by a host killed
// mid-write) is skipped, and its number, counted from 1, is in damaged.
// The lines of events named in skip are passed over without being
// decoded (a checkpoint's "record" lines are large). The error is
// os.Open's (nothing read), or the read error that ended the reading at
// the line it names in damaged. A record line's record knows where its
// JSON is (recordAt).
func Read(path string, fn func(Event), skip ...string) (damaged []int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
	if fi, err := f.Stat(); err == nil && fi.Size() >= parallelFrom && runtime.GOMAXPROCS(0) > 1 {
		return readChunks(f, path, fn, skip)
	}
	return readSeq(f, path, fn, skip)
}

// readSeq is Read on this goroutine alone.
func readSeq(f *os.File, path string, fn func(Event), skip []string) (damaged []int, err error) {
	r := bufio.NewReaderSize(f, 64<<10)
	var long []byte // a line longer than r's buffer, put together
	var off int64
	for n := 1; ; n++ {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return append(damaged, n), err
		}
		if len(line) == 0 {
			return damaged, nil
		}
		at := off
		off += int64(len(line))
		ev, ok, read := decodeLine(line, path, at, skip)
		if !read {
			damaged = append(damaged, n)
		}
		if ok {
			fn(ev)
		}
	}
}

// decodeLine decodes the journal line read at off in path: ok false when
// it is of an event named in skip, read false when it cannot be read.
// A line that cannot be read may still end in a whole event (recovered):
// then read is false and ok true.
func decodeLine(line []byte, path string, off int64, skip []string) (ev Event, ok, read bool) {
	if skipped(line, skip) {
		return ev, false, true
	}
	read = true
	if json.Unmarshal(line, &ev) != nil || ev.Event == "" {
		var at int
		if ev, at = recovered(line); at == 0 {
			return ev, false, false
		}
		line, off, read = line[at:], off+int64(at), false
	}
	if contains(skip, ev.Event) {
		return ev, false, read
	}
	if ev.Event == "record" {
		recordAt(ev, line, path, off)
	}
	return ev, true, read
}

// eventStart is how every line Writer writes begins.
var eventStart = []byte(`{"time":"`)

// recovered returns the whole event that a damaged line ends in, and
// where in the line it begins; 0 when it ends in none. A journal written
// by a release before Writer cut failed writes back holds such lines: the
// part of a line a full disk cut, then the next event, written once space
// was back.
func recovered(line []byte) (Event, int) {
	for at := 1; at < len(line); {
		i := bytes.Index(line[at:], eventStart)
		if i < 0 {
			break
		}
		at += i
		var ev Event
		if json.Unmarshal(line[at:], &ev) == nil && ev.Event != "" {
			return ev, at
		}
		at++
	}
	return Event{}, 0
}

// lines is a chunk of whole lines of a journal, decoded by a worker.
type lines struct {
	buf   []byte
	off   int64 // buf's offset in the file
	first int   // the number of its first line, from 1
	next  int   // the number of the line after its last
	err   error // the read error after its lines (the last chunk)
	evs   []decodedLine
	done  chan struct{}
}

// decodedLine is one line of a chunk: its event, or that it could not be
// read (damaged) or was skipped.
type decodedLine struct {
	ev       Event
	n        int // its line number
	ok, read bool
}

// readChunks is readLines for a large journal: one goroutine reads chunks
// of whole lines, every core decodes them, and this one hands their events
// to fn in line order.
func readChunks(f *os.File, path string, fn func(Event), skip []string) (damaged []int, err error) {
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *lines, workers)
	ordered := make(chan *lines, 2*workers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				c.decode(path, skip)
			}
		}()
	}
	go func() {
		defer close(work)
		defer close(ordered)
		readInto(f, func(c *lines) bool {
			select {
			case ordered <- c:
			case <-stop:
				return false
			}
			work <- c
			return true
		})
	}()
	for c := range ordered {
		<-c.done
		for _, d := range c.evs {
			if !d.read {
				damaged = append(damaged, d.n)
			}
			if d.ok {
				fn(d.ev)
			}
		}
		if c.err != nil {
			return append(damaged, c.next), c.err
		}
		if cap(c.buf) == chunk {
			chunks.Put(c.buf[:0]) //nolint:staticcheck // a slice: its header is what the pool boxes
		}
	}
	return damaged, nil
}

// readInto reads f in chunks of whole lines (a line longer than chunk
// makes its chunk longer) and hands each to put, in order, until the end
// of f, a read error (in the last chunk's err) or put returns false.
func readInto(f *os.File, put func(*lines) bool) {
	var off int64
	n := 1
	var tail []byte
	for {
		var buf []byte
		if len(tail) < chunk/2 {
			buf = chunks.Get().([]byte)[:len(tail)]
		} else {
			buf = make([]byte, len(tail), 2*len(tail))
		}
		copy(buf, tail)
		var err error
		for {
			m, rerr := f.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			if rerr != nil {
				err = rerr
				break
			}
			if len(buf) == cap(buf) {
				if bytes.LastIndexByte(buf, '\n') >= 0 {
					break
				}
				buf = append(buf, 0)[:len(buf)] // a line longer than the chunk: grow it
			}
		}
		end := len(buf) // at the end of f, its last line even without a newline
		if !errors.Is(err, io.EOF) {
			end = bytes.LastIndexByte(buf, '\n') + 1
		}
		tail = append(tail[:0], buf[end:]...)
		c := &lines{buf: buf[:end], off: off, first: n, done: make(chan struct{})}
		if err != nil && !errors.Is(err, io.EOF) {
			c.err = err
		}
		n += bytes.Count(c.buf, []byte{'\n'})
		c.next = n
		off += int64(end)
		if !put(c) || err != nil {
			return
		}
	}
}

// chunks are the buffers of chunks decoded, for the next chunks.
var chunks = sync.Pool{New: func() any { return make([]byte, 0, chunk) }}

// decode decodes the lines of c.
func (c *lines) decode(path string, skip []string) {
	defer close(c.done)
	c.evs = make([]decodedLine, 0, bytes.Count(c.buf, []byte{'\n'})+1)
	n := c.first
	for start := 0; start < len(c.buf); n++ {
		end := len(c.buf)
		if i := bytes.IndexByte(c.buf[start:], '\n'); i >= 0 {
			end = start + i + 1
		}
		ev, ok, read := decodeLine(c.buf[start:end], path, c.off+int64(start), skip)
		if ok || !read {
			c.evs = append(c.evs, decodedLine{ev: ev, n: n, ok: ok, read: read})
		}
		start = end
	}
}

// skipped reports whether a journal line is of an event named in skip,
// without decoding it: Writer encodes "time", then "event" first.
func skipped(line []byte, skip []string) bool {
	if len(skip) == 0 {
		return false
	}
	const key = `"event":"`
	head := line[:min(len(line), 80)]
	i := bytes.Index(head, []byte(key))
	if i < 0 {
		return false
	}
	name := head[i+len(key):]
	j := bytes.IndexByte(name, '"')
	if j < 0 {
		return false
	}
	for _, s := range skip {
		if string(name[:j]) == s {
			return true
		}
	}
	return false
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
