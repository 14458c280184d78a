package control

import (
	"bufio"
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

	"github.com/subdash/subdash/supervisor"
)

// NotServingError is returned by a Client when nothing listens on its
// socket: no dashboard and no `subdash serve` runs for the directory.
type NotServingError struct {
	Dir    string // the working directory whose socket was tried; "" when the socket was given
	Socket string // the control socket path
}

// Error says so and what to do.
func (e *NotServingError) Error() string {
	if e.Dir == "" {
		return fmt.Sprintf("no subdash is serving on socket %s; start subdash or subdash serve with --socket %s", e.Socket, e.Socket)
	}
	return fmt.Sprintf("no subdash is serving %s (socket %s); start subdash or subdash serve", e.Dir, e.Socket)
}

// CallTimeout bounds every call of a Client but wait and the streams (SPEC
// §6: clients never hang): a host that accepted the connection and does not
// answer within it is reported as *NoAnswerError.
const CallTimeout = 10 * time.Second

// WaitMargin is added to wait's own timeout (SPEC §3, clamped as the
// supervisor clamps it) to bound a wait call.
const WaitMargin = 5 * time.Second

// NoAnswerError is returned by a Client when the host accepted the
// connection but did not answer within the call's deadline (SPEC §6): it is
// stopped (SIGSTOP), hung, or not a subdash.
type NoAnswerError struct {
	Socket string        // the control socket path
	PID    int           // the process listening on it (SO_PEERCRED); 0 when unknown
	After  time.Duration // how long the client waited
}

// Error names the socket and the process, and what to check.
func (e *NoAnswerError) Error() string {
	if e.PID <= 0 {
		return fmt.Sprintf("the process serving %s accepted the connection but did not answer within %s; it is stopped, hung, or not a subdash",
			e.Socket, e.After)
	}
	return fmt.Sprintf("subdash (pid %d) serving %s accepted the connection but did not answer within %s; it is stopped or hung (ps -o stat= -p %d shows T when stopped; kill -CONT %d resumes it)",
		e.PID, e.Socket, e.After, e.PID, e.PID)
}

// errNoAnswer is the cause of a call's context when its deadline passed.
var errNoAnswer = errors.New("no answer within the deadline")

// Client calls the operations of a supervisor over its control socket. It
// implements Operations; its errors are *supervisor.Error carrying the
// server's message, *NotServingError when nothing listens, *NoAnswerError
// when the host accepts but does not answer in time, or an error naming
// the socket when the connection fails otherwise. Its methods are safe for
// concurrent use. Each call is bounded by its own deadline (SPEC §6):
// CallTimeout, wait's timeout plus WaitMargin, and for streams (logs,
// events) CallTimeout without progress; ctx may end it sooner.
type Client struct {
	socket string
	dir    string
	http   *http.Client
	pid    atomic.Int64 // the host's pid, from the last connection made
	origin string       // OriginHeader of its requests
	// textMessage caches whether the host takes FeatureTextMessage.
	textMessage atomic.Pointer[bool]
}

// WithOrigin returns c naming its kind of client ("ctl", "mcp", "viewer")
// in every request, as the agents it spawns keep it. Call it before use.
func (c *Client) WithOrigin(origin string) *Client {
	c.origin = origin
	return c
}

// NewClient returns a client of the control socket at socket, which serves
// (by default) the working directory dir; dir is only used in messages,
// and "" says the socket was given rather than derived from a directory.
func NewClient(socket, dir string) *Client {
	c := &Client{socket: socket, dir: dir}
	var d net.Dialer
	c.http = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, "unix", socket)
			if err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED)) {
				return nil, &NotServingError{Dir: dir, Socket: socket}
			}
			if uc, ok := conn.(*net.UnixConn); ok {
				if p, err := peerOf(uc); err == nil {
					c.pid.Store(int64(p.PID))
				}
			}
			return conn, err
		},
		DisableCompression: true,
	}}
	return c
}

// Socket returns the control socket path.
func (c *Client) Socket() string { return c.socket }

// PID returns the process id of the host, as the kernel reported it for the
// last connection (SO_PEERCRED); 0 before the first call.
func (c *Client) PID() int { return int(c.pid.Load()) }

// waitLimit is the deadline of a wait call: wait's timeout (SPEC §3: 30 s
// when absent, clamped to 10 s..300 s) plus WaitMargin.
func waitLimit(ms *int) time.Duration {
	d := supervisor.DefaultWaitTimeoutMS
	if ms != nil && *ms > 0 {
		d = min(max(*ms, supervisor.MinWaitTimeoutMS), supervisor.MaxWaitTimeoutMS)
	}
	return time.Duration(d)*time.Millisecond + WaitMargin
}

