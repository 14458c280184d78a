package client

import (
	"context"
	"errors"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// ProbeTimeout bounds the fresh request a Client makes when a call or a
// stream went without an answer for its deadline: only a host that does
// not answer that request now is said not to answer. A silent
// host is reported after its deadline plus at most ProbeTimeout.
const ProbeTimeout = 3 * time.Second

// silence is the cause of a call's context when its deadline passed: the
// host said nothing for limit, and then the probe found it answering
// (err nil: info, in took) or not (err).
type silence struct {
	limit time.Duration
	info  proto.Info
	took  time.Duration
	err   error
}

// Error returns "no answer within the deadline" (errNoAnswer's text);
// the caller words it with what was asked and for how long.
func (s *silence) Error() string { return errNoAnswer.Error() }

// deadline starts the deadline of a call or stream whose context cctx
// cancel ends: when limit of this process's running time passes without
// progress, it probes the host and ends cctx with the *silence that says
// what the probe found. The probe runs in the deadline's goroutine while
// the call goes on: an answer that comes meanwhile still counts.
func (c *Client) deadline(cctx context.Context, cancel context.CancelCauseFunc, limit time.Duration) *deadline {
	return newDeadline(limit, func() {
		s := &silence{limit: limit}
		start := time.Now()
		s.info, s.err = c.Probe(cctx, c.probeTimeout())
		s.took = time.Since(start)
		cancel(s)
	})
}

// probeTimeout is ProbeTimeout, or a test's limit.
func (c *Client) probeTimeout() time.Duration {
	if c.limit > 0 {
		return c.limit
	}
	return ProbeTimeout
}

// Probe is a fresh short request: GET /v1/info on a connection of its own
// (never one a stalled call holds), bounded by limit of this process's
// running time and by nothing else (no second probe). It returns what the
// host said of itself, or *NoAnswerError when it did not answer within
// limit, *NotServingError when nothing listens, or the connection's error.
func (c *Client) Probe(ctx context.Context, limit time.Duration) (proto.Info, error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d := newDeadline(limit, func() { cancel(&silence{limit: limit, err: errNoAnswer}) })
	defer d.Stop()
	var info proto.Info
	req, err := c.newRequest(actx, wire.Info.At("", nil), nil)
	if err == nil {
		err = c.exchangeOn(actx, c.fresh, req, &info, nil)
	}
	var s *silence
	if err != nil && ctx.Err() == nil && errors.As(context.Cause(actx), &s) {
		return info, newNoAnswer(c.socket, c.hostPID(), limit, c.via)
	}
	if err == nil {
		c.host.Store(&info)
	}
	return info, err
}
