package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"syscall"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// WriteLogs calls logs (SPEC §3) on the supervisor behind the socket and
// copies the output of submission seq (0 = the latest) of agent id to w as
// it arrives: plain text, or with raw the log file's bytes.
func (c *Client) WriteLogs(ctx context.Context, w io.Writer, id string, seq int, raw bool) error {
	_, err := c.writeLogs(ctx, w, id, seq, raw)
	return err
}

// WriteRawLog is WriteLogs with raw: the bytes the log holds, the child's
// own, copied to w; it returns where output is missing in them (SPEC §5:
// the host says it in proto.LogGapsHeader), none from a host that holds
// every byte or knows no log cap.
func (c *Client) WriteRawLog(ctx context.Context, w io.Writer, id string, seq int) ([]proto.LogGap, error) {
	return c.writeLogs(ctx, w, id, seq, true)
}

func (c *Client) writeLogs(ctx context.Context, w io.Writer, id string, seq int, raw bool) ([]proto.LogGap, error) {
	var gaps []proto.LogGap
	q := url.Values{}
	if raw {
		q.Set("raw", "1")
	}
	err := c.streamWith(ctx, submissionAt(wire.Logs, id, seq, q), func(h http.Header, body io.Reader, progress func()) error {
		if v := h.Get(proto.LogGapsHeader); v != "" {
			if err := json.Unmarshal([]byte(v), &gaps); err != nil {
				return fmt.Errorf("bad answer from subdash at %s: %s header: %v", c.socket, proto.LogGapsHeader, err)
			}
		}
		return c.copyBody(w, body, progress)
	})
	return gaps, err
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

// stream GETs path and hands the body to read, bounded by a deadline of
// this process's running time: when the headers, or later any progress
// read reports, do not come within CallTimeout, a fresh request probes the
// host and the call fails with *NoAnswerError saying what it found.
func (c *Client) stream(ctx context.Context, path wire.Target, read func(body io.Reader, progress func()) error) error {
	return c.streamWith(ctx, path, func(_ http.Header, body io.Reader, progress func()) error { return read(body, progress) })
}

// streamWith is stream whose read sees the answer's header too.
func (c *Client) streamWith(ctx context.Context, path wire.Target, read func(h http.Header, body io.Reader, progress func()) error) error {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d := c.deadline(cctx, cancel, c.callTimeout())
	defer d.Stop()
	resp, err := c.request(cctx, path, nil)
	if err != nil {
		return c.noAnswer(ctx, cctx, false, err)
	}
	defer resp.Body.Close() //nolint:errcheck // a response body: its Close cannot lose data
	d.Progress()
	err = read(resp.Header, resp.Body, d.Progress)
	if err != nil && cctx.Err() != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return c.noAnswer(ctx, cctx, false, err)
	}
	return err
}