// Info describes the supervisor behind the socket.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var res Info
	return res, c.call(ctx, CallTimeout, http.MethodGet, "/v1/info", nil, &res)
}

// Spawn calls spawn (SPEC §3) on the supervisor behind the socket.
// A message longer than 1 MiB goes as SpawnFrom sends it.
func (c *Client) Spawn(ctx context.Context, message string) (supervisor.SpawnResult, error) {
	var res supervisor.SpawnResult
	return res, c.sendMessage(ctx, "/v1/agents", nil, message, func(msg string) any { return spawnRequest{Message: msg} }, &res)
}

// Send calls send (SPEC §3) on the supervisor behind the socket.
// A message longer than 1 MiB goes as SpawnFrom sends it.
func (c *Client) Send(ctx context.Context, id, message string, interrupt bool) (supervisor.SendResult, error) {
	var res supervisor.SendResult
	q := url.Values{}
	if interrupt {
		q.Set("interrupt", "1")
	}
	return res, c.sendMessage(ctx, agentPath(id, "send"), q, message,
		func(msg string) any { return sendRequest{Message: msg, Interrupt: interrupt} }, &res)
}

// Queue calls send with queue (SPEC §11, supervisor.Queue) on the
// supervisor behind the socket: the message starts after the running
// submission ends by itself, or at once when nothing runs.
func (c *Client) Queue(ctx context.Context, id, message string) (supervisor.SendResult, error) {
	var res supervisor.SendResult
	return res, c.sendMessage(ctx, agentPath(id, "send"), url.Values{"queue": {"1"}}, message,
		func(msg string) any { return sendRequest{Message: msg, Queue: true} }, &res)
}

// CancelQueue drops the message queued for agent id (SPEC §11,
// supervisor.CancelQueue) on the supervisor behind the socket.
func (c *Client) CancelQueue(ctx context.Context, id string) (supervisor.StatusResult, error) {
	var res supervisor.StatusResult
	return res, c.do(ctx, http.MethodDelete, agentPath(id, "queue"), nil, &res)
}

// MarkSeen records that a dashboard shows agent id, which then no longer
// needs you (SPEC §11, supervisor.MarkSeen), on the supervisor behind the
// socket. The result names the agent and its status.
func (c *Client) MarkSeen(ctx context.Context, id string) (supervisor.StatusResult, error) {
	var res supervisor.StatusResult
	return res, c.do(ctx, http.MethodPost, agentPath(id, "seen"), nil, &res)
}

// Interrupt calls interrupt (SPEC §3) on the supervisor behind the socket.
func (c *Client) Interrupt(ctx context.Context, id string) (supervisor.StatusResult, error) {
	var res supervisor.StatusResult
	return res, c.call(ctx, CallTimeout, http.MethodPost, agentPath(id, "interrupt"), nil, &res)
}

// Close calls close (SPEC §3) on the supervisor behind the socket: it
// closes the agent id, not the client, which holds nothing to release.
func (c *Client) Close(ctx context.Context, id string) (supervisor.StatusResult, error) {
	var res supervisor.StatusResult
	return res, c.call(ctx, CallTimeout, http.MethodPost, agentPath(id, "close"), nil, &res)
}

// Resume calls resume (SPEC §3) on the supervisor behind the socket.
func (c *Client) Resume(ctx context.Context, id string) (supervisor.StatusResult, error) {
	var res supervisor.StatusResult
	return res, c.call(ctx, CallTimeout, http.MethodPost, agentPath(id, "resume"), nil, &res)
}

// Forget calls forget (SPEC §10) on the supervisor behind the socket: agent
// id leaves the table and list for good; a running agent is refused.
func (c *Client) Forget(ctx context.Context, id string) (supervisor.StatusResult, error) {
	var res supervisor.StatusResult
	return res, c.call(ctx, CallTimeout, http.MethodPost, agentPath(id, "forget"), nil, &res)
}

// Message returns the whole message of submission seq (0 = the latest) of
// agent id (SPEC §10), for resend and edit-and-resend in a viewer.
func (c *Client) Message(ctx context.Context, id string, seq int) (string, error) {
	var b strings.Builder
	path := agentPath(id, "message")
	if seq != 0 {
		path += "?submission=" + strconv.Itoa(seq)
	}
	err := c.call(ctx, CallTimeout, http.MethodGet, path, nil, &b)
	return b.String(), err
}

// Approve allows the pending tool permission request requestID ("" = the
// oldest) of agent id on the supervisor behind the socket (SPEC §12); with
// always, its tool stays allowed for the rest of the agent's session.
func (c *Client) Approve(ctx context.Context, id, requestID string, always bool) (supervisor.ApprovalResult, error) {
	var res supervisor.ApprovalResult
	return res, c.do(ctx, http.MethodPost, agentPath(id, "approve"), approveRequest{RequestID: requestID, Always: always}, &res)
}

