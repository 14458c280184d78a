package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// WriteLogs calls logs (SPEC §3) on the supervisor behind the socket and
// copies the output of submission seq (0 = the latest) of agent id to w as
// it arrives: plain text, or with raw the log file's bytes.
func (c *Client) WriteLogs(ctx context.Context, w io.Writer, id string, seq int, raw bool) error {
	q := url.Values{}
	if raw {
		q.Set("raw", "1")
	}
	return c.stream(ctx, submissionPath(id, "logs", seq, q), func(body io.Reader, progress func()) error { return c.copyBody(w, body, progress) })
}

// copyBody copies a streamed answer to w as it arrives, calling progress
// after each read and each write (a slow writer is not a silent host). A
// read that fails is the host's (brokenOff); a write that fails is w's,
// returned as it is.
func (c *Client) copyBody(w io.Writer, body io.Reader, progress func()) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			progress()
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			progress()
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return c.brokenOff(err)
		}
	}
}

// brokenOff is the error of a streamed answer that ended before its end:
// the host aborts one that failed part way (Server's stream), or died.
// What was written is incomplete, and the error says so.
func (c *Client) brokenOff(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return fmt.Errorf("subdash at %s broke the answer off part way (it failed while sending it, or stopped): what was written is incomplete", c.socket)
	}
	return fmt.Errorf("bad answer from subdash at %s: %v", c.socket, err)
}

// stream GETs path and hands the body to read, bounded by a watchdog: the
// call fails with *NoAnswerError when the headers, or later any progress
// read reports, do not come within CallTimeout.
func (c *Client) stream(ctx context.Context, path string, read func(body io.Reader, progress func()) error) error {
	cctx, progress, stop := watchdog(ctx, CallTimeout)
	defer stop()
	resp, err := c.request(cctx, http.MethodGet, path, nil)
	if err != nil {
		return c.noAnswer(ctx, cctx, CallTimeout, false, err)
	}
	defer resp.Body.Close()
	progress()
	err = read(resp.Body, progress)
	if err != nil && cctx.Err() != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return c.noAnswer(ctx, cctx, CallTimeout, false, cctx.Err())
	}
	return err
}

// Events calls fn with the summary of every agent, then with an agent's
// summary each time it changes (GET /v1/events), until ctx ends, fn returns
// an error, or the server closes the stream. It returns ctx's error, fn's
// error, *NoAnswerError when the host sends nothing (not even its
// heartbeat) for CallTimeout, or the error that ended the stream.
func (c *Client) Events(ctx context.Context, fn func(proto.Summary) error) error {
	return c.SSE(ctx, func(ev Event) error {
		if ev.Name != EventAgent {
			return nil
		}
		var s proto.Summary
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

// watchdog bounds a stream: it ends the returned context with errNoAnswer
// when limit passes without a call of the returned progress function.
// Call stop when the stream is over.
func watchdog(ctx context.Context, limit time.Duration) (cctx context.Context, progress func(), stop func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(limit, func() { cancel(errNoAnswer) })
	return cctx, func() { t.Reset(limit) }, func() { t.Stop(); cancel(nil) }
}
