package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
)

// CallTimeout bounds every call of a Client but wait and the streams (SPEC
// §6: clients never hang): a host that accepted the connection and does not
// answer within it is reported as *NoAnswerError.
const CallTimeout = 10 * time.Second

// WaitMargin is added to wait's own timeout (SPEC §3, clamped as the
// supervisor clamps it) to bound a wait call.
const WaitMargin = 5 * time.Second

// Client calls the operations of a supervisor over its control socket. It
// implements proto.Reader, proto.Operator, proto.Waiter and proto.Lister;
// its errors are *proto.Error carrying the server's message,
// *NotServingError when nothing listens, *socket.UntrustedError when the
// rule of trust refuses the socket (SPEC §6), *NoAnswerError when the host
// accepts but does not answer in time, *ProtocolError when it speaks
// another protocol than wire.Protocol, or an error naming the socket when
// the connection fails otherwise. Its methods are safe for concurrent use.
// Each call is bounded by its own deadline (SPEC §6): CallTimeout, wait's
// timeout plus WaitMargin, and for streams (logs, events) CallTimeout
// without progress; ctx may end it sooner.
type Client struct {
	socket  string
	dir     string
	http    *http.Client
	fresh   *http.Client // a connection per request: the probe's
	pid     atomic.Int64 // the host's pid, from the last connection made
	origin  string       // wire.OriginHeader of its requests
	session string       // wire.SessionHeader of its requests
	// host is what the host said of itself last (Info), nil before.
	host atomic.Pointer[proto.Info]
	// features caches the host's feature words (Info.Features).
	features atomic.Pointer[[]string]
	// limit replaces CallTimeout and ProbeTimeout when not 0 (tests).
	limit time.Duration
	// via: the host is on another machine (NewClientVia); /proc here
	// says nothing of its pid.
	via bool
	// refuse, when set, is asked before every request whether to send it
	// (a read-only viewer's refuseChanges).
	refuse func(wire.Route) error
}

// refuseChanges refuses every route that changes agents
// (wire.Route.Changes), naming its operation: the client of a viewer
// attached read-only (SPEC §9).
func refuseChanges(rt wire.Route) error {
	if rt.Changes {
		return proto.ErrReadOnly(rt.Op)
	}
	return nil
}

// CloseIdleConnections closes the connections c keeps to its host that
// carry no request now; a later call makes a new one.
func (c *Client) CloseIdleConnections() {
	c.http.CloseIdleConnections()
	c.fresh.CloseIdleConnections()
}

// callTimeout is CallTimeout, or the limit a test set.
func (c *Client) callTimeout() time.Duration {
	if c.limit > 0 {
		return c.limit
	}
	return CallTimeout
}

// WithOrigin returns c naming its kind of client ("ctl", "mcp", "viewer")
// in every request, as the agents it spawns keep it. Call it before use.
func (c *Client) WithOrigin(origin string) *Client {
	c.origin = origin
	return c
}

// WithSession returns c naming the multi-agent MCP session it serves in
// every request (wire.SessionHeader): the host keeps that session's root
// mailbox (SPEC §14). Call it before use.
func (c *Client) WithSession(session string) *Client {
	c.session = session
	return c
}

// NewClient returns a client of the control socket at path, which serves
// (by default) the working directory dir; dir is only used in messages,
// and "" says the socket was given rather than derived from a directory.
// Every connection follows the rule of trust (socket.Dial, SPEC §6): a
// socket whose folder others may write in, or whose process is another
// user's, gets *socket.UntrustedError and is sent nothing.
func NewClient(path, dir string) *Client {
	c := &Client{socket: path, dir: dir}
	return c.dialing(func(ctx context.Context) (net.Conn, error) {
		conn, p, err := socket.Dial(ctx, path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
				return nil, &NotServingError{Dir: dir, Socket: path}
			}
			return nil, err
		}
		c.pid.Store(int64(p.PID))
		return conn, nil
	})
}

// dialing makes c's connections with dial, and returns c: kept alive
// (c.http), and one each (c.fresh, for the probe of a host that left a
// call unanswered).
func (c *Client) dialing(dial func(ctx context.Context) (net.Conn, error)) *Client {
	d := func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }
	c.http = &http.Client{Transport: &http.Transport{DialContext: d, DisableCompression: true}}
	c.fresh = &http.Client{Transport: &http.Transport{DialContext: d, DisableCompression: true, DisableKeepAlives: true}}
	return c
}

// Socket returns the control socket path.
func (c *Client) Socket() string { return c.socket }

// PID returns the process id of the host, as the kernel reported it for the
// last connection (SO_PEERCRED); 0 before the first call.
func (c *Client) PID() int { return int(c.pid.Load()) }

// call is do bounded by limit of this process's running time (deadline):
// when limit passes first and a fresh request (probe) finds the host, the
// error is *NoAnswerError naming the socket, the host's pid and what the
// probe found.
func (c *Client) call(ctx context.Context, limit time.Duration, t wire.Target, body, out any) error {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d := c.deadline(cctx, cancel, limit)
	defer d.Stop()
	return c.noAnswer(ctx, cctx, t.Changes, c.roundTrip(cctx, t, body, out, d.Progress))
}

// do is call bounded by CallTimeout: every operation but wait and the
// streams (SPEC §6). A new operation of the client calls do and is bounded
// without further thought.
func (c *Client) do(ctx context.Context, t wire.Target, body, out any) error {
	return c.call(ctx, c.callTimeout(), t, body, out)
}

