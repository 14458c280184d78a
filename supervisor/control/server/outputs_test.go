package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestOutputsInOneEvent: with batch, a batch's output notices go as one
// outputs event after the batch's other events, in the order the agents
// changed, with the counts and rates an output event would carry;
// without, one output event per agent, as before.
func TestOutputsInOneEvent(t *testing.T) {
	rate := &proto.OutputRate{BucketSeconds: 15, Newest: proto.Time{Time: time.Unix(1_800_000_000, 0).UTC()}, Bytes: [proto.RateBuckets]int64{7: 42}}
	info := func(id string, lines int64) *proto.AgentInfo {
		return &proto.AgentInfo{Summary: proto.Summary{AgentID: id, OutputRate: rate}, Submissions: []proto.SubmissionInfo{{Seq: 1}, {Seq: 2, Output: proto.OutputCounts{Lines: lines}}}}
	}
	changes := []proto.Change{{AgentID: "a2", Output: true, Info: info("a2", 5)}, {AgentID: "a1", Agent: true, Output: true, Info: info("a1", 3)}}
	var b strings.Builder
	if _, err := writeChanges(&b, changes, true); err != nil {
		t.Fatal(err)
	}
	events := strings.Split(strings.TrimSpace(b.String()), "\n\n")
	if len(events) != 2 || !strings.HasPrefix(events[0], "event: "+wire.EventAgent+"\n") {
		t.Fatalf("want a1's agent event, then one outputs event: %q", b.String())
	}
	data, ok := strings.CutPrefix(events[1], "event: "+wire.EventOutputs+"\ndata: ")
	if !ok {
		t.Fatalf("the last event is not outputs: %q", events[1])
	}
	var got wire.OutputsEvent
	if err := json.Unmarshal([]byte(data), &got); err != nil {
		t.Fatal(err)
	}
	want := []wire.OutputEvent{{AgentID: "a2", Seq: 2, Output: proto.OutputCounts{Lines: 5}, Rate: rate}, {AgentID: "a1", Seq: 2, Output: proto.OutputCounts{Lines: 3}, Rate: rate}}
	if len(got.Outputs) != 2 || got.Outputs[0].AgentID != "a2" || got.Outputs[1].AgentID != "a1" {
		t.Fatalf("outputs %+v, want %+v", got.Outputs, want)
	}
	for i, o := range got.Outputs {
		if o.Seq != want[i].Seq || o.Output != want[i].Output || o.Rate == nil || *o.Rate != *rate {
			t.Errorf("outputs[%d] = %+v, want %+v", i, o, want[i])
		}
	}
	b.Reset()
	if _, err := writeChanges(&b, changes, false); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "event: "+wire.EventOutput+"\n"); n != 2 || strings.Contains(b.String(), wire.EventOutputs) {
		t.Fatalf("without batch: %d output events, want 2 and no outputs event: %q", n, b.String())
	}
}

// A stream's batches come once per frame it asked for (a viewer's 30 Hz),
// never more often than the host's 60 Hz nor less than once a second.
func TestStreamFrame(t *testing.T) {
	for asked, want := range map[string]time.Duration{"": proto.FrameInterval, "soon": proto.FrameInterval, "1ms": proto.FrameInterval,
		proto.ViewerFrameInterval.String(): proto.ViewerFrameInterval, "250ms": 250 * time.Millisecond, "1m": time.Second} {
		if got := streamFrame(asked); got != want {
			t.Errorf("frame=%q: %v, want %v", asked, got, want)
		}
	}
}
