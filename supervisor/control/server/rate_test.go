package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestOutputEventsCarryTheRate: an output event carries the agent's
// output rate, so a viewer's activity column moves with the output as the
// host's does (SPEC §7; the viewer's side: client's
// TestViewerTakesTheRate).
func TestOutputEventsCarryTheRate(t *testing.T) {
	rate := &proto.OutputRate{BucketSeconds: 15, Newest: proto.Time{Time: time.Unix(1_800_000_000, 0).UTC()}, Bytes: [proto.RateBuckets]int64{0, 0, 0, 0, 0, 0, 5, 42}}
	info := proto.AgentInfo{Summary: proto.Summary{AgentID: "a1", OutputRate: rate}, Submissions: []proto.SubmissionInfo{{Seq: 1, Output: proto.OutputCounts{Lines: 3}}}}
	var b strings.Builder
	if _, err := writeChanges(&b, []proto.Change{{AgentID: "a1", Output: true, Info: &info}}, false); err != nil {
		t.Fatal(err)
	}
	data, ok := strings.CutPrefix(strings.TrimSpace(b.String()), "event: "+wire.EventOutput+"\ndata: ")
	if !ok {
		t.Fatalf("no output event: %q", b.String())
	}
	var ev wire.OutputEvent
	if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.Rate == nil || ev.Rate.Bytes != rate.Bytes {
		t.Fatalf("output event %s: %+v, %v", data, ev, err)
	}
}
