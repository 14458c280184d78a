package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineTransport is the MCP transport of `subdash mcp`: newline-delimited
// JSON-RPC on stdio, as the SDK's IOTransport, whose lines come from a
// lineFilter. Each line is decoded on its own (jsonrpc.DecodeMessage) and
// let go of, where IOTransport's json.Decoder keeps a buffer as large as
// the largest message for as long as the session lasts: 16 MiB or more
// for good after one long spawn_agent message.
type lineTransport struct{ conn *lineConn }

// Connect returns the connection; there is one per transport.
func (t lineTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// largeLine is the length from which a request's line is large: once its
// answer is written, the memory the message took is given back to the
// system (see release).
const largeLine = 1 << 20

// lineConn is the mcp.Connection of lineTransport.
type lineConn struct {
	in     *lineFilter
	out    *lockedWriter
	lines  chan lineOrErr
	closed chan struct{}
	once   sync.Once
	ids    *idMap
	queued []jsonrpc.Message // messages Read returns before the next line (Read is not called concurrently)

	mu          sync.Mutex
	large       map[any]bool  // ids (jsonrpc.ID.Raw) of large requests not answered yet
	unanswered  int           // requests (calls, not notifications) read and not answered yet
	allAnswered chan struct{} // closed when unanswered drops to 0, once someone waits for it
	releasing   atomic.Bool
}

type lineOrErr struct {
	line []byte
	msg  message // what the filter read of line
	err  error
}

// newLineConn reads in's lines in a goroutine of its own, so that Close
// unblocks a Read (mcp.Connection); like the SDK's own transport it leaks
// that goroutine when the reader never returns after Close.
func newLineConn(in *lineFilter, out *lockedWriter) *lineConn {
	c := &lineConn{in: in, out: out, lines: make(chan lineOrErr), closed: make(chan struct{}), large: map[any]bool{}, ids: newIDMap()}
	go func() {
		for {
			line, msg, err := in.nextMessage()
			select {
			case c.lines <- lineOrErr{line, msg, err}:
			case <-c.closed:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

// Read returns the next message; io.EOF once the client closed stdin and
// every request read before has been answered (see drain). A request's id
// is replaced by one of its own (idMap) and a notifications/cancelled
// names the requests in flight with the id it names, one notification
// each; one that names none is dropped (its requests were answered).
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if len(c.queued) > 0 {
			msg := c.queued[0]
			c.queued = c.queued[1:]
			return msg, nil
		}
		var v lineOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case v = <-c.lines:
		}
		if v.err != nil {
			return nil, c.drain(ctx, v.err)
		}
		msg, err := jsonrpc.DecodeMessage(v.line)
		req, ok := msg.(*jsonrpc.Request)
		switch {
		case err != nil || !ok:
			return msg, err
		case req.ID.IsValid():
			req.ID = c.ids.in(v.msg.ID)
			c.mu.Lock()
			c.unanswered++
			if len(v.line) >= largeLine {
				c.large[req.ID.Raw()] = true
			}
			c.mu.Unlock()
			return req, nil
		case req.Method == "notifications/cancelled" && len(v.msg.requestID()) > 0:
			for _, id := range c.ids.cancel(v.msg.requestID()) {
				c.queued = append(c.queued, &jsonrpc.Request{Method: req.Method, Params: cancelledParams(id)})
			}
		default:
			return req, nil
		}
	}
}

// drain holds back end, the end of the client's stream (io.EOF when it
// closed stdin), until every request read before it has been answered,
// then returns it. The SDK's connection stops writing once a Read fails
// and cancels the requests in flight, so an end reported at once loses the
// answers of a client that writes its requests and closes stdin (a pipe, a
// script), and with them the word that a spawn happened. A client closing
// stdin asks the server to shut down (MCP lifecycle, stdio), not to drop
// what it asked before: every request read is answered. Notifications
// need no answer.
//
// A request in flight runs to its own end: a spawn_agent that was answered
// has happened, and a wait returns when an agent becomes final or at its
// timeout (at most 300 s, SPEC §3), which bounds how long a closed stdin
// keeps the process. Cutting a wait short would answer "timed out" before
// its time, and the agents of a self-supervising server end with it (SPEC
// §1), so the answer a one-shot client asked for is the one worth waiting
// for. A client that will not wait sends SIGTERM, the next step of the MCP
// lifecycle's stdio shutdown: Run then ends the requests in flight
// (endWith) and closes the connection, which ends drain.
func (c *lineConn) drain(ctx context.Context, end error) error {
	c.mu.Lock()
	if c.unanswered == 0 {
		c.mu.Unlock()
		return end
	}
	if c.allAnswered == nil {
		c.allAnswered = make(chan struct{})
	}
	answered := c.allAnswered
	c.mu.Unlock()
	select {
	case <-answered:
		return end
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closed:
		return io.EOF
	}
}

// Write writes msg as one line; an answer goes out with the client's id as
// it was written, and not at all when the client cancelled its request
// (the MCP specification, basic/utilities/cancellation: the receiver
// should not respond; the SDK answers "context canceled"). After the answer
// to a large request it releases the memory the request took.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	resp, isResp := msg.(*jsonrpc.Response)
	var raw json.RawMessage
	if isResp {
		var cancelled, mapped bool
		raw, cancelled, mapped = c.ids.out(resp.ID)
		if cancelled {
			c.answered(resp)
			return nil
		}
		if !mapped {
			raw = nil
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding an MCP message: %v", err)
	}
	if raw != nil {
		data = withID(data, resp.ID.Raw().(int64), raw)
	}
	_, err = c.out.Write(append(data, '\n'))
	if isResp {
		c.answered(resp)
	}
	return err
}

// answered counts resp, the server's answer to one request it read, written
// or not: each request read gets one answer, with an invalid id when its id
// was a duplicate. After the answer to a large request it releases the
// memory the request took.
func (c *lineConn) answered(resp *jsonrpc.Response) {
	c.mu.Lock()
	if c.unanswered > 0 {
		c.unanswered--
	}
	if c.unanswered == 0 && c.allAnswered != nil {
		close(c.allAnswered)
		c.allAnswered = nil
	}
	var large bool
	if resp.ID.IsValid() {
		large = c.large[resp.ID.Raw()]
		delete(c.large, resp.ID.Raw())
	}
	c.mu.Unlock()
	if large {
		c.release()
	}
}

// release gives the memory of a large request back to the system, once
// (one release at a time). A long message passes through the SDK as about
// ten transient copies (the line, the request's params, the tool's
// arguments, their schema check, the input struct), which raise the heap
// goal; the copy of ours (the message file) is written by then and the
// operation answered. Without this, Go gives those pages back only after
// its next collection, which an idle host runs after 2 minutes, and then
// gradually (the background scavenger), so the pages of a few large
// messages stay resident for minutes (BENCHMARKS.md). debug.FreeOSMemory
// runs one full collection and returns the free pages at once; for a rare
// large message that costs a few milliseconds of one core, in a goroutine
// of its own so the answer is not held up. It runs after the answer is
// written, when the SDK has no more use for the request.
func (c *lineConn) release() {
	if !c.releasing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer c.releasing.Store(false)
		debug.FreeOSMemory()
	}()
}

// Close ends the connection and closes stdin and stdout where they can be
// closed. It may be called more than once.
func (c *lineConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		err = c.in.Close()
		if werr := c.out.Close(); err == nil {
			err = werr
		}
	})
	return err
}

// SessionID is "": stdio has no sessions.
func (c *lineConn) SessionID() string { return "" }
