package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"syscall"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// Events calls fn with the summary of every agent, then with an agent's
// summary each time it changes (GET /v1/events), until ctx ends, fn returns
// an error, or the host is gone. It returns ctx's error, fn's error, or
// SSE's. After a reconnection fn gets every agent's summary again.
func (c *Client) Events(ctx context.Context, fn func(proto.Summary) error) error {
	return c.SSE(ctx, nil, func(ev Event) error {
		if ev.Name != wire.EventAgent {
			return nil
		}
		var s proto.Summary
		if err := json.Unmarshal(ev.Data, &s); err != nil {
			return fmt.Errorf("bad event from %s: %v", c.socket, err)
		}
		return fn(s)
	})
}

// EventReconnected is never sent by a host: SSE gives it to its caller
// before the events of a stream it opened again (data: Reconnected),
// which start with every agent's snapshot and wire.EventSynced, so the
// caller replaces what it holds.
const EventReconnected = "reconnected"

// Event is one server-sent event of GET /v1/events: its name (wire.EventAgent,
// wire.EventSynced, …; unknown names are to be ignored) and its JSON data; or
// EventReconnected, which SSE itself gives.
type Event struct {
	Name string // the event: line, "message" when the host sent none
	Data []byte // the data: lines joined, JSON (Reconnected for EventReconnected)
}

// Reconnected is the data of EventReconnected: why the stream was opened
// again, in words.
type Reconnected struct {
	Reason string `json:"reason"`
}

// maxReconnects is how many times in a row SSE opens the stream again
// while no stream lives past its snapshot: a host that answers
// GET /v1/info and keeps ending (or starving) its streams is reported,
// not followed forever.
const maxReconnects = 3

// SSE calls fn with every event of GET /v1/events with query (nil: none;
// wire.Events names what it takes) until ctx ends, fn
// returns an error, or the host is gone or does not answer. Heartbeats
// (comments the host sends every wire.HeartbeatInterval) count as the host's
// voice. The stream's deadline is CallTimeout of this process's running
// time (a pause of the process does not count, see deadline): what waits
// in the socket is read before the host is judged.
//
// A stream that ends, or is silent for that long, is judged by a fresh
// request (Client.Probe): when the same host answers (its pid and run), SSE
// opens the stream again, calls fn with an EventReconnected event saying
// why, then with the host's events from the start (every agent, then
// wire.EventSynced), so the caller replaces its state at wire.EventSynced. It gives
// up after maxReconnects tries in a row. It returns ctx's error, fn's
// error, *StoppedError when the host closed the stream and does not answer
// (it quit or died) or another host answers now, *NoAnswerError when it
// does not answer the fresh request either, or the error that broke the
// stream. This is the one place a client follows a host (Remote, and
// through it the dashboard of a viewer, whatever carries its socket).
func (c *Client) SSE(ctx context.Context, query url.Values, fn func(Event) error) error {
	if c.origin == "viewer" {
		query = maps.Clone(query)
		if query == nil {
			query = url.Values{}
		}
		query.Set("viewer", "1") // counted as an attached viewer (Info.Viewers)
	}
	path := wire.Events.At("", query)
	first := c.host.Load() // the host followed: nil when never asked
	followed := false      // a stream reached its wire.EventSynced
	for fails := 1; ; fails++ {
		st, err := c.sseOnce(ctx, path, fn)
		var fe fnError
		switch {
		case errors.As(err, &fe):
			return fe.err
		case ctx.Err() != nil:
			return ctx.Err()
		case !followed && !st.synced:
			if errors.Is(err, errStreamEnded) {
				return &StoppedError{Socket: c.socket, PID: c.hostPID()}
			}
			return err // never followed: nothing to resume
		}
		followed = true
		if st.live {
			fails = 1
		}
		reason, err := c.judgeStream(ctx, err)
		if err != nil {
			return err
		}
		if now := c.host.Load(); first != nil && now != nil && (now.PID != first.PID || now.RunDir != first.RunDir) {
			return &StoppedError{Socket: c.socket, PID: first.PID, Successor: now.PID}
		}
		if fails > maxReconnects {
			return fmt.Errorf("the subdash host serving %s answers, but its event stream broke %d times in a row (%s); attach again, and report it if it lasts",
				c.socket, fails, reason)
		}
		if err := fn(Event{Name: EventReconnected, Data: wire.Marshal(Reconnected{Reason: reason})}); err != nil {
			return err
		}
	}
}

// judgeStream says why the event stream that ended with err is to be
// opened again (the host answers a fresh request), or returns the error
// the caller gets.
func (c *Client) judgeStream(ctx context.Context, err error) (string, error) {
	var na *NoAnswerError
	var ns *NotServingError
	switch {
	case errors.As(err, &na):
		if !na.Answers {
			return "", na
		}
		return fmt.Sprintf("the event stream was silent for %s while the host answered", na.After), nil
	case errors.Is(err, errStreamEnded), errors.As(err, &ns):
		if _, perr := c.Probe(ctx, c.probeTimeout()); perr != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", &StoppedError{Socket: c.socket, PID: c.hostPID()}
		}
		return "the host ended the event stream and answered a new request", nil
	}
	return "", err
}

// fnError carries the error of SSE's fn out of the stream.
type fnError struct{ err error }

// Error returns fn's error's text; SSE hands the caller fn's error itself.
func (e fnError) Error() string { return e.err.Error() }

// streamState is what one event stream got to: its wire.EventSynced (synced),
// and something after it (live: it lived past its snapshot).
type streamState struct{ synced, live bool }

// sseOnce reads one event stream, calling fn with each event, until it
// ends. fn's error comes back as fnError; a stream the host closed as
// errStreamEnded.
func (c *Client) sseOnce(ctx context.Context, path wire.Target, fn func(Event) error) (st streamState, err error) {
	err = c.stream(ctx, path, func(body io.Reader, progress func()) error {
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		var ev Event
		for sc.Scan() {
			progress()
			st.live = st.live || st.synced
			line := sc.Bytes() // a batch's data line holds every agent that printed: not copied twice
			switch {
			case len(line) == 0:
				if ev.Name != "" || ev.Data != nil {
					if ev.Name == "" {
						ev.Name = "message"
					}
					st.synced = st.synced || ev.Name == wire.EventSynced
					if err := fn(ev); err != nil {
						return fnError{err}
					}
				}
				ev = Event{}
			case bytes.HasPrefix(line, []byte("event: ")):
				ev.Name = string(line[len("event: "):])
			case bytes.HasPrefix(line, []byte("data: ")):
				ev.Data = append(ev.Data, line[len("data: "):]...)
			}
		}
		err := sc.Err()
		if err == nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return errStreamEnded // the host closed the stream, or died
		}
		return fmt.Errorf("event stream from %s: %v", c.socket, err)
	})
	return st, err
}

// Follow asks the host to follow req on event stream stream (wire.Follow,
// a stream opened with window=1 names itself in its first event) and
// returns what the stream follows now. Errors: the host's (an unknown
// stream, agent or submission; n out of range) or the call's.
func (c *Client) Follow(ctx context.Context, stream string, req wire.FollowRequest) (wire.FollowRequest, error) {
	var got wire.FollowRequest
	return got, c.do(ctx, wire.Follow.At(stream, nil), req, &got)
}
