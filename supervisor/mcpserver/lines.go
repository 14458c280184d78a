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
// An id it passes is a string or an integer (MCP), which lineConn maps to
// an id of the request's own (idMap).
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

// headBytes is how much of a line over maxLine is kept to find its id in.
const headBytes = 64 << 10

// Read returns the next bytes of the lines that passed the filter, each
// with its newline.
func (f *lineFilter) Read(p []byte) (int, error) {
	if len(f.pending) == 0 {
		line, err := f.next()
		if err != nil {
			return 0, err
		}
		f.pending = append(line, '\n')
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	if len(f.pending) == 0 {
		f.pending = nil // an empty slice of a long line would keep it
	}
	return n, nil
}

// next returns the next line that passed the filter, without its newline,
// or the stream's error (io.EOF at its end).
func (f *lineFilter) next() ([]byte, error) {
	line, _, err := f.nextMessage()
	return line, err
}

// nextMessage is next, with what the filter read of the line.
func (f *lineFilter) nextMessage() ([]byte, message, error) {
	for {
		line, tooLong, err := f.readLine()
		switch trimmed := bytes.TrimSpace(line); {
		case tooLong:
			if err := f.reject(headID(trimmed), -32600, fmt.Sprintf("message longer than %d bytes (16 MiB); put a long task in a file and send its path", maxLine), trimmed); err != nil {
				return nil, message{}, err
			}
		case len(trimmed) == 0:
		default:
			m, code, why := check(trimmed)
			switch {
			case code != 0:
				if err := f.reject(m.ID, code, why, trimmed); err != nil {
					return nil, message{}, err
				}
			case m.Method == "" && isNull(m.ID):
				// An error answer of the client to a line it could not
				// parse: it answers nothing this server asked.
				logf(f.log, "subdash mcp: the client reported an error: %.200s\n", trimmed)
			default:
				return trimmed, m, nil
			}
		}
		if err != nil {
			return nil, message{}, err
		}
	}
}

// readLine reads one line; past maxLine bytes it discards the rest of the
// line and reports it too long, with its head.
func (f *lineFilter) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := f.src.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			if !tooLong {
				tooLong = true
				line = line[:min(len(line), headBytes):min(len(line), headBytes)]
			}
			if len(line) < headBytes {
				line = append(line, chunk[:min(len(chunk), headBytes-len(line))]...)
			}
		} else {
			line = append(line, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return line, tooLong, err
		}
	}
}

// message is what the filter reads of a JSON-RPC message.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// requestID is the requestId a notifications/cancelled names in its
// params; nil when params is not an object that has one.
func (m message) requestID() json.RawMessage {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return nil
	}
	return p.RequestID
}

// check says whether line, which is not blank, is a JSON-RPC 2.0 object
// this server can take; when it is not, it returns the error code and the
// reason, with the id to answer with in m.ID (nil: answer with null).
func check(line []byte) (m message, code int, why string) {
	if !json.Valid(line) {
		return m, -32700, "not JSON"
	}
	if line[0] == '[' {
		return m, -32600, "batches are not supported; send one message a line"
	}
	if line[0] != '{' {
		return message{}, -32600, "not a JSON-RPC request object"
	}
	if json.Unmarshal(line, &m) != nil {
		// Unmarshal fails on valid JSON when a field has another type
		// (a numeric method, say): the answer still carries the id when
		// it is one (JSON-RPC 2.0 §5: null only when it cannot be told).
		var idOnly struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &idOnly)
		m = message{}
		if id := bytes.TrimSpace(idOnly.ID); len(id) > 0 && validID(id) {
			m.ID = id
		}
		return m, -32600, "not a JSON-RPC request object"
	}
	if m.JSONRPC != "2.0" {
		return m, -32600, `not a JSON-RPC 2.0 message ("jsonrpc" must be "2.0")`
	}
	id := bytes.TrimSpace(m.ID)
	switch {
	case len(id) > 0 && isNull(id) && m.Method == "":
		return m, 0, "" // an error answer without an id: next logs it
	case len(id) > 0 && isNull(id):
		// MCP (basic, "Requests"): the id must be a string or an
		// integer, and unlike JSON-RPC not null.
		return m, -32600, "the id must be a string or an integer (MCP does not allow null)"
	case len(id) > 0 && !validID(id):
		// Answered with the id as it came (JSON-RPC 2.0 §5: the same
		// value), so the client can tell which request it was.
		return m, -32600, "the id must be a string or an integer (MCP, basic/Requests: no fraction, no exponent, not null)"
	case m.Method == "" && len(m.Result) == 0 && len(m.Error) == 0 && len(id) > 0:
		return m, -32600, `invalid request: a message with an id needs a "method" (a request) or a "result" or "error" (an answer to the server's request)`
	case m.Method == "" && len(m.Result) == 0 && len(m.Error) == 0:
		return m, -32600, `invalid request: neither "method", "result" nor "error"`
	}
	return m, 0, ""
}

// validID reports whether id is a JSON string or an integer (digits after
// an optional minus: MCP allows no other number), of any size.
func validID(id []byte) bool {
	if id[0] == '"' {
		return true
	}
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return false
	}
	for _, b := range digits {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

func isNull(id []byte) bool { return string(bytes.TrimSpace(id)) == "null" }

// headID finds the id of a message from the head of its line (the line
// was too long to keep): the top-level "id" member when it comes before
// the head ends, which it does in the usual member order (jsonrpc, id,
// method, params). It returns nil when it cannot tell.
func headID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			if v = bytes.TrimSpace(v); len(v) > 0 && validID(v) {
				return v
			}
			return nil
		}
	}
	return nil
}

// reject answers line with an error for the client and logs it. Its error
// is the failed answer: the client's stream is gone, which ends the session.
func (f *lineFilter) reject(id json.RawMessage, code int, why string, line []byte) error {
	shown := line
	if len(shown) > 80 {
		shown = append(shown[:80:80], "…"...)
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(fmt.Sprintf("%s: %q", why, shown))
	if _, err := fmt.Fprintf(f.out, rpcError, id, code, msg); err != nil {
		return fmt.Errorf("cannot answer the client: %w", err)
	}
	logf(f.log, "subdash mcp: ignored a message (%s): %q\n", why, shown)
	return nil
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

// Write writes p, one message, under the lock.
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
