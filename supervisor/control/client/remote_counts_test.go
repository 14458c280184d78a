package client

import (
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestViewerTakesTheRate: the output rate and counts an output event
// carries land in the viewer's snapshot of the agent, so its activity
// column moves with the output as the host's does (SPEC §7).
func TestViewerTakesTheRate(t *testing.T) {
	rate := &proto.OutputRate{BucketSeconds: 15, Newest: proto.Time{Time: time.Unix(1_800_000_000, 0).UTC()}, Bytes: [proto.RateBuckets]int64{0, 0, 0, 0, 0, 0, 5, 42}}
	r := &Remote{agents: []proto.AgentInfo{{Summary: proto.Summary{AgentID: "a1"}, Submissions: []proto.SubmissionInfo{{Seq: 1}}}}}
	r.applyCounts(wire.OutputEvent{AgentID: "a1", Seq: 1, Output: proto.OutputCounts{Lines: 3}, Rate: rate})
	if a := r.Agents()[0]; a.OutputRate == nil || a.OutputRate.Bytes != rate.Bytes || a.Submissions[0].Output.Lines != 3 {
		t.Fatalf("the viewer's snapshot: %+v", a)
	}
}

// TestViewerTakesNow: an output event's now is the viewer's snapshot's
// Now, for the agent's latest submission only (SPEC §7, the NOW column).
func TestViewerTakesNow(t *testing.T) {
	r := &Remote{agents: []proto.AgentInfo{{Summary: proto.Summary{AgentID: "a1", Now: "step 1"}, Submissions: []proto.SubmissionInfo{{Seq: 1}, {Seq: 2}}}}}
	r.applyCounts(wire.OutputEvent{AgentID: "a1", Seq: 1, Output: proto.OutputCounts{Lines: 3}, Now: "an earlier submission's"})
	if a := r.Agents()[0]; a.Now != "step 1" {
		t.Fatalf("an earlier submission's output changed now to %q", a.Now)
	}
	r.applyCounts(wire.OutputEvent{AgentID: "a1", Seq: 2, Output: proto.OutputCounts{Lines: 5}, Now: "→ Read supervisor/ops.go"})
	if a := r.Agents()[0]; a.Now != "→ Read supervisor/ops.go" {
		t.Fatalf("the viewer's now %q", a.Now)
	}
}
