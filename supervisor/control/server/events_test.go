package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestEventsSendOnlyTheAgentsThatChanged: after the first snapshot of
// every agent, the event stream sends the agents that changed, each with
// the snapshot its change carries, and no other agent's.
func TestEventsSendOnlyTheAgentsThatChanged(t *testing.T) {
	s := newSupervisor(t, 2)
	_, c := serve(t, s)
	ctx := context.Background()
	var ids []string
	for _, m := range []string{"one", "two"} {
		sp, err := c.Spawn(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sp.AgentID)
	}
	ms := 30000
	for _, id := range ids {
		if _, err := c.Wait(ctx, []string{id}, &ms); err != nil {
			t.Fatal(err)
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type ev struct {
		name, id string
		status   proto.Status
	}
	got := make(chan ev, 100)
	done := make(chan error, 1)
	go func() {
		done <- c.SSE(sctx, nil, func(e client.Event) error {
			var a proto.AgentInfo
			_ = json.Unmarshal(e.Data, &a)
			got <- ev{e.Name, a.AgentID, a.Status}
			return nil
		})
	}()
	for e := range got {
		if e.name == wire.EventSynced {
			break
		}
	}
	if _, err := c.Close(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(2 * time.Second)
	closed := false
	for !closed {
		select {
		case e := <-got:
			if e.name == wire.EventAgent && e.id != ids[1] {
				t.Fatalf("an event for agent %s, which did not change", e.id)
			}
			closed = e.name == wire.EventAgent && e.status == proto.StatusClosed
		case <-deadline:
			t.Fatal("no event for the closed agent")
		}
	}
	// a frame more: nothing for the other agent
	select {
	case e := <-got:
		if e.id == ids[0] {
			t.Fatalf("an event for agent %s, which did not change: %+v", ids[0], e)
		}
	case <-time.After(5 * proto.FrameInterval):
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
