package ui

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

// realSupervisor is a host running command with a grace period of 200 ms
// (hostkit.Supervisor).
func realSupervisor(t *testing.T, command string) *supervisor.Supervisor {
	t.Helper()
	return hostkit.Supervisor(t, command, func(c *supervisor.Config) { c.Grace = 200 * time.Millisecond })
}

// runOptions runs the program without a terminal, writing to out.
func runOptions(out *testkit.SyncBuffer, extra ...tea.ProgramOption) Options {
	st := theme.Plain()
	return Options{Styles: &st, Terminal: out, ProgramOptions: append([]tea.ProgramOption{tea.WithInput(nil), tea.WithOutput(out)}, extra...)}
}

// drawn reports whether the program drew a frame on out: entered the
// alternate screen, which it does with its first frame.
func drawn(out *testkit.SyncBuffer) bool { return strings.Contains(out.String(), "\x1b[?1049h") }

// restored reports whether out ends the alternate screen and shows the
// cursor after entering the alternate screen.
func restored(out string) bool {
	enter := strings.Index(out, "\x1b[?1049h")
	leave := strings.LastIndex(out, "\x1b[?1049l")
	return enter >= 0 && leave > enter && strings.Contains(out[leave:]+out[:leave], "\x1b[?25h")
}

func TestRunRestoresTheTerminalAfterAPanic(t *testing.T) {
	s := realSupervisor(t, "sleep 30")
	out := &testkit.SyncBuffer{}
	// The first message once a frame is on the screen (the running
	// agent's clock ticks) panics.
	o := runOptions(out, tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
		if drawn(out) {
			panic("boom in the event loop")
		}
		return msg
	}))
	o.Spawn = []string{"task"}
	err := Run(context.Background(), s, o)
	if !errors.Is(err, tea.ErrProgramPanic) {
		t.Fatalf("Run returned %v, want a panic error", err)
	}
	if !restored(out.String()) {
		t.Fatalf("terminal not restored: %q", out.String())
	}
}

func TestRunEndsWithItsContext(t *testing.T) {
	s := realSupervisor(t, "sleep 30")
	out := &testkit.SyncBuffer{}
	o := runOptions(out)
	o.Spawn = []string{"task"}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Run is ended once its agent runs and a frame is drawn, or at a
		// deadline (the test then fails saying so, instead of never ending).
		defer cancel()
		deadline := time.Now().Add(20 * time.Second)
		for len(s.Agents()) == 0 || !s.Agents()[0].Running() || !drawn(out) {
			if time.Now().After(deadline) {
				t.Errorf("the agent of the spawn did not run, or no frame was drawn, within 20 s")
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if err := Run(ctx, s, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	if !restored(out.String()) {
		t.Fatalf("terminal not restored: %q", out.String())
	}
}

// panicky is a supervisor whose change panics when the forwarder drains
// it (its snapshot is taken then, proto.Feed.Payload); the change comes
// once the program drew a frame on out.
type panicky struct {
	*supervisor.Supervisor
	feed proto.Feed
	out  *testkit.SyncBuffer
}

func (p *panicky) Subscribe() *proto.Subscription {
	p.feed.Payload = func(*proto.Change) { panic("boom in a snapshot") }
	sub := p.feed.Subscribe()
	go func() {
		for !drawn(p.out) {
			time.Sleep(5 * time.Millisecond)
		}
		p.feed.Publish(proto.Change{AgentID: "a", Agent: true})
	}()
	return sub
}

func TestRunRestoresTheTerminalAfterAPanicOutsideTheLoop(t *testing.T) {
	out := &testkit.SyncBuffer{}
	p := &panicky{Supervisor: realSupervisor(t, "true"), out: out}
	o := runOptions(out)
	o.Spawn = []string{"task"}
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), p, o) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "panic") {
			t.Fatalf("Run returned %v, want a panic error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after a panic")
	}
	if !restored(out.String()) {
		t.Fatalf("terminal not restored: %q", out.String())
	}
}

// fakeEvents is an event source whose changes the test adds.
type fakeEvents struct {
	mu      sync.Mutex
	pending []proto.Change
	ready   chan struct{}
}

func (f *fakeEvents) Ready() <-chan struct{} { return f.ready }

func (f *fakeEvents) Drain() []proto.Change {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.pending
	f.pending = nil
	return out
}

func (f *fakeEvents) add(id string) {
	f.mu.Lock()
	f.pending = append(f.pending, proto.Change{AgentID: id, Output: true})
	f.mu.Unlock()
	select {
	case f.ready <- struct{}{}:
	default:
	}
}

// TestForwardCoalesces: while the program is busy with one message (send
// has not returned), any number of changes become one next message.
func TestForwardCoalesces(t *testing.T) {
	ev := &fakeEvents{ready: make(chan struct{}, 1)}
	got := make(chan ChangesMsg)
	busy := make(chan struct{}) // the program works on a message until a receive here
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Forward(ctx, ev, func(m tea.Msg) {
		got <- m.(ChangesMsg)
		select {
		case <-busy:
		case <-ctx.Done():
		}
	}, time.Millisecond)
	ev.add(idA)
	first := <-got
	if len(first.Changes) != 1 || first.Changes[0].AgentID != idA {
		t.Fatalf("first message: %+v", first)
	}
	for i := 0; i < 1000; i++ {
		ev.add(idB)
	}
	busy <- struct{}{} // done with the first message
	second := <-got
	if len(second.Changes) != 1000 {
		t.Fatalf("second message holds %d changes, want all 1000", len(second.Changes))
	}
	close(busy)
	select {
	case m := <-got:
		t.Fatalf("a third message: %+v", m)
	case <-time.After(20 * time.Millisecond):
	}
}

// hanging is a viewer's backend whose spawn waits, as a call on a host
// that stopped answering does, until its context ends.
type hanging struct {
	*fakeSup
	called chan struct{} // closed when the spawn is in flight
	ended  chan error    // the spawn's context's error once it ended
}

func (h *hanging) Subscribe() *proto.Subscription { return h.feed.Subscribe() }

func (h *hanging) Spawn(ctx context.Context, _ string) (proto.SpawnResult, error) {
	close(h.called)
	<-ctx.Done()
	h.ended <- ctx.Err()
	return proto.SpawnResult{}, ctx.Err()
}

// TestQuitEndsTheOperationInFlight: q in a viewer with an operation in
// flight on a host that does not answer ends the dashboard at once, and
// the operation with it: nothing the dashboard started outlives it.
func TestQuitEndsTheOperationInFlight(t *testing.T) {
	f := newFake()
	f.t = t
	h := &hanging{fakeSup: f, called: make(chan struct{}), ended: make(chan error, 1)}
	out := &testkit.SyncBuffer{}
	keys, typed := io.Pipe()
	defer typed.Close() //nolint:errcheck // a pipe: nothing to lose
	o := runOptions(out)
	o.ProgramOptions = []tea.ProgramOption{tea.WithInput(keys), tea.WithOutput(out)}
	o.Spawn = []string{"audit"}
	ran := make(chan error, 1)
	go func() { ran <- Run(context.Background(), h, o) }()
	select {
	case <-h.called:
	case <-time.After(20 * time.Second):
		t.Fatal("the spawn of --spawn was not called within 20 s")
	}
	testkit.Eventually(t, 20*time.Second, "a frame drawn", func() bool { return drawn(out) })
	if _, err := typed.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run returned %v after q", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not end the dashboard within 10 s")
	}
	select {
	case err := <-h.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the spawn in flight ended with %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the spawn in flight outlived the dashboard by 5 s: its context did not end on quit")
	}
}
