package output

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// A submission's log on disk (SPEC §5): <seq>-<id>.log holds its output
// from the first byte; under --max-log-size it holds the head, and the tail
// is in parts <seq>-<id>.log.t<offset>, where offset is the part's first
// byte's place in the child's output; after a pause of the free-space
// floor, the next part is <seq>-<id>.log.h<offset>.lowspace (still the
// head) or .t<offset>.lowspace. Between two parts whose bytes do not meet,
// output is missing: a Gap. Every part but the first starts at a line
// start, unless a line was longer than a part.

// The kinds of parts, the letter before their offset.
const (
	partHead byte = 'h'
	partTail byte = 't'
	// lowSpaceSuffix ends the name of a part begun when the free-space
	// floor let logging go on again.
	lowSpaceSuffix = ".lowspace"
)

// Gap is a run of the child's output a log does not hold, with its
// marker line (proto.LogGap.Marker).
type Gap = proto.LogGap

// Log is a submission's log opened for reading: the parts it had when
// opened, in order (a part the cap removes later stays readable). Read
// it with Read (the child's bytes only), Walk (the bytes and the gaps),
// WriteLines; Close it.
type Log struct {
	parts []logFilePart
	gaps  []Gap // gaps[i] is before parts[i+1]; Bytes 0 where none
	r     io.Reader
}

type logFilePart struct {
	f        *os.File
	offset   int64
	size     int64 // when opened; the last part may still grow
	kind     byte
	lowSpace bool
}

// OpenLog opens the log whose head file is path. An error wraps
// fs.ErrNotExist when the head file is gone (removed by --log-retention or
// by hand).
func OpenLog(path string) (*Log, error) {
	for try := 0; ; try++ {
		l, err := openLog(path)
		if err == nil || try == 3 || !errors.Is(err, errPartGone) {
			return l, err
		}
	}
}

// errPartGone: a part listed was removed (by the cap) before it was
// opened; list again.
var errPartGone = errors.New("a log part went while it was opened")

func openLog(path string) (*Log, error) {
	head, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	l := &Log{parts: []logFilePart{{f: head, kind: partHead}}}
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		l.Close()
		return nil, err
	}
	for _, e := range entries {
		p, ok := parsePart(base, e.Name())
		if !ok {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			l.Close()
			if errors.Is(err, fs.ErrNotExist) {
				return nil, errPartGone
			}
			return nil, err
		}
		p.f = f
		l.parts = append(l.parts, p)
	}
	sort.SliceStable(l.parts[1:], func(i, j int) bool { return l.parts[1+i].offset < l.parts[1+j].offset })
	readers := make([]io.Reader, len(l.parts))
	var at int64
	for i := range l.parts {
		p := &l.parts[i]
		if fi, err := p.f.Stat(); err == nil {
			p.size = fi.Size()
		}
		if i > 0 {
			prev := l.parts[i-1]
			g := Gap{At: at, Bytes: max(0, p.offset-(prev.offset+prev.size)), LowSpace: p.lowSpace}
			g.Cap = p.kind == partTail && prev.kind == partHead && (!p.lowSpace || g.Bytes > 0)
			switch {
			case g.Bytes == 0:
				g.Cap, g.LowSpace = false, false
			case !g.Cap && !g.LowSpace:
				g.Cap = true // parts do not meet but by the cap or the floor
			}
			l.gaps = append(l.gaps, g)
		}
		readers[i] = p.f
		if i < len(l.parts)-1 {
			readers[i] = io.LimitReader(p.f, p.size) // ended: no more
		}
		at += p.size
	}
	l.r = io.MultiReader(readers...)
	return l, nil
}

// parsePart reads a part's file name: <base>.<h|t><offset>[.lowspace].
func parsePart(base, name string) (logFilePart, bool) {
	rest, ok := strings.CutPrefix(name, base+".")
	if !ok || len(rest) < 2 || (rest[0] != partHead && rest[0] != partTail) {
		return logFilePart{}, false
	}
	p := logFilePart{kind: rest[0]}
	digits := rest[1:]
	digits, p.lowSpace = strings.CutSuffix(digits, lowSpaceSuffix)
	off, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || off < 0 {
		return logFilePart{}, false
	}
	p.offset = off
	return p, true
}

// Read reads the bytes the log holds, the child's own, part after part:
// what `ctl logs --raw` gives (the gaps are said beside it, Gaps).
func (l *Log) Read(p []byte) (int, error) { return l.r.Read(p) }

// Gaps returns where the log misses output, in order; none when it holds
// every byte.
func (l *Log) Gaps() []Gap {
	var out []Gap
	for _, g := range l.gaps {
		if g.Bytes > 0 {
			out = append(out, g)
		}
	}
	return out
}

// Dropped returns the bytes of output the log misses in all.
func (l *Log) Dropped() int64 {
	var n int64
	for _, g := range l.gaps {
		n += g.Bytes
	}
	return n
}

// Walk reads the log in order: kept gets a reader of each run of bytes
// the log holds (read it to its end, or not), gap each gap between two
// runs. It returns the first error of kept or gap. Use it once, instead
// of Read.
func (l *Log) Walk(kept func(r io.Reader) error, gap func(Gap) error) error {
	for i, p := range l.parts {
		if i > 0 && l.gaps[i-1].Bytes > 0 {
			if err := gap(l.gaps[i-1]); err != nil {
				return err
			}
		}
		var r io.Reader = p.f
		if i < len(l.parts)-1 {
			r = io.LimitReader(p.f, p.size)
		}
		if err := kept(r); err != nil {
			return err
		}
	}
	return nil
}

// WriteLines writes the log as display lines to w (termtext.WriteLines:
// SGR kept when keepSGR, every other escape sequence removed), each gap as
// its marker line (Gap.Marker) on a line of its own. It returns the first
// read or write error.
func (l *Log) WriteLines(w io.Writer, keepSGR bool) error {
	lw := &lastByteWriter{w: w}
	return l.Walk(func(r io.Reader) error { return termtext.WriteLines(lw, r, keepSGR) },
		func(g Gap) error {
			text := g.Marker() + "\n"
			if lw.n > 0 && lw.last != '\n' {
				text = "\n" + text
			}
			_, err := io.WriteString(lw, text)
			return err
		})
}

// lastByteWriter remembers the last byte written through it.
type lastByteWriter struct {
	w    io.Writer
	n    int64
	last byte
}

// Write writes p to the underlying writer and counts what it took: its
// count of bytes and error are the underlying writer's.
func (w *lastByteWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if n > 0 {
		w.n += int64(n)
		w.last = p[n-1]
	}
	return n, err
}

// Close closes every part.
func (l *Log) Close() error {
	var first error
	for _, p := range l.parts {
		if err := p.f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
