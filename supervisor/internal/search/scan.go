package search

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/termtext"
)

// readSize is the size of Scan's reads, and the longest line it reads
// whole: a longer one streams through a converter.
const readSize = 1 << 20

// Hit is a display line that matched: its number (the first line of the
// output is 0, one line per line end in the log, as the log pane counts
// a log read back), its plain text and the first match in it.
type Hit struct {
	Line int64
	Text string
	Span termtext.Span
}

// Scan reads r, a plain submission log (its bytes as the child wrote
// them), and calls fn with each display line that matches, in order; fn
// returns false to stop. It holds one read of 1 MiB (and one line up to
// DefaultMaxWidth cells) in memory whatever r's size. Errors: r's
// (io.EOF ends the log) and ctx's, checked between reads.
func (p *Pattern) Scan(ctx context.Context, r io.Reader, fn func(Hit) bool) error {
	_, err := p.ScanFrom(ctx, r, 0, fn)
	return err
}

// ScanFrom is Scan of a part of a log whose first line is number first
// (a log the cap cut is read a part at a time, a marker line between
// two): it returns how many display lines the part held, its last line
// without a line end counted when it shows anything (as a read-back
// flushes it before the marker).
func (p *Pattern) ScanFrom(ctx context.Context, r io.Reader, first int64, fn func(Hit) bool) (int64, error) {
	s := scanner{p: p, needles: p.plainNeedles(), line: first}
	err := s.run(ctx, r, func(line int64, text string) bool {
		sp, ok := p.Match(text)
		if !ok {
			return true
		}
		return fn(Hit{Line: line, Text: text, Span: sp})
	})
	return s.line - first + s.partial, err
}

// Candidate reports whether a structured preset's log r may hold a match
// in its transcript (see the package doc): a line holds the part of the
// query only an entry's fields show, or a `\u` escape, or may show other
// than its bytes. Errors: r's and ctx's.
func (p *Pattern) Candidate(ctx context.Context, r io.Reader) (bool, error) {
	if p.regex != nil || p.field == nil {
		return true, nil // any entry may match: the transcript decides
	}
	needles := append([][]byte{p.field, p.literal([]byte(`\u`))}, p.literalAll(p.others)...)
	s := scanner{p: p, needles: needles}
	found := false
	err := s.run(ctx, r, func(int64, string) bool { found = true; return false })
	return found, err
}

func (p *Pattern) plainNeedles() [][]byte {
	if p.regex != nil || p.needle == nil {
		return nil
	}
	return append([][]byte{p.needle}, p.literalAll(p.others)...)
}

func (p *Pattern) literalAll(bs [][]byte) [][]byte {
	out := make([][]byte, len(bs))
	for i, b := range bs {
		out[i] = p.literal(b)
	}
	return out
}

// scanner is one Scan or Candidate: the read buffer, the folded copy,
// and the line count.
type scanner struct {
	p       *Pattern
	needles [][]byte // looked for in hay; none and no regex: every line
	buf     []byte
	folded  []byte
	line    int64 // number of the line at the start of the current chunk
	stop    bool
	conv    *termtext.Converter // display text of a candidate line, made once
	partial int64               // 1 when the log ends in a line without its end that shows
}

// errStop ends run when fn returned false.
var errStop = errors.New("stop")

// run calls fn with the number and display text of each candidate line
// of r.
func (s *scanner) run(ctx context.Context, r io.Reader, fn func(line int64, text string) bool) error {
	s.buf = make([]byte, readSize)
	keep := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.ReadFull(r, s.buf[keep:])
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return err
		}
		data := s.buf[:keep+n]
		end := len(data)
		if !eof {
			end = bytes.LastIndexByte(data, '\n') + 1
			if end == 0 { // one line longer than a read
				rest, err := s.longLine(ctx, r, data, fn)
				if err != nil || s.stop {
					return ignoreStop(err)
				}
				keep = copy(s.buf, rest)
				continue
			}
		}
		s.chunk(data[:end], fn)
		if eof && !s.stop {
			if i := bytes.LastIndexByte(data, '\n') + 1; i < len(data) && s.display(data[i:], true) != "" {
				s.partial = 1
			}
		}
		if s.stop || eof {
			return nil
		}
		keep = copy(s.buf, data[end:])
	}
}