// noAnswer turns err into *NoAnswerError when the call's context cctx
// ended by its own deadline (a *silence) while ctx, the caller's, is still
// live; sent says the call asked for a change (NoAnswerError.Sent).
func (c *Client) noAnswer(ctx, cctx context.Context, sent bool, err error) error {
	var s *silence
	if err == nil || ctx.Err() != nil || !errors.As(context.Cause(cctx), &s) {
		return err
	}
	na := newNoAnswer(c.socket, c.hostPID(), s.limit, c.via)
	na.Sent = sent
	if s.err == nil {
		na.Answers, na.ProbeTook = true, s.took
	}
	return na
}

// roundTrip sends a request with body (JSON, or none when nil) and decodes a 2xx
// answer into out (*strings.Builder receives text) or turns an error answer
// back into *proto.Error. progress (nil: none) is called when the headers
// come and after each read of the answer that returned bytes: a long answer
// that flows is not a silent host.
func (c *Client) roundTrip(ctx context.Context, t wire.Target, body, out any, progress func()) error {
	req, err := c.newRequest(ctx, t, body)
	if err != nil {
		return err
	}
	return c.exchange(ctx, req, out, progress)
}

// exchange sends req and decodes its answer as roundTrip does.
func (c *Client) exchange(ctx context.Context, req *http.Request, out any, progress func()) error {
	return c.exchangeOn(ctx, c.http, req, out, progress)
}

// exchangeOn is exchange on hc's connections.
func (c *Client) exchangeOn(ctx context.Context, hc *http.Client, req *http.Request, out any, progress func()) error {
	resp, err := c.responseOn(ctx, hc, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() //nolint:errcheck // a response body: its Close cannot lose data
	var rd io.Reader = resp.Body
	if progress != nil {
		progress()
		rd = &progressReader{r: resp.Body, progress: progress}
	}
	if b, ok := out.(*strings.Builder); ok {
		_, err = io.Copy(b, rd)
	} else {
		err = json.NewDecoder(rd).Decode(out)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("bad answer from subdash at %s: %v", c.socket, err)
	}
	return nil
}

// progressReader calls progress after each read of r that returned bytes.
type progressReader struct {
	r        io.Reader
	progress func()
}

// Read reads from the answer and counts every read that returns bytes as
// progress, so a call's deadline (deadline.go) runs only while nothing flows.
func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

// request sends a request and returns a 2xx response, or the error the
// response or the connection carried.
func (c *Client) request(ctx context.Context, t wire.Target, body any) (*http.Response, error) {
	req, err := c.newRequest(ctx, t, body)
	if err != nil {
		return nil, err
	}
	return c.response(ctx, req)
}

// newRequest returns a request of t with body as JSON (none when nil).
func (c *Client) newRequest(ctx context.Context, t wire.Target, body any) (*http.Request, error) {
	if body == nil {
		return c.newRequestOf(ctx, t, nil, "")
	}
	return c.newRequestOf(ctx, t, bytes.NewReader(wire.Marshal(body)), "application/json")
}

// newRequestOf returns a request of t with the body rd (nil: none) of
// contentType, naming the client (setOrigin); the error of a route c
// refuses (refuse) is returned before anything is sent.
func (c *Client) newRequestOf(ctx context.Context, t wire.Target, rd io.Reader, contentType string) (*http.Request, error) {
	if c.refuse != nil {
		if err := c.refuse(t.Route); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, t.Method, "http://subdash"+t.URL, rd)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	c.setOrigin(req)
	return req, nil
}

// setOrigin names the client's kind in req (wire.OriginHeader) and its
// session (wire.SessionHeader).
func (c *Client) setOrigin(req *http.Request) {
	if c.origin != "" {
		req.Header.Set(wire.OriginHeader, c.origin)
	}
	if c.session != "" {
		req.Header.Set(wire.SessionHeader, c.session)
	}
}

// response sends req and returns a 2xx response, or the error the response
// or the connection carried.
func (c *Client) response(ctx context.Context, req *http.Request) (*http.Response, error) {
	return c.responseOn(ctx, c.http, req)
}

// responseOn is response on hc's connections.
func (c *Client) responseOn(ctx context.Context, hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, c.connError(ctx, err)
	}
	host, named := hostProtocol(resp.Header)
	if resp.StatusCode/100 == 2 {
		if host != wire.Protocol {
			resp.Body.Close() //nolint:errcheck // a response body, not read: its Close cannot lose data
			return nil, &ProtocolError{Socket: c.socket, PID: c.hostPID(), Host: host, Own: wire.Protocol}
		}
		return resp, nil
	}
	defer resp.Body.Close() //nolint:errcheck // a response body: its Close cannot lose data
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var eb wire.ErrorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
		if host != wire.Protocol && (named || eb.Code != "") {
			return nil, &ProtocolError{Socket: c.socket, PID: c.hostPID(), Host: host, Own: wire.Protocol}
		}
		return nil, &proto.Error{Code: eb.Code, Message: eb.Error}
	}
	return nil, fmt.Errorf("unexpected answer %q from subdash at %s: %s", resp.Status, c.socket, bytes.TrimSpace(data))
}

// connError turns a failed round trip into the error callers see.
func (c *Client) connError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ns *NotServingError
	if errors.As(err, &ns) {
		return ns
	}
	var untrusted *socket.UntrustedError
	if errors.As(err, &untrusted) {
		return untrusted
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("cannot connect to control socket %s: permission denied; it belongs to another user", c.socket)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return fmt.Errorf("subdash at %s closed the connection (it stopped serving?)", c.socket)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("cannot reach subdash at %s: %v", c.socket, err)
}

// hostProtocol returns the protocol an answer's header names
// (wire.ProtocolHeader): 1 when it names none (protocol 1, the last
// without it; named false), 0 when it names no number.
func hostProtocol(h http.Header) (n int, named bool) {
	v := h.Get(wire.ProtocolHeader)
	if v == "" {
		return 1, false
	}
	n, _ = strconv.Atoi(v)
	return n, true
}
