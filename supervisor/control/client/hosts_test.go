package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/server"
	"github.com/subdash/subdash/supervisor/proto"
)

// hostOf is a host of a Hosts test: a real supervisor on a socket that
// the test may close and serve again.
type hostOf struct {
	s    *supervisor.Supervisor
	srv  *server.Server
	done chan error
}

// serveHost serves s until the test ends or stop.
func serveHost(t *testing.T, s *supervisor.Supervisor) *hostOf {
	t.Helper()
	h := &hostOf{s: s}
	h.serve(t)
	t.Cleanup(func() { h.stop(t) })
	return h
}

func (h *hostOf) serve(t *testing.T) {
	t.Helper()
	srv, err := server.Listen(h.s)
	if err != nil {
		t.Fatal(err)
	}
	h.srv, h.done = srv, make(chan error, 1)
	go func() { h.done <- srv.Serve(context.Background()) }()
}

func (h *hostOf) stop(t *testing.T) {
	t.Helper()
	if h.srv == nil {
		return
	}
	if err := h.srv.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := <-h.done; err != nil {
		t.Errorf("serve: %v", err)
	}
	h.srv = nil
}

// target is the HostTarget of h named name.
func (h *hostOf) target(name string) client.HostTarget {
	sock := h.s.Config().Socket
	return client.HostTarget{Name: name, Target: sock, Dial: func(context.Context) (*client.Client, client.Relinker, func(), error) {
		return client.NewClient(sock, ""), nil, nil, nil
	}}
}

// seenOn waits, over the changes hs publishes, until cond holds.
func seenOn(t *testing.T, hs *client.Hosts, what string, cond func() bool) {
	t.Helper()
	sub := hs.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for !cond() {
		if _, err := sub.Next(ctx); err != nil {
			t.Fatalf("%s: never happened (%v)", what, err)
		}
	}
}

func hostsAgent(hs *client.Hosts, id string) (proto.AgentInfo, bool) {
	for _, a := range hs.Agents() {
		if a.AgentID == id {
			return a, true
		}
	}
	return proto.AgentInfo{}, false
}

// TestHostsShowsEveryHostAndRoutesEachOperation (SPEC §9 "Several
// hosts"): a viewer of two hosts has both hosts' agents, each tagged with
// its host; a spawn goes to the host named, an operation to its agent's
// host. A host whose server goes away is lost (its agents kept, an
// operation on them refused saying so) while the other goes on, and is
// attached again once it serves.
func TestHostsShowsEveryHostAndRoutesEachOperation(t *testing.T) {
	a, b := serveHost(t, controlkit.Supervisor(t)), serveHost(t, controlkit.Supervisor(t))
	ctx := context.Background()
	onA, err := a.s.Spawn(ctx, "hello a")
	if err != nil {
		t.Fatal(err)
	}
	attachCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	hs, err := client.AttachHosts(attachCtx, []client.HostTarget{a.target("laptop"), b.target("box")})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hs.Detach)
	if got, ok := hostsAgent(hs, onA.AgentID); !ok || got.Host != "laptop" {
		t.Fatalf("agent of host a: %+v %v, want it tagged laptop", got, ok)
	}

	sp, err := hs.Spawn(proto.WithHost(ctx, "box"), "sleep on box")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.s.Agent(sp.AgentID); !ok {
		t.Fatal("the spawn on box is not box's")
	}
	seenOn(t, hs, "box's new agent, tagged box", func() bool {
		got, ok := hostsAgent(hs, sp.AgentID)
		return ok && got.Host == "box" && got.Running()
	})
	if _, err := hs.Interrupt(ctx, sp.AgentID); err != nil {
		t.Fatalf("interrupt of box's agent: %v", err)
	}
	if info, ok := b.s.Agent(sp.AgentID); !ok || info.Running() {
		t.Fatalf("box's agent after the interrupt: %+v %v", info, ok)
	}

	b.stop(t)
	seenOn(t, hs, "box lost", func() bool { return hs.Hosts()[1].Lost != "" })
	if st := hs.Hosts(); st[0].Lost != "" {
		t.Fatalf("laptop lost with box: %+v", st[0])
	}
	if _, ok := hostsAgent(hs, sp.AgentID); !ok {
		t.Fatal("box's agent left the table when box was lost; it stays as last seen")
	}
	var lost *client.LostError
	if _, err := hs.Resume(ctx, sp.AgentID); !errors.As(err, &lost) || lost.Host != "box" {
		t.Fatalf("an operation on a lost host's agent: %v, want a LostError naming box", err)
	}
	if _, err := hs.Close(ctx, onA.AgentID); err != nil {
		t.Fatalf("laptop goes on: close of its agent: %v", err)
	}

	b.serve(t)
	seenOn(t, hs, "box back", func() bool { return hs.Hosts()[1].Lost == "" })
	testkit.Eventually(t, 10*time.Second, "box's agent in the table again", func() bool {
		got, ok := hostsAgent(hs, sp.AgentID)
		return ok && got.Host == "box"
	})
}

