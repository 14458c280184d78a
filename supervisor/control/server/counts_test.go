package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestCountsOfOthersComeAtTheirInterval: a stream opened with
// counts=250ms that follows agent A gets A's counts at its frame and
// B's at most once per 250 ms, and B's last counts (all 400 lines) still
// come: nothing is lost, only held.
func TestCountsOfOthersComeAtTheirInterval(t *testing.T) {
	s := newSupervisorWith(t, func(c *supervisor.Config) { c.Command = countingCommand })
	_, c := serve(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := c.Spawn(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Spawn(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	const interval = 250 * time.Millisecond
	var aBatches, bBatches int
	var bAt []time.Time // when each of B's counts came
	var bLines int64
	err = c.SSE(ctx, url.Values{"outputs": {"batch"}, "window": {"1"}, "counts": {interval.String()}}, func(ev client.Event) error {
		switch ev.Name {
		case wire.EventStream:
			var se wire.StreamEvent
			if err := json.Unmarshal(ev.Data, &se); err != nil {
				return err
			}
			_, err := c.Follow(ctx, se.Stream, wire.FollowRequest{AgentID: a.AgentID, Submission: 1, N: 5})
			return err
		case wire.EventOutputs:
			var oe wire.OutputsEvent
			if err := json.Unmarshal(ev.Data, &oe); err != nil {
				return err
			}
			for _, o := range oe.Outputs {
				switch o.AgentID {
				case a.AgentID:
					aBatches++
				case b.AgentID:
					bAt, bLines = append(bAt, time.Now()), o.Output.Lines
					bBatches++
				}
			}
			if bLines == 400 {
				return context.Canceled
			}
		}
		return nil
	})
	if err != context.Canceled {
		t.Fatalf("stream: %v; B's last counts said %d lines, want 400", err, bLines)
	}
	// A prints for 4 s at a frame of 1/60 s; B's counts go 4 times a
	// second (a release may be read late, hence the margin), and the
	// last one with B's end.
	if bBatches < 2 || bBatches*3 > aBatches {
		t.Errorf("B's counts came in %d batches, A's in %d: want B's 4 a second, A's at every frame", bBatches, aBatches)
	}
	// The last came with B's end (its status changed), at any time.
	for i := 1; i < len(bAt)-1; i++ {
		if gap := bAt[i].Sub(bAt[i-1]); gap < interval/2 {
			t.Errorf("B's counts %d and %d came %v apart, under the interval %v", i, i+1, gap, interval)
		}
	}
}

// TestHeldCountsTake: the output-only changes of agents not followed are
// held until the interval has passed, replaced by newer ones; a change
// that must go at once takes a held one along; the followed agent's and
// every other change go at once.
func TestHeldCountsTake(t *testing.T) {
	lines := map[string]int64{} // each agent's counts, as its snapshot says them
	feed := &proto.Feed{Payload: func(c *proto.Change) {
		c.Info = &proto.AgentInfo{Submissions: []proto.SubmissionInfo{{Output: proto.OutputCounts{Lines: lines[c.AgentID]}}}}
	}}
	sub := feed.Subscribe()
	defer sub.Close()
	out := func(id string, n int64) {
		lines[id] = n
		feed.Publish(proto.Change{AgentID: id, Output: true})
	}
	ids := func(cs []proto.Change) string {
		s := ""
		for _, c := range cs {
			s += fmt.Sprintf("%s:%v/%v/%d ", c.AgentID, c.Agent, c.Output, c.Info.Submissions[0].Output.Lines)
		}
		return s
	}
	t0 := time.Unix(1000, 0)
	h := heldCounts{interval: time.Second, last: t0}
	out("f", 1)
	out("x", 1)
	out("y", 1)
	if got := ids(h.drain(sub, "f", t0)); got != "f:false/true/1 " {
		t.Errorf("first batch sent %q, want the followed agent's only", got)
	}
	if h.due() != t0.Add(time.Second) {
		t.Errorf("due %v, want a second after the last release", h.due())
	}
	out("x", 2)
	lines["y"] = 3
	feed.Publish(proto.Change{AgentID: "y", Agent: true})
	if got := ids(h.drain(sub, "f", t0.Add(500*time.Millisecond))); got != "y:true/true/3 " {
		t.Errorf("second batch sent %q, want y's status change with its held output", got)
	}
	if got := ids(h.drain(sub, "f", t0.Add(time.Second))); got != "x:false/true/2 " {
		t.Errorf("at the interval sent %q, want x's newest counts", got)
	}
	if ch, stop := h.wake(t0); ch != nil {
		stop()
		t.Error("nothing is held, yet a wake-up is set")
	}
	off := heldCounts{}
	out("x", 1)
	if got := ids(off.drain(sub, "f", t0)); got != "x:false/true/1 " {
		t.Errorf("without an interval sent %q, want everything", got)
	}
}
