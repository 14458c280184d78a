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

// TestOutputEventsCarryNow: an output event carries what the agent does
// now (Summary.Now), so a viewer's NOW column moves with the output as
// the host's does, line after line, while no snapshot is sent (SPEC §7;
// the viewer's side: client's TestViewerTakesNow).
func TestOutputEventsCarryNow(t *testing.T) {
	info := proto.AgentInfo{Summary: proto.Summary{AgentID: "a1", Now: "→ Bash go test <all> & \"more\""}, Submissions: []proto.SubmissionInfo{{Seq: 1, Output: proto.OutputCounts{Lines: 3}}}}
	for _, batch := range []bool{false, true} {
		var b strings.Builder
		if _, err := writeChanges(&b, []proto.Change{{AgentID: "a1", Output: true, Info: &info}}, batch); err != nil {
			t.Fatal(err)
		}
		var evs []wire.OutputEvent
		for _, l := range strings.Split(b.String(), "\n") {
			data, ok := strings.CutPrefix(l, "data: ")
			if !ok {
				continue
			}
			var one wire.OutputEvent
			var many wire.OutputsEvent
			switch {
			case batch && json.Unmarshal([]byte(data), &many) == nil:
				evs = append(evs, many.Outputs...)
			case !batch && json.Unmarshal([]byte(data), &one) == nil:
				evs = append(evs, one)
			}
		}
		if len(evs) != 1 || evs[0].Now != info.Now {
			t.Fatalf("batch %v: the output events %+v of %q", batch, evs, b.String())
		}
	}
}
