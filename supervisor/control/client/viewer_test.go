package client_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// countingCommand prints "line 0" to "line 399", one every 10 ms.
const countingCommand = `i=0; while [ $i -lt 400 ]; do echo "line $i"; i=$((i+1)); sleep 0.01; done`

// TestViewerSeesTheHostsRate: over a real socket, a viewer's snapshot of
// an agent that wrote output has the host's rate.
func TestViewerSeesTheHostsRate(t *testing.T) {
	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(2))
	r, c := controlkit.Attach(t, s)
	sp := controlkit.SpawnFinal(t, c, "hello")
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
	controlkit.Seen(t, r, "the host's rate in the viewer", func() bool {
		a, ok := controlkit.AgentOf(r, sp.AgentID)
		now := time.Now() // both shifted to one clock: a bucket may end between the two snapshots
		return ok && a.OutputRate != nil && a.OutputRate.At(now) == host.At(now)
	})
}

// TestViewerTakesBatchedOutputs: over a real socket, a stream that asks
// for outputs=batch (what a viewer of a host with output-batch asks) gets
// outputs events and no output event, one that does not (an older
// viewer) gets output events; a viewer's snapshot follows the counts.
func TestViewerTakesBatchedOutputs(t *testing.T) {
	s := controlkit.Supervisor(t, func(c *supervisor.Config) {
		c.Command = countingCommand
	})
	r, c := controlkit.Attach(t, s)
	sp, err := c.Spawn(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	names := func(query url.Values) map[string]int {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		seen := map[string]int{}
		_ = c.SSE(ctx, query, func(ev client.Event) error {
			seen[ev.Name]++
			if seen[wire.EventOutput]+seen[wire.EventOutputs] >= 3 {
				return context.Canceled // enough of them
			}
			return nil
		})
		return seen
	}
	if got := names(url.Values{"outputs": {"batch"}}); got[wire.EventOutputs] < 3 || got[wire.EventOutput] != 0 {
		t.Errorf("a stream asking for outputs=batch got %v, want outputs events only", got)
	}
	if got := names(nil); got[wire.EventOutput] < 3 || got[wire.EventOutputs] != 0 {
		t.Errorf("a stream of an older client got %v, want output events only", got)
	}
	controlkit.Seen(t, r, "the viewer's snapshot to count 100 lines", func() bool {
		a, ok := controlkit.AgentOf(r, sp.AgentID)
		return ok && len(a.Submissions) == 1 && a.Submissions[0].Output.Lines >= 100
	})
}

// TestViewerWindowFromPushes: a viewer's requests for the last lines of
// the submission it follows are answered from the windows its host
// pushed, and each answer holds every line the viewer's snapshot counted
// before it asked, also once the host stopped pushing them (here told to
// by the test: its output counts then come without a window); once the
// agent ended, the answer is the host's own.
func TestViewerWindowFromPushes(t *testing.T) {
	s := controlkit.Supervisor(t, func(c *supervisor.Config) { c.Command = countingCommand })
	r, c := controlkit.Attach(t, s)
	ctx := context.Background()
	sp, err := c.Spawn(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	controlkit.Seen(t, r, "the agent in the viewer's table", func() bool { _, ok := controlkit.AgentOf(r, sp.AgentID); return ok })
	sub := r.Subscribe()
	defer sub.Close()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	stopped := false // the host was told to push no more windows
	for {
		a, ok := controlkit.AgentOf(r, sp.AgentID)
		if !ok || len(a.Submissions) != 1 {
			t.Fatalf("the viewer lost agent %s", sp.AgentID)
		}
		counted := a.Submissions[0].Output.Lines
		w, err := r.Window(ctx, sp.AgentID, 1, -1, 10)
		if err != nil {
			t.Fatal(err)
		}
		if w.Total < counted {
			t.Fatalf("a window of %d lines after the viewer counted %d", w.Total, counted)
		}
		if !a.Running() {
			break
		}
		served, stream := client.Pushed(r)
		if served >= 5 && !stopped {
			if _, err := c.Follow(ctx, stream, wire.FollowRequest{}); err != nil {
				t.Fatal(err)
			}
			stopped = true
		}
		if _, err := sub.Next(wctx); err != nil {
			t.Fatalf("no change while the agent ran: %v", err)
		}
	}
	served, _ := client.Pushed(r)
	if !stopped {
		t.Errorf("only %d requests were answered from the windows pushed", served)
	}
	got, err := r.Window(ctx, sp.AgentID, 1, -1, 3)
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.Window(ctx, sp.AgentID, 1, -1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 400 || !slices.Equal(got.Lines, want.Lines) || got.Lines[2].Text != "line 399" {
		t.Errorf("the ended agent's last lines: %+v, the host's %+v", got, want)
	}
}
