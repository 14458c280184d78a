package kube

import (
	"bytes"
	"strconv"
	"sync"
)

// markerFilter passes a submission's stderr through, removing the
// wrapper's end marker "\x1e<prefix><status>:<left>\x1e" (prefix holds the
// submission's random nonce, so no output can forge it) wherever it
// arrives, also split across chunks, and reports it once. Every other byte
// is passed on unchanged and in order (SPEC §5): bytes that could be the
// start of the marker are held back only until the next chunk shows they
// are not, or until flush.
type markerFilter struct {
	mu     sync.Mutex
	prefix []byte
	out    func([]byte)
	onEnd  func(status, left int)
	held   []byte
	done   bool
}

func newMarkerFilter(prefix []byte, out func([]byte), onEnd func(status, left int)) *markerFilter {
	return &markerFilter{prefix: prefix, out: out, onEnd: onEnd}
}

// Write implements io.Writer.
func (f *markerFilter) Write(p []byte) (int, error) {
	n := len(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		f.emit(p)
		return n, nil
	}
	buf := p
	if len(f.held) > 0 {
		buf = append(f.held, p...)
		f.held = nil
	}
	i := bytes.Index(buf, f.prefix)
	if i < 0 {
		k := partialPrefix(buf, f.prefix)
		f.emit(buf[:len(buf)-k])
		f.hold(buf[len(buf)-k:])
		return n, nil
	}
	rest := buf[i+len(f.prefix):]
	end := bytes.IndexByte(rest, 0x1e)
	if end < 0 {
		if len(rest) > 64 { // not a marker after all
			f.emit(buf)
			return n, nil
		}
		f.emit(buf[:i])
		f.hold(buf[i:])
		return n, nil
	}
	f.emit(buf[:i])
	status, left, ok := parseEnd(rest[:end])
	if !ok {
		f.emit(buf[i : i+len(f.prefix)+end+1])
	} else {
		f.done = true
	}
	after := rest[end+1:]
	if ok {
		f.onEnd(status, left)
		f.emit(after)
		return n, nil
	}
	// a malformed marker: pass it on and look further
	f.mu.Unlock()
	_, _ = f.Write(append([]byte(nil), after...))
	f.mu.Lock()
	return n, nil
}

// flush passes on what was held back, at the end of the stream.
func (f *markerFilter) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.emit(f.held)
	f.held = nil
}

func (f *markerFilter) emit(b []byte) {
	if len(b) > 0 {
		f.out(b)
	}
}

func (f *markerFilter) hold(b []byte) {
	if len(b) > 0 {
		f.held = append([]byte(nil), b...)
	}
}

// partialPrefix returns the length of the longest suffix of b that is a
// proper prefix of prefix.
func partialPrefix(b, prefix []byte) int {
	for k := min(len(b), len(prefix)-1); k > 0; k-- {
		if bytes.Equal(b[len(b)-k:], prefix[:k]) {
			return k
		}
	}
	return 0
}

// parseEnd parses "<status>:<left>".
func parseEnd(b []byte) (status, left int, ok bool) {
	s, l, found := bytes.Cut(b, []byte(":"))
	if !found {
		return 0, 0, false
	}
	var err1, err2 error
	status, err1 = strconv.Atoi(string(s))
	left, err2 = strconv.Atoi(string(l))
	return status, left, err1 == nil && err2 == nil
}
