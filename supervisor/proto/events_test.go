package proto

import "testing"

// TestWaitIsNotWokenByOutput: a wait in flight subscribes to summaries
// only: every read of a flooding agent changes its output, and none of
// them wakes the wait; a change of the summary does, as does a warning.
func TestWaitIsNotWokenByOutput(t *testing.T) {
	var h Feed
	sub := h.SubscribeSummaries()
	defer sub.Close()
	h.Publish(Change{AgentID: "a", Output: true})
	select {
	case <-sub.Ready():
		t.Fatalf("woken by output alone: %+v", sub.Drain())
	default:
	}
	h.Publish(Change{AgentID: "a", Agent: true})
	h.Publish(Change{AgentID: "b", Warnings: []string{"w"}})
	select {
	case <-sub.Ready():
	default:
		t.Fatal("a summary change did not wake the subscription")
	}
	if got := sub.Drain(); len(got) != 2 || !got[0].Agent || got[0].Output || got[1].AgentID != "b" {
		t.Fatalf("drained %+v; want a's summary change, then b's warning", got)
	}
}

// A drained change of an agent carries its snapshot as the Feed's Payload
// takes it at drain time (the latest of the coalesced changes); a
// forgotten agent, a warning and a summaries subscription carry none.
func TestDrainedChangesCarryTheirAgent(t *testing.T) {
	var f Feed
	status := StatusRunning
	snaps := 0
	f.Payload = func(c *Change) {
		snaps++
		if c.AgentID == "a" {
			c.Info = &AgentInfo{Summary: Summary{AgentID: "a", Status: status},
				Submissions: []SubmissionInfo{{Seq: 1}, {Seq: 2, Output: OutputCounts{Lines: 7}}}}
		}
	}
	sub, sums := f.Subscribe(), f.SubscribeSummaries()
	defer sub.Close()
	defer sums.Close()
	f.Publish(Change{AgentID: "a", Output: true})
	f.Publish(Change{AgentID: "a", Agent: true})
	f.Publish(Change{AgentID: "gone", Agent: true, Forgotten: true})
	f.Publish(Change{Warnings: []string{"w"}})
	status = StatusCompleted // after the publishes: the drain sees it
	got := sub.Drain()
	if len(got) != 3 || got[0].Info == nil || got[0].Info.Status != StatusCompleted || got[1].Info != nil || got[2].Info != nil {
		t.Fatalf("drained %+v", got)
	}
	if seq, counts, ok := got[0].LatestOutput(); !ok || seq != 2 || counts.Lines != 7 {
		t.Fatalf("latest output %d %+v %v", seq, counts, ok)
	}
	if _, _, ok := got[2].LatestOutput(); ok {
		t.Fatal("a warning has an output")
	}
	if snaps != 1 {
		t.Fatalf("%d snapshots taken for one agent that changed", snaps)
	}
	for _, c := range sums.Drain() {
		if c.Info != nil {
			t.Fatalf("a summaries subscription took a snapshot: %+v", c)
		}
	}
}