// Deny refuses the pending tool permission request requestID ("" = the
// oldest) of agent id with message ("" = the default reason) on the
// supervisor behind the socket (SPEC §12).
func (c *Client) Deny(ctx context.Context, id, requestID, message string) (supervisor.ApprovalResult, error) {
	var res supervisor.ApprovalResult
	return res, c.do(ctx, http.MethodPost, agentPath(id, "deny"), denyRequest{RequestID: requestID, Message: message}, &res)
}

// Wait calls wait (SPEC §3) on the supervisor behind the socket. When ctx
// ends first, the request is abandoned, the server stops waiting at once,
// and ctx's error is returned.
func (c *Client) Wait(ctx context.Context, ids []string, ms *int) (supervisor.WaitResult, error) {
	var res supervisor.WaitResult
	if ids == nil {
		ids = []string{}
	}
	return res, c.call(ctx, waitLimit(ms), http.MethodPost, "/v1/wait", waitRequest{IDs: ids, TimeoutMS: (*timeoutMS)(ms)}, &res)
}

// List calls list (SPEC §3) on the supervisor behind the socket.
func (c *Client) List(ctx context.Context) (ListResult, error) {
	var res ListResult
	return res, c.call(ctx, CallTimeout, http.MethodGet, "/v1/agents", nil, &res)
}

// Logs calls logs (SPEC §3) on the supervisor behind the socket and copies
// the output of submission seq (0 = the latest) of agent id to w as it
// arrives: plain text, or with raw the log file's bytes.
func (c *Client) Logs(ctx context.Context, id string, seq int, raw bool, w io.Writer) error {
	q := url.Values{}
	if seq != 0 {
		q.Set("submission", strconv.Itoa(seq))
	}
	if raw {
		q.Set("raw", "1")
	}
	p := agentPath(id, "logs")
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return c.stream(ctx, p, func(body io.Reader, progress func()) error {
		buf := make([]byte, 64<<10)
		for {
			n, err := body.Read(buf)
			if n > 0 {
				progress()
				if _, werr := w.Write(buf[:n]); werr != nil {
					return werr
				}
				progress() // a slow writer is not a silent host
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("bad answer from subdash at %s: %v", c.socket, err)
			}
		}
	})
}

// stream GETs path and hands the body to read, bounded by a watchdog: the
// call fails with *NoAnswerError when the headers, or later any progress
// read reports, do not come within CallTimeout.
func (c *Client) stream(ctx context.Context, path string, read func(body io.Reader, progress func()) error) error {
	cctx, progress, stop := watchdog(ctx, CallTimeout)
	defer stop()
	resp, err := c.request(cctx, http.MethodGet, path, nil)
	if err != nil {
		return c.noAnswer(ctx, cctx, CallTimeout, err)
	}
	defer resp.Body.Close()
	progress()
	err = read(resp.Body, progress)
	if err != nil && cctx.Err() != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return c.noAnswer(ctx, cctx, CallTimeout, cctx.Err())
	}
	return err
}

// Events calls fn with the summary of every agent, then with an agent's
// summary each time it changes (GET /v1/events), until ctx ends, fn returns
// an error, or the server closes the stream. It returns ctx's error, fn's
// error, *NoAnswerError when the host sends nothing (not even its
// heartbeat) for CallTimeout, or the error that ended the stream.
func (c *Client) Events(ctx context.Context, fn func(supervisor.Summary) error) error {
	return c.SSE(ctx, func(ev Event) error {
		if ev.Name != EventAgent {
			return nil
		}
		var s supervisor.Summary
		if err := json.Unmarshal(ev.Data, &s); err != nil {
			return fmt.Errorf("bad event from %s: %v", c.socket, err)
		}
		return fn(s)
	})
}

// Event is one server-sent event of GET /v1/events: its name (EventAgent,
// EventSynced; unknown names are to be ignored) and
// its JSON data.
type Event struct {
	Name string
	Data []byte
}

