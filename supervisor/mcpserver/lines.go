package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// parseError is the JSON-RPC 2.0 answer to a message that is not JSON
// (JSON-RPC 2.0 §5.1: code -32700, id null).
const parseError = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: %s"}}` + "\n"

// lineFilter stands between the client's stream and the SDK's transport,
// which ends the session at the first line that is not JSON. It passes
// every line that is JSON on unchanged, skips blank lines, and answers any
// other line with a parse error on out, so one bad line costs the client
// one error instead of the session (and the replies still in flight).
type lineFilter struct {
	src     *bufio.Reader
	closer  io.Closer
	out     io.Writer
	log     io.Writer
	pending []byte
}

func newLineFilter(r io.Reader, out, log io.Writer) *lineFilter {
	f := &lineFilter{src: bufio.NewReaderSize(r, 64<<10), out: out, log: log}
	if c, ok := r.(io.Closer); ok {
		f.closer = c
	}
	return f
}

// Read returns the next bytes of the JSON lines that passed the filter.
func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.src.ReadBytes('\n')
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			if json.Valid(trimmed) {
				f.pending = append(trimmed, '\n')
			} else {
				f.reject(trimmed)
			}
		}
		if err != nil && len(f.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *lineFilter) reject(line []byte) {
	shown := line
	if len(shown) > 80 {
		shown = append(shown[:80:80], "…"...)
	}
	detail, _ := json.Marshal(fmt.Sprintf("not a JSON-RPC message: %q", shown))
	fmt.Fprintf(f.out, parseError, detail[1:len(detail)-1])
	fmt.Fprintf(f.log, "subdash mcp: ignored a line that is not JSON: %q\n", shown)
}

// Close closes the underlying stream when it can be closed.
func (f *lineFilter) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// lockedWriter makes each Write whole: the SDK writes one message per call,
// and so does lineFilter, from another goroutine.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p under the lock.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close closes the underlying writer when it can be closed.
func (l *lockedWriter) Close() error {
	if c, ok := l.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
