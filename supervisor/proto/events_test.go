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
