package ui

import (
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// TestChangesCarryTheirAgents: a change puts the snapshot it carries in
// the table (the agent's row alone), a new agent comes last, a forgotten
// one leaves.
func TestChangesCarryTheirAgents(t *testing.T) {
	f := threeAgents()
	h := newHarness(t, f, 100, 30)
	b := h.m.agents[1]
	b.Status, b.LastMessage = proto.StatusClosed, "closed by another client"
	n := proto.AgentInfo{Summary: proto.Summary{AgentID: "d0000000-4444-4444-8444-444444444444", Status: proto.StatusRunning, LastMessage: "a new one"}}
	h.send(ChangesMsg{Changes: []proto.Change{
		{AgentID: b.AgentID, Agent: true, Info: &b},
		{AgentID: idC, Agent: true, Forgotten: true},
		{AgentID: n.AgentID, Agent: true, Info: &n},
	}})
	var ids []string
	for _, a := range h.m.agents {
		ids = append(ids, a.AgentID)
	}
	if len(ids) != 3 || ids[0] != idA || ids[1] != idB || ids[2] != n.AgentID {
		t.Fatalf("table %v; want A, B, then the new agent", ids)
	}
	if h.m.agents[1].Status != proto.StatusClosed {
		t.Fatalf("B is %s, want its new snapshot's closed", h.m.agents[1].Status)
	}
	h.wantScreen("closed by another client")
	h.wantScreen("a new one")
	h.noScreen("run the flaky tests")
}

// TestAnOperationsOutcomeArrivesOnce: an operation's outcome reaches the
// table on the event path, once (a change of the agent it acted on), and
// the dashboard asks for no snapshot of every agent for it.
func TestAnOperationsOutcomeArrivesOnce(t *testing.T) {
	f := threeAgents()
	h := newHarness(t, f, 100, 30)
	got := 0
	h.onChanges = func(msg ChangesMsg) {
		for _, c := range msg.Changes {
			if c.AgentID == idA {
				got++
			}
		}
	}
	snapshots := f.agentsCalls.Load()
	h.keys("c", "y") // close the running agent A
	if got != 1 {
		t.Fatalf("the close reached the table in %d changes of A, want 1", got)
	}
	if n := f.agentsCalls.Load() - snapshots; n != 0 {
		t.Fatalf("the close took %d snapshots of every agent", n)
	}
	if row := h.row(idA); !strings.Contains(row, "closed") {
		t.Fatalf("A's row after close: %q", row)
	}
}