// TestHostsCloseManyAsksEachHost: a close of agents of two hosts closes
// each on its own host, in one call.
func TestHostsCloseManyAsksEachHost(t *testing.T) {
	a, b := serveHost(t, controlkit.Supervisor(t)), serveHost(t, controlkit.Supervisor(t))
	ctx := context.Background()
	hs, err := client.AttachHosts(ctx, []client.HostTarget{a.target("a"), b.target("b")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hs.Detach)
	onA, err := hs.Spawn(proto.WithHost(ctx, "a"), "sleep a")
	if err != nil {
		t.Fatal(err)
	}
	onB, err := hs.Spawn(proto.WithHost(ctx, "b"), "sleep b")
	if err != nil {
		t.Fatal(err)
	}
	seenOn(t, hs, "both agents", func() bool {
		_, okA := hostsAgent(hs, onA.AgentID)
		_, okB := hostsAgent(hs, onB.AgentID)
		return okA && okB
	})
	res, err := hs.CloseMany(ctx, proto.CloseManyRequest{AgentIDs: []string{onA.AgentID, onB.AgentID}})
	if err != nil || len(res.Closed) != 2 {
		t.Fatalf("close many: %+v %v", res, err)
	}
	for _, h := range []struct {
		s  *supervisor.Supervisor
		id string
	}{{a.s, onA.AgentID}, {b.s, onB.AgentID}} {
		if info, ok := h.s.Agent(h.id); !ok || info.Status != proto.StatusClosed {
			t.Errorf("agent %s on its host: %+v %v, want closed", h.id, info.Status, ok)
		}
	}
}

// TestHostsStartWithAHostDown: a host that does not answer at the start
// starts lost, saying why, while the other is shown; none answering is
// an error naming each.
func TestHostsStartWithAHostDown(t *testing.T) {
	a := serveHost(t, controlkit.Supervisor(t))
	down := client.HostTarget{Name: "gone", Target: "/nonexistent/s.sock", Dial: func(context.Context) (*client.Client, client.Relinker, func(), error) {
		return client.NewClient("/nonexistent/s.sock", ""), nil, nil, nil
	}}
	ctx := context.Background()
	hs, err := client.AttachHosts(ctx, []client.HostTarget{a.target("a"), down})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hs.Detach)
	if st := hs.Hosts(); st[0].Lost != "" || st[1].Lost == "" {
		t.Fatalf("states %+v: want a up, gone lost", st)
	}
	if _, err := client.AttachHosts(ctx, []client.HostTarget{down, down}); err == nil {
		t.Fatal("no host answering attached")
	}
}

// TestHostsEndWhenEveryHostIsLost: the viewer goes on while one host
// answers, and ends, saying why for each, once every host has been lost
// for AllLostFor (shortened here).
func TestHostsEndWhenEveryHostIsLost(t *testing.T) {
	client.ShortenAllLost(t, time.Second)
	a, b := serveHost(t, controlkit.Supervisor(t)), serveHost(t, controlkit.Supervisor(t))
	hs, err := client.AttachHosts(context.Background(), []client.HostTarget{a.target("a"), b.target("b")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hs.Detach)
	a.stop(t)
	seenOn(t, hs, "a lost", func() bool { return hs.Hosts()[0].Lost != "" })
	select {
	case <-hs.Ended():
		t.Fatal("the viewer ended with b answering")
	case <-time.After(2 * time.Second):
	}
	b.stop(t)
	select {
	case <-hs.Ended():
	case <-time.After(20 * time.Second):
		t.Fatal("the viewer did not end with every host lost")
	}
	if err := hs.Err(); err == nil || !strings.Contains(err.Error(), "every host was lost for 1s (a: ") || !strings.Contains(err.Error(), "; b: ") {
		t.Fatalf("Err = %v", err)
	}
}
