package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestRemoteFollowsTheHost: a viewer's snapshots follow spawn, output
// (with the counts the output events carry), close and forget made by
// another client, and its windows are the host's.
func TestRemoteFollowsTheHost(t *testing.T) {
	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(2))
	r, c := controlkit.Attach(t, s)
	ctx := context.Background()
	sp := controlkit.SpawnFinal(t, c, "hello")
	controlkit.Seen(t, r, "the completed agent with its one line", func() bool {
		a, ok := controlkit.AgentOf(r, sp.AgentID)
		return ok && a.Status == proto.StatusCompleted && len(a.Submissions) == 1 && a.Submissions[0].Output.Lines == 1
	})
	w, err := r.Window(ctx, sp.AgentID, 0, -1, 10)
	if err != nil || w.Total != 1 || len(w.Lines) != 1 || w.Lines[0].Text != "got: hello" {
		t.Fatalf("tail window = %+v, %v", w, err)
	}

	if _, err := c.Close(ctx, sp.AgentID); err != nil {
		t.Fatal(err)
	}
	controlkit.Seen(t, r, "the closed agent", func() bool {
		a, ok := controlkit.AgentOf(r, sp.AgentID)
		return ok && a.Status == proto.StatusClosed
	})
	changes := r.Subscribe()
	defer changes.Close()
	if _, err := c.Forget(ctx, sp.AgentID); err != nil {
		t.Fatal(err)
	}
	controlkit.Seen(t, r, "the forgotten agent gone", func() bool {
		_, ok := controlkit.AgentOf(r, sp.AgentID)
		return !ok
	})
	// the dashboard learns it from the change: forgotten, no snapshot
	forgotten := false
	for _, ch := range changes.Drain() {
		forgotten = forgotten || ch.AgentID == sp.AgentID && ch.Forgotten && ch.Info == nil
	}
	if !forgotten {
		t.Fatal("the viewer's changes do not say the agent was forgotten")
	}
	if r.Agents() == nil {
		t.Fatal("an empty table came as nil, which the dashboard takes for no snapshot")
	}
	if _, err := r.Window(ctx, sp.AgentID, 0, 0, 10); err == nil || !strings.Contains(err.Error(), "agent not found") {
		t.Fatalf("window of a forgotten agent: %v", err)
	}
}

// TestRemoteCountsFollowAStream: while a submission prints, the counts in
// the viewer's snapshot grow with every output event, without a window
// being asked for.
func TestRemoteCountsFollowAStream(t *testing.T) {
	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(2))
	r, c := controlkit.Attach(t, s)
	sp := controlkit.SpawnFinal(t, c, "hello")
	if _, err := c.Send(context.Background(), sp.AgentID, fmt.Sprintf("lines %d", 500), false); err != nil {
		t.Fatal(err)
	}
	controlkit.Seen(t, r, "submission 2's counts", func() bool {
		a, ok := controlkit.AgentOf(r, sp.AgentID)
		return ok && len(a.Submissions) == 2 && a.Submissions[1].Output.Lines >= 1
	})
}

// TestRemoteGetsTheHostsWarnings: a problem the host finds while a viewer
// is attached (here its --notify-command failing) reaches the viewer as a
// warning, once.
func TestRemoteGetsTheHostsWarnings(t *testing.T) {
	s := controlkit.Supervisor(t, func(c *supervisor.Config) { c.NotifyCommand = "echo broken >&2; exit 3" })
	r, c := controlkit.Attach(t, s)
	sub := r.Subscribe()
	defer sub.Close()
	controlkit.SpawnFinal(t, c, "hello")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		changes, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("no warning reached the viewer: %v", err)
		}
		for _, ch := range changes {
			for _, w := range ch.Warnings {
				if strings.Contains(w, "--notify-command failed") && strings.Contains(w, "broken") {
					return
				}
				t.Fatalf("unexpected warning %q", w)
			}
		}
	}
}