func ignoreStop(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// longLine converts a line longer than a read as it streams, starting
// with data, and returns the bytes read after its end.
func (s *scanner) longLine(ctx context.Context, r io.Reader, data []byte, fn func(int64, string) bool) ([]byte, error) {
	conv := termtext.NewPlainConverter(termtext.DefaultMaxWidth)
	emit := func(text []byte, _ int) {
		if !s.stop && !fn(s.line, string(text)) {
			s.stop = true
		}
	}
	buf := make([]byte, readSize)
	for {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			conv.Feed(data[:i+1], emit)
			s.line++
			return data[i+1:], nil
		}
		conv.Feed(data, emit)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := r.Read(buf)
		data = buf[:n]
		if errors.Is(err, io.EOF) && n == 0 {
			conv.Flush(func(text []byte, w int) { s.partial = 1; emit(text, w) })
			s.stop = true // the log ended inside the line
			return nil, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
}

// chunk finds the candidate lines of whole lines c (the last may lack
// its line end at the end of the log) and hands them to fn.
func (s *scanner) chunk(c []byte, fn func(int64, string) bool) {
	hay := c
	if s.p.fold && len(s.needles) > 0 {
		s.folded = foldInto(s.folded, c)
		hay = s.folded
	}
	next := make([]int, len(s.needles)) // next possible match of each needle
	rare := make([]int, len(s.needles))
	for i := range next {
		next[i] = -2 // not looked for yet
		rare[i] = rarest(s.needles[i])
	}
	nextMatch := -2
	special := -2
	counted, line := 0, s.line
	for pos := 0; pos < len(c); {
		// the first candidate at or after pos
		cand := len(c)
		if s.p.regex != nil {
			if nextMatch != -1 && nextMatch < pos {
				nextMatch = indexRegex(s.p, c, pos)
			}
			cand = minPos(cand, nextMatch)
		} else if len(s.needles) == 0 {
			cand = pos
		}
		for i, nd := range s.needles {
			if next[i] != -1 && next[i] < pos {
				next[i] = indexFrom(hay, nd, rare[i], pos)
			}
			cand = minPos(cand, next[i])
		}
		if special != -1 && special < pos {
			special = s.nextSpecial(c, pos)
		}
		for special >= 0 && special < cand && !s.changes(lineOf(c, special)) {
			special = s.nextSpecial(c, lineEnd(c, special))
		}
		cand = minPos(cand, special)
		if cand >= len(c) {
			break
		}
		start := bytes.LastIndexByte(c[:cand], '\n') + 1
		end := lineEnd(c, cand)
		line += int64(bytes.Count(c[counted:start], []byte{'\n'}))
		counted = start
		if !fn(line, s.display(c[start:end], special >= start && special < end)) {
			s.stop = true
			return
		}
		pos = end + 1
	}
	s.line = line + int64(bytes.Count(c[counted:], []byte{'\n'}))
}

// display is the display text of raw line l (without its line end):
// l itself when nothing in it changes on screen (a tab, spaces) and it
// is not cut.
func (s *scanner) display(l []byte, changes bool) string {
	l = bytes.TrimSuffix(l, []byte{'\r'})
	if !changes && len(l) <= termtext.DefaultMaxWidth && bytes.IndexByte(l, '\t') < 0 {
		return string(l)
	}
	if s.conv == nil {
		s.conv = termtext.NewPlainConverter(termtext.DefaultMaxWidth)
	}
	text := ""
	emit := func(t []byte, _ int) { text = string(t) }
	s.conv.Feed(l, emit)
	s.conv.Flush(emit) // the line, and the converter as new
	return text
}

func minPos(a, b int) int {
	if b >= 0 && b < a {
		return b
	}
	return a
}

// indexFrom returns the index of needle in hay at or after from, -1
// when none: IndexByte of needle's rarest byte (rare), each place it
// is found compared whole, as fast as memchr where the byte is rare.
func indexFrom(hay, needle []byte, rare, from int) int {
	b := needle[rare]
	for at := from + rare; at < len(hay); {
		j := bytes.IndexByte(hay[at:], b)
		if j < 0 {
			return -1
		}
		start := at + j - rare
		if start+len(needle) > len(hay) {
			return -1
		}
		if bytes.Equal(hay[start:start+len(needle)], needle) {
			return start
		}
		at += j + 1
	}
	return -1
}

// rarest returns the index of the byte of needle least frequent in
// agents' output (text and code: see frequency).
func rarest(needle []byte) int {
	best := 0
	for i, b := range needle {
		if frequency(b) < frequency(needle[best]) {
			best = i
		}
	}
	return best
}

// frequency ranks a byte by how often it is in text and code (higher:
// more often), folded or not: about English letter frequencies, spaces
// and vowels highest, rare punctuation and control bytes lowest.
func frequency(b byte) int {
	const common = " etaoinsrhldcumfpgwybvkxjqz" // most frequent first
	if i := strings.IndexByte(common, b|0x20); i >= 0 && (b|0x20 >= 'a' || b == ' ') {
		if b >= 'A' && b <= 'Z' {
			return 30 - i/2 // upper case: rarer than its lower case
		}
		return 100 - i
	}
	switch {
	case b >= '0' && b <= '9':
		return 60
	case strings.IndexByte("./_-,:;()\"'=", b) >= 0:
		return 55
	}
	return 20
}

func indexRegex(p *Pattern, c []byte, from int) int {
	loc := p.chunk.FindIndex(c[from:])
	if loc == nil {
		return -1
	}
	return from + loc[0]
}

// lineEnd is the index of the line end of the line holding c[i], or
// len(c).
func lineEnd(c []byte, i int) int {
	if j := bytes.IndexByte(c[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(c)
}

// lineOf is the raw line holding c[i], without its line end.
func lineOf(c []byte, i int) []byte {
	return c[bytes.LastIndexByte(c[:i], '\n')+1 : lineEnd(c, i)]
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// nextSpecial returns the index of the first byte at or after from that
// may make a line show other than its bytes: a control character other
// than the line end (a tab only when the query holds a space, a \r only
// when not before \n, unless every \r counts), DEL, or a byte of a
// non-ASCII character (changes decides); -1 when none. Eight bytes at a
// time: a word of plain ASCII text is passed over by one test.
func (s *scanner) nextSpecial(c []byte, from int) int {
	i := from
	var tabs uint64 = ones * '\t' // a byte no word ^ this holds as zero: 0x09 itself
	if s.p.space {
		tabs = 0 // a tab counts: keep 0x09 out of the excluded bytes
	}
	for ; i+8 <= len(c); i += 8 {
		w := binary.LittleEndian.Uint64(c[i:])
		// exact masks of the bytes below 0x20 or 0x80-0x9f, of line
		// ends, of tabs (when they do not count) and of DEL
		ctl := zeroBytes(w & (ones * 0x60))
		ctl &^= zeroBytes(w ^ ones*'\n')
		if tabs != 0 {
			ctl &^= zeroBytes(w ^ tabs)
		}
		m := ctl | w&highs | zeroBytes(w^ones*0x7f)
		for m != 0 {
			j := i + bits.TrailingZeros64(m)/8
			if s.isSpecial(c, j) {
				return j
			}
			m &= m - 1
		}
	}
	for ; i < len(c); i++ {
		if s.isSpecial(c, i) {
			return i
		}
	}
	return -1
}

// zeroBytes has 0x80 set in each byte of w that is zero, and nothing
// else.
func zeroBytes(w uint64) uint64 {
	const low7 = ones * 0x7f
	return ^((w&low7 + low7) | w | low7)
}

func (s *scanner) isSpecial(c []byte, j int) bool {
	switch b := c[j]; {
	case b == '\n':
		return false
	case b == '\t':
		return s.p.space
	case b == '\r':
		return s.p.crs || j+1 >= len(c) || c[j+1] != '\n'
	case b < 0x20, b == 0x7f, b >= utf8.RuneSelf:
		return true
	}
	return false
}

// changes reports whether raw line l, holding a special byte, may show
// other than its bytes: a control character (a tab, a CR as isSpecial
// says), an invalid byte (U+FFFD on screen), a C1 control, a code point
// termtext drops or one it shows as U+FFFD (termtext.Invisible).
func (s *scanner) changes(l []byte) bool {
	for i := 0; i < len(l); {
		b := l[i]
		switch {
		case b == '\t':
			if s.p.space {
				return true
			}
		case b == '\r':
			if s.p.crs || i+1 < len(l) {
				return true
			}
		case b < 0x20, b == 0x7f:
			return true
		}
		if b < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(l[i:])
		if r == utf8.RuneError && n == 1 || r < 0xa0 || termtext.Dropped(r) || termtext.Invisible(r) {
			return true
		}
		i += n
	}
	return false
}

// foldInto writes c with 0x20 set in every byte to dst (grown as
// needed): upper-case ASCII letters become lower-case. Other bytes
// change too (so "@" meets "`"), which only adds candidates: the confirm
// decides. Eight bytes at a time.
func foldInto(dst, c []byte) []byte {
	if cap(dst) < len(c) {
		dst = make([]byte, len(c), max(len(c), readSize))
	}
	dst = dst[:len(c)]
	i := 0
	for ; i+8 <= len(c); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(c[i:])|ones*0x20)
	}
	for ; i < len(c); i++ {
		dst[i] = c[i] | 0x20
	}
	return dst
}