// SSE calls fn with every event of GET /v1/events until ctx ends, fn
// returns an error, or the stream ends. Heartbeats (comments the host
// sends every HeartbeatInterval) only keep the watchdog quiet: a host that
// sends nothing for CallTimeout is reported as *NoAnswerError. A stream the
// host closed gives an error saying subdash stopped serving.
func (c *Client) SSE(ctx context.Context, fn func(Event) error) error {
	path := "/v1/events"
	if c.origin == "viewer" {
		path += "?viewer=1" // counted as an attached viewer (Info.Viewers)
	}
	err := c.stream(ctx, path, func(body io.Reader, progress func()) error {
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		var ev Event
		for sc.Scan() {
			progress()
			line := sc.Text()
			switch {
			case line == "":
				if ev.Name != "" || ev.Data != nil {
					if ev.Name == "" {
						ev.Name = "message"
					}
					if err := fn(ev); err != nil {
						return err
					}
				}
				ev = Event{}
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.Data = append(ev.Data, strings.TrimPrefix(line, "data: ")...)
			}
		}
		err := sc.Err()
		if err == nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return errStreamEnded // the host closed the stream, or died
		}
		return fmt.Errorf("event stream from %s: %v", c.socket, err)
	})
	if errors.Is(err, errStreamEnded) {
		return &StoppedError{Socket: c.socket, PID: c.PID()}
	}
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// errStreamEnded is returned inside SSE when the host closed the stream.
var errStreamEnded = errors.New("stream ended")

// StoppedError is returned by SSE when the host closed the event stream:
// it stopped serving (quit, SIGTERM) or died.
type StoppedError struct {
	Socket string
	PID    int
}

// Error says the host stopped serving.
func (e *StoppedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("the subdash host (pid %d) stopped serving %s", e.PID, e.Socket)
	}
	return fmt.Sprintf("the subdash host stopped serving %s", e.Socket)
}

// agentPath returns the path of an operation on agent id. The id is
// escaped so any text reaches the supervisor unchanged and gets its "agent
// not found" message; "." is escaped too, or the router would clean it
// away, and an empty id is sent as a space, which the supervisor trims.
func agentPath(id, op string) string {
	if id == "" {
		id = " "
	}
	return "/v1/agents/" + strings.ReplaceAll(url.PathEscape(id), ".", "%2E") + "/" + op
}

// call is do bounded by limit: when limit passes first, the error is
// *NoAnswerError naming the socket and the host's pid.
func (c *Client) call(ctx context.Context, limit time.Duration, method, path string, body, out any) error {
	cctx, cancel := context.WithTimeoutCause(ctx, limit, errNoAnswer)
	defer cancel()
	return c.noAnswer(ctx, cctx, limit, c.roundTrip(cctx, method, path, body, out))
}

// do is call bounded by CallTimeout: every operation but wait and the
// streams (SPEC §6). A new operation of the client calls do and is bounded
// without further thought.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	return c.call(ctx, CallTimeout, method, path, body, out)
}

// noAnswer turns err into *NoAnswerError when the call's context cctx
// ended by its own deadline while ctx, the caller's, is still live.
func (c *Client) noAnswer(ctx, cctx context.Context, limit time.Duration, err error) error {
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(cctx), errNoAnswer) {
		return &NoAnswerError{Socket: c.socket, PID: c.PID(), After: limit}
	}
	return err
}

// watchdog bounds a stream: it ends the returned context with errNoAnswer
// when limit passes without a call of the returned progress function.
// Call stop when the stream is over.
func watchdog(ctx context.Context, limit time.Duration) (cctx context.Context, progress func(), stop func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(limit, func() { cancel(errNoAnswer) })
	return cctx, func() { t.Reset(limit) }, func() { t.Stop(); cancel(nil) }
}

// roundTrip sends a request with body (JSON, or none when nil) and decodes a 2xx
// answer into out (*strings.Builder receives text) or turns an error answer
// back into *supervisor.Error.
func (c *Client) roundTrip(ctx context.Context, method, path string, body, out any) error {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	return c.exchange(ctx, req, out)
}

// exchange sends req and decodes its answer as roundTrip does.
func (c *Client) exchange(ctx context.Context, req *http.Request, out any) error {
	resp, err := c.response(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if b, ok := out.(*strings.Builder); ok {
		_, err = io.Copy(b, resp.Body)
	} else {
		err = json.NewDecoder(resp.Body).Decode(out)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("bad answer from subdash at %s: %v", c.socket, err)
	}
	return nil
}

// request sends a request and returns a 2xx response, or the error the
// response or the connection carried.
func (c *Client) request(ctx context.Context, method, path string, body any) (*http.Response, error) {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	return c.response(ctx, req)
}

// newRequest returns a request with body as JSON (none when nil).
func (c *Client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(mustJSON(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://subdash"+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.setOrigin(req)
	return req, nil
}

// setOrigin names the client's kind in req (OriginHeader).
func (c *Client) setOrigin(req *http.Request) {
	if c.origin != "" {
		req.Header.Set(OriginHeader, c.origin)
	}
}

// response sends req and returns a 2xx response, or the error the response
// or the connection carried.
func (c *Client) response(ctx context.Context, req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.connError(ctx, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var eb errorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
		return nil, &supervisor.Error{Code: eb.Code, Message: eb.Error}
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
