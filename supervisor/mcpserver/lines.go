package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rpcError is the JSON-RPC 2.0 answer to a line the server cannot take
// (JSON-RPC 2.0 §5.1: -32700 when it is not JSON, -32600 when it is JSON
// but not a request object); id is the request's id when it has one, else
// null.
const rpcError = `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}` + "\n"

// maxLine bounds one message, in bytes, as the SDK's own transport does.
const maxLine = mcp.DefaultMaxLineLength

// lineFilter stands between the client's stream and the SDK's transport,
// which ends the session at the first line it cannot take: not JSON, JSON
// that is not a JSON-RPC 2.0 object (a number, {}, a batch, which this
// server does not accept), or a line over maxLine. It passes every
// JSON-RPC 2.0 object on unchanged, skips blank lines, and answers any other
// line with an error on out, so one bad line costs the client one error
// instead of the session (and the agents a self-supervising server runs).
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

// Read returns the next bytes of the lines that passed the filter.
func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, tooLong, err := f.readLine()
		switch trimmed := bytes.TrimSpace(line); {
		case tooLong:
			f.reject(nil, -32600, fmt.Sprintf("message longer than %d bytes", maxLine), trimmed)
		case len(trimmed) == 0:
		default:
			if id, code, why := check(trimmed); code != 0 {
				f.reject(id, code, why, trimmed)
			} else {
				f.pending = append(trimmed, '\n')
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

// readLine reads one line; past maxLine bytes it discards the rest of the
// line and reports it too long, with its head.
func (f *lineFilter) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := f.src.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			tooLong = true
			if len(line) < 80 {
				line = append(line, chunk[:min(len(chunk), 80)]...)
			}
		} else {
			line = append(line, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return line, tooLong, err
		}
	}
}

// check says whether line, which is not blank, is a JSON-RPC 2.0 object;
// when it is not, it returns the error code, the reason, and the id to
// answer with.
func check(line []byte) (id json.RawMessage, code int, why string) {
	if !json.Valid(line) {
		return nil, -32700, "not JSON"
	}
	if line[0] == '[' {
		return nil, -32600, "batches are not supported; send one message a line"
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
	}
	if line[0] != '{' || json.Unmarshal(line, &msg) != nil {
		return nil, -32600, "not a JSON-RPC request object"
	}
	if msg.JSONRPC != "2.0" {
		return msg.ID, -32600, `not a JSON-RPC 2.0 message ("jsonrpc" must be "2.0")`
	}
	if id := bytes.TrimSpace(msg.ID); len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') && string(id) != "null" {
		return nil, -32600, "the id must be a string or a number"
	}
	return nil, 0, ""
}

func (f *lineFilter) reject(id json.RawMessage, code int, why string, line []byte) {
	shown := line
	if len(shown) > 80 {
		shown = append(shown[:80:80], "…"...)
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(fmt.Sprintf("%s: %q", why, shown))
	fmt.Fprintf(f.out, rpcError, id, code, msg)
	fmt.Fprintf(f.log, "subdash mcp: ignored a message (%s): %q\n", why, shown)
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
