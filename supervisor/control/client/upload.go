package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// textAbove is the length, in bytes, from which a Client sends a message as
// a text/plain body: a shorter one goes in a JSON body.
const textAbove = 64 << 10

// SpawnFrom calls spawn (SPEC §3) with the message read from r to its end.
// A message longer than textAbove is streamed to the host as a text/plain
// body, so neither side holds it whole. Reading r does not count against
// the call's deadline: a slow r is not a silent host.
// taskName names the agent in the tree (SPEC §14; "" for its short id).
func (c *Client) SpawnFrom(ctx context.Context, r io.Reader, taskName string) (proto.SpawnResult, error) {
	var res proto.SpawnResult
	return res, c.message(ctx, wire.Spawn, "", spawnQuery(taskName), r, func(msg string) any { return proto.SpawnRequest{Message: msg, TaskName: taskName} }, &res)
}

// spawnQuery is the query of a text/plain spawn with taskName (nil for
// none).
func spawnQuery(taskName string) url.Values {
	if taskName == "" {
		return nil
	}
	return url.Values{"task_name": {taskName}}
}

// SendFrom calls send (SPEC §3), or with queue send with queue (SPEC §11,
// supervisor.Queue), with the message read from r, as SpawnFrom sends it.
func (c *Client) SendFrom(ctx context.Context, id string, r io.Reader, interrupt, queue bool) (proto.SendResult, error) {
	var res proto.SendResult
	q := url.Values{}
	if interrupt {
		q.Set("interrupt", "1")
	}
	if queue {
		q.Set("queue", "1")
	}
	return res, c.message(ctx, wire.Send, id, q, r,
		func(msg string) any { return wire.SendRequest{Message: msg, Interrupt: interrupt, Queue: queue} }, &res)
}

// SteerFrom calls send with steer (SPEC §11, supervisor.Steer) with the
// message read from r, as SendFrom sends it.
func (c *Client) SteerFrom(ctx context.Context, id string, r io.Reader) (proto.SendResult, error) {
	var res proto.SendResult
	return res, c.message(ctx, wire.Send, id, url.Values{"steer": {"1"}}, r,
		func(msg string) any { return wire.SendRequest{Message: msg, Steer: true} }, &res)
}

// message makes a spawn or send call (rt of agent id) whose message is
// read from r: as a text/plain body with the query q when it is longer
// than textAbove, else as the JSON body asJSON makes of it.
func (c *Client) message(ctx context.Context, rt wire.Route, id string, q url.Values, r io.Reader, asJSON func(string) any, out any) error {
	var head bytes.Buffer
	if _, err := io.CopyN(&head, r, textAbove+1); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the message: %v", err)
	}
	if head.Len() > textAbove {
		return c.upload(ctx, rt.At(id, q), io.MultiReader(&head, r), out)
	}
	return c.do(ctx, rt.At(id, nil), asJSON(head.String()), out)
}

// Has asks the host, once per Client, for its feature words
// (Info.Features: what it takes beyond wire.Protocol) and reports whether
// feature is one of them.
func (c *Client) Has(ctx context.Context, feature string) (bool, error) {
	if v := c.features.Load(); v != nil {
		return slices.Contains(*v, feature), nil
	}
	info, err := c.Info(ctx)
	if err != nil {
		return false, err
	}
	f := slices.Clone(info.Features)
	c.features.Store(&f)
	return slices.Contains(f, feature), nil
}

// upload POSTs body as text/plain to path and decodes the answer into out.
// The call is bounded as every call is (SPEC §6), by CallTimeout of this
// process's running time, except that the time spent reading body's source
// does not count: the clock runs while the host takes what was read, and
// until it answers.
func (c *Client) upload(ctx context.Context, t wire.Target, body io.Reader, out any) error {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d := c.deadline(cctx, cancel, c.callTimeout())
	defer d.Stop()
	src := &unclockedReader{r: body, clock: d}
	req, err := c.newRequestOf(cctx, t, src, "text/plain; charset=utf-8")
	if err != nil {
		return err
	}
	err = c.exchange(cctx, req, out, d.Progress)
	if rerr := src.readErr(); err != nil && rerr != nil {
		return fmt.Errorf("reading the message: %v", rerr)
	}
	return c.noAnswer(ctx, cctx, true, err)
}

// unclockedReader holds clock while it reads from r; err keeps r's error
// other than EOF.
type unclockedReader struct {
	r     io.Reader
	clock *deadline
	mu    sync.Mutex // the transport reads in a goroutine of its own
	err   error
}

// Read is io.Reader's; the deadline is held while r reads and counts
// again from zero after.
func (u *unclockedReader) Read(p []byte) (int, error) {
	u.clock.Hold()
	n, err := u.r.Read(p)
	u.clock.Release()
	if err != nil && !errors.Is(err, io.EOF) {
		u.mu.Lock()
		u.err = err
		u.mu.Unlock()
	}
	return n, err
}

// readErr returns the source's error other than EOF, nil when none.
func (u *unclockedReader) readErr() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// sendMessage is how Spawn, Send and Queue pass a message given as a
// string: in the JSON body when it is short, else as SpawnFrom does.
func (c *Client) sendMessage(ctx context.Context, rt wire.Route, id string, q url.Values, message string, asJSON func(string) any, out any) error {
	if len(message) <= textAbove {
		return c.do(ctx, rt.At(id, nil), asJSON(message), out)
	}
	return c.message(ctx, rt, id, q, strings.NewReader(message), asJSON, out)
}

// Resend sends again (queue: queues) the whole message of agent id's latest
// submission (proto.MessageFiles), which the host reads from its kept
// file: it never crosses the socket.
func (c *Client) Resend(ctx context.Context, id string, interrupt, queue bool) (proto.SendResult, error) {
	var res proto.SendResult
	return res, c.do(ctx, wire.Resend.At(id, nil), wire.ResendRequest{Interrupt: interrupt, Queue: queue}, &res)
}
