package control

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestOutputEventsCarryTheRate: an output event carries the agent's
// output rate and a viewer's snapshot takes it, so its activity column
// moves with the output as the host's does (SPEC §7).
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
	r := &Remote{agents: []proto.AgentInfo{{Summary: proto.Summary{AgentID: "a1"}, Submissions: []proto.SubmissionInfo{{Seq: 1}}}}}
	r.applyCounts(ev)
	if a := r.agents[0]; a.OutputRate == nil || a.OutputRate.Bytes != rate.Bytes || a.Submissions[0].Output.Lines != 3 {
		t.Fatalf("the viewer's snapshot: %+v", a)
	}
}

// TestViewerSeesTheHostsRate: over a real socket, a viewer's snapshot of
// an agent that wrote output has the host's rate.
func TestViewerSeesTheHostsRate(t *testing.T) {
	s := newSupervisor(t, 2)
	r, c := attach(t, s)
	sp := spawnFinal(t, c, "hello")
	var host *proto.OutputRate
	for _, a := range s.Agents() {
		if a.AgentID == sp.AgentID {
			host = a.OutputRate
		}
	}
	if host == nil {
		t.Fatal("the host counted no output")
	}
	sum := int64(0)
	for _, n := range host.Bytes {
		sum += n
	}
	if sum != int64(len("got: hello\n")) {
		t.Fatalf("the host counted %d bytes, want %d", sum, len("got: hello\n"))
	}
	seen(t, r, "the host's rate in the viewer", func() bool {
		a, ok := agentOf(r, sp.AgentID)
		now := time.Now() // both shifted to one clock: a bucket may end between the two snapshots
		return ok && a.OutputRate != nil && a.OutputRate.At(now) == host.At(now)
	})
}
