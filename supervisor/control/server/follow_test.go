package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// countingCommand prints "line 0" to "line 399", one every 10 ms.
const countingCommand = `i=0; while [ $i -lt 400 ]; do echo "line $i"; i=$((i+1)); sleep 0.01; done`

// TestFollowedWindowComesFirst: a stream opened with window=1 names
// itself; once it follows a submission, each batch holding new output of
// it starts with a window event of its last n lines, which holds at least
// the lines the batch's outputs event counts for it.
func TestFollowedWindowComesFirst(t *testing.T) {
	s := newSupervisorWith(t, func(c *supervisor.Config) { c.Command = countingCommand })
	_, c := serve(t, s)
	sp, err := c.Spawn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 7
	var win *wire.WindowEvent // the window of the batch being read
	following, batches := false, 0
	err = c.SSE(ctx, url.Values{"outputs": {"batch"}, "window": {"1"}}, func(ev client.Event) error {
		switch ev.Name {
		case wire.EventStream:
			var se wire.StreamEvent
			if err := json.Unmarshal(ev.Data, &se); err != nil || se.Stream == "" {
				return fmt.Errorf("stream event %q: %v", ev.Data, err)
			}
			if _, err := c.Follow(ctx, se.Stream, wire.FollowRequest{AgentID: sp.AgentID, Submission: 1, N: n}); err != nil {
				return err
			}
			following = true
		case wire.EventWindow:
			var we wire.WindowEvent
			if err := json.Unmarshal(ev.Data, &we); err != nil {
				return err
			}
			win = &we
		case wire.EventOutputs:
			var oe wire.OutputsEvent
			if err := json.Unmarshal(ev.Data, &oe); err != nil {
				return err
			}
			for _, o := range oe.Outputs {
				if o.AgentID != sp.AgentID || !following {
					continue
				}
				if win == nil {
					return fmt.Errorf("a batch counted %d lines of the followed agent without a window before it", o.Output.Lines)
				}
				if win.AgentID != sp.AgentID || win.Submission != 1 || win.N != n || win.Total < o.Output.Lines {
					return fmt.Errorf("window %+v of a batch counting %d lines", win.FollowRequest, o.Output.Lines)
				}
				if want := min(n, int(win.Total-win.First)); len(win.Lines) != want {
					return fmt.Errorf("window of %d lines, want %d (total %d)", len(win.Lines), want, win.Total)
				}
				for i, l := range win.Lines {
					if want := fmt.Sprintf("line %d", win.Total-int64(len(win.Lines)-i)); l.Text != want {
						return fmt.Errorf("window line %d is %q, want %q", i, l.Text, want)
					}
				}
				batches++
			}
			win = nil
			if batches >= 10 {
				return context.Canceled
			}
		}
		return nil
	})
	if err != context.Canceled {
		t.Fatalf("stream: %v (%d batches checked)", err, batches)
	}
}

// TestFollowRefusesBadInput: a stream the host does not have, a count of
// lines out of range, a submission below 1 and an unknown agent are each
// refused, saying what to do.
func TestFollowRefusesBadInput(t *testing.T) {
	s := newSupervisorWith(t, func(c *supervisor.Config) { c.Command = countingCommand })
	_, c := serve(t, s)
	ctx := context.Background()
	sp, err := c.Spawn(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	specError(t, followErr(c, ctx, "nope", wire.FollowRequest{AgentID: sp.AgentID, Submission: 1, N: 5}), proto.CodeNotFound,
		`no event stream "nope" is open on this host: open GET /v1/events?outputs=batch&window=1 and use the stream its first event names`)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	stream := make(chan string, 1)
	go func() {
		_ = c.SSE(sctx, url.Values{"outputs": {"batch"}, "window": {"1"}}, func(ev client.Event) error {
			var se wire.StreamEvent
			if ev.Name == wire.EventStream && json.Unmarshal(ev.Data, &se) == nil {
				stream <- se.Stream
			}
			return nil
		})
	}()
	id := <-stream
	specError(t, followErr(c, ctx, id, wire.FollowRequest{AgentID: sp.AgentID, Submission: 1, N: 0}), proto.CodeInvalid, "n must be a count of 1 to 100000 lines, not 0")
	specError(t, followErr(c, ctx, id, wire.FollowRequest{AgentID: sp.AgentID, Submission: 0, N: 5}), proto.CodeInvalid, "submission must be a submission's number (1 for the first), not 0")
	var se *proto.Error
	if _, err := c.Follow(ctx, id, wire.FollowRequest{AgentID: "a-none", Submission: 1, N: 5}); !errors.As(err, &se) || se.Code != proto.CodeNotFound {
		t.Errorf("an unknown agent: %v, want %s", err, proto.CodeNotFound)
	}
	if _, err := c.Follow(ctx, id, wire.FollowRequest{}); err != nil {
		t.Errorf("following nothing: %v", err)
	}
}

// TestBatchesOnFrameBoundaries: a stream's batch waits until the next
// multiple of its frame (so every viewer's stream writes at once), never
// less than a tenth of a frame.
func TestBatchesOnFrameBoundaries(t *testing.T) {
	frame := proto.ViewerFrameInterval
	base := time.Unix(1_800_000_000, 0)
	for _, off := range []time.Duration{0, time.Millisecond, frame / 2, frame - frame/10, frame - time.Microsecond} {
		now := base.Add(off)
		d := untilBoundary(now, frame)
		if at := now.Add(d); at.UnixNano()%int64(frame) != 0 || d < frame/10 || d > frame+frame/10 {
			t.Errorf("at %v past a boundary: waits %v (to %v past one)", off, d, time.Duration(at.UnixNano()%int64(frame)))
		}
	}
}

// TestManyViewersShareTheBatches: up to 10 viewers batch at their own
// 1/30 s; more share ViewerBatches a second (20: 1/15 s each), down to
// 10 a second; a stream that asked for slower batches keeps them.
func TestManyViewersShareTheBatches(t *testing.T) {
	asked := proto.ViewerFrameInterval
	for n, want := range map[int64]time.Duration{1: asked, 10: asked, 20: time.Second / 15, 30: time.Second / 10, 500: time.Second / 10} {
		if got := viewerFrame(asked, n); got.Round(time.Microsecond) != want.Round(time.Microsecond) {
			t.Errorf("%d viewers: a batch every %v, want %v", n, got, want)
		}
	}
	if got := viewerFrame(time.Second, 20); got != time.Second {
		t.Errorf("a viewer asking for a batch a second gets one every %v", got)
	}
}

// followErr is c.Follow's error alone.
func followErr(c *client.Client, ctx context.Context, stream string, req wire.FollowRequest) error {
	_, err := c.Follow(ctx, stream, req)
	return err
}
