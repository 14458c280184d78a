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
	"syscall"

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

// Client calls the operations of a supervisor over its control socket. It
// implements Operations; its errors are *supervisor.Error carrying the
// server's message, *NotServingError when nothing listens, or an error
// naming the socket when the connection fails otherwise. Its methods are
// safe for concurrent use and have no time limit of their own: ctx bounds
// them (a wait may last five minutes).
type Client struct {
	socket string
	dir    string
	http   *http.Client
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
			return conn, err
		},
		DisableCompression: true,
	}}
	return c
}

// Socket returns the control socket path.
func (c *Client) Socket() string { return c.socket }

// Info describes the supervisor behind the socket.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var res Info
	return res, c.do(ctx, http.MethodGet, "/v1/info", nil, &res)
}

// Spawn calls spawn (SPEC §3) on the supervisor behind the socket.
func (c *Client) Spawn(ctx context.Context, message string) (supervisor.SpawnResult, error) {
	var res supervisor.SpawnResult
	return res, c.do(ctx, http.MethodPost, "/v1/agents", spawnRequest{Message: message}, &res)
}

// Send calls send (SPEC §3) on the supervisor behind the socket.
func (c *Client) Send(ctx context.Context, id, message string, interrupt bool) (supervisor.SendResult, error) {
	var res supervisor.SendResult
	return res, c.do(ctx, http.MethodPost, agentPath(id, "send"), sendRequest{Message: message, Interrupt: interrupt}, &res)
}

// Queue calls send with queue (SPEC §11, supervisor.Queue) on the
// supervisor behind the socket: the message starts after the running
// submission ends by itself, or at once when nothing runs.
func (c *Client) Queue(ctx context.Context, id, message string) (supervisor.SendResult, error) {
	var res supervisor.SendResult
	return res, c.do(ctx, http.MethodPost, agentPath(id, "send"), sendRequest{Message: message, Queue: true}, &res)
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
	return res, c.do(ctx, http.MethodPost, agentPath(id, "interrupt"), nil, &res)
}

// Close calls close (SPEC §3) on the supervisor behind the socket: it
// closes the agent id, not the client, which holds nothing to release.
func (c *Client) Close(ctx context.Context, id string) (supervisor.StatusResult, error) {
	var res supervisor.StatusResult
	return res, c.do(ctx, http.MethodPost, agentPath(id, "close"), nil, &res)
}

// Resume calls resume (SPEC §3) on the supervisor behind the socket.
func (c *Client) Resume(ctx context.Context, id string) (supervisor.StatusResult, error) {
	var res supervisor.StatusResult
	return res, c.do(ctx, http.MethodPost, agentPath(id, "resume"), nil, &res)
}

// Forget calls forget (SPEC §10) on the supervisor behind the socket: agent
// id leaves the table and list for good; a running agent is refused.
func (c *Client) Forget(ctx context.Context, id string) (supervisor.StatusResult, error) {
	var res supervisor.StatusResult
	return res, c.do(ctx, http.MethodPost, agentPath(id, "forget"), nil, &res)
}

// Message returns the whole message of submission seq (0 = the latest) of
// agent id (SPEC §10), for resend and edit-and-resend in a viewer.
func (c *Client) Message(ctx context.Context, id string, seq int) (string, error) {
	var b strings.Builder
	path := agentPath(id, "message")
	if seq != 0 {
		path += "?submission=" + strconv.Itoa(seq)
	}
	err := c.do(ctx, http.MethodGet, path, nil, &b)
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
	return res, c.do(ctx, http.MethodPost, "/v1/wait", waitRequest{IDs: ids, TimeoutMS: (*timeoutMS)(ms)}, &res)
}

// List calls list (SPEC §3) on the supervisor behind the socket.
func (c *Client) List(ctx context.Context) (ListResult, error) {
	var res ListResult
	return res, c.do(ctx, http.MethodGet, "/v1/agents", nil, &res)
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
	resp, err := c.request(ctx, http.MethodGet, p, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("bad answer from subdash at %s: %v", c.socket, err)
	}
	return nil
}

// Events calls fn with the summary of every agent, then with an agent's
// summary each time it changes (GET /v1/events), until ctx ends, fn returns
// an error, or the server closes the stream. It returns ctx's error, fn's
// error, or the error that ended the stream.
func (c *Client) Events(ctx context.Context, fn func(supervisor.Summary) error) error {
	resp, err := c.request(ctx, http.MethodGet, "/v1/events", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var s supervisor.Summary
		if err := json.Unmarshal([]byte(data), &s); err != nil {
			return fmt.Errorf("bad event from %s: %v", c.socket, err)
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("event stream from %s: %v", c.socket, err)
	}
	return fmt.Errorf("event stream from %s ended: subdash stopped serving", c.socket)
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

// do sends a request with body (JSON, or none when nil) and decodes a 2xx
// answer into out (*strings.Builder receives text) or turns an error answer
// back into *supervisor.Error.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(out)
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
