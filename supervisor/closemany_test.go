package supervisor

import (
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/runner/local"
)

// TestCloseManyByStatus: closing every running agent closes them with
// their descendants, one grace period for all of them, and leaves the
// others open; resuming a closed parent reopens what its close took; all
// then closes what is left. A bad request or an unknown target closes
// nothing.
func TestCloseManyByStatus(t *testing.T) {
	const grace = 2 * time.Second
	s := newTestSupervisor(t, stubborn, func(c *Config) { c.MaxAgents = 8; c.Grace = grace })
	a := spawnNamed(t, s, "", "a", "sleep")
	ab := spawnNamed(t, s, a.AgentID, "b", "ok")
	b := spawnNamed(t, s, "", "b", "ok")
	c := spawnNamed(t, s, "", "c", "sleep")
	waitFinal(t, s, ab.AgentID)
	waitFinal(t, s, b.AgentID)
	waitIgnoringTERM(t, s, a.AgentID)
	waitIgnoringTERM(t, s, c.AgentID)

	for _, bad := range []proto.CloseManyRequest{{}, {All: true, Status: proto.StatusRunning}, {Status: "sleeping"}, {Status: proto.StatusClosed}, {AgentIDs: []string{c.AgentID, "nope"}}} {
		if _, err := s.CloseMany(t.Context(), bad); err == nil {
			t.Errorf("CloseMany(%+v) closed without an error", bad)
		}
	}
	if got := summaryOf(t, s, c.AgentID).Status; got != proto.StatusRunning {
		t.Fatalf("a refused CloseMany left c %s", got)
	}

	start := time.Now()
	res, err := s.CloseMany(t.Context(), proto.CloseManyRequest{Status: proto.StatusRunning})
	if err != nil || !slices.Equal(res.Closed, []string{ab.AgentID, a.AgentID, c.AgentID}) {
		t.Fatalf("close --status running: %+v %v; want [ab a c]", res, err)
	}
	// One grace period for all: the two stubborn agents (they ignore
	// SIGTERM) each waited it out and ended less than a grace period
	// apart; closed one after the other they end a grace period apart.
	// The ends, not the call's time: under load (~20) its time past the
	// grace period grew to 2.7 s (0.03-0.04 s on a quiet machine).
	var ends []time.Time
	for _, id := range []string{a.AgentID, c.AgentID} {
		info, _ := s.Agent(id)
		end := info.Submissions[len(info.Submissions)-1].EndedAt
		if end.Sub(start) < grace {
			t.Errorf("%s ended %v after the close began, before its grace period (%v) was out", id[:8], end.Sub(start), grace)
		}
		ends = append(ends, end)
	}
	if apart := ends[1].Sub(ends[0]).Abs(); apart >= grace {
		t.Errorf("the two stubborn agents ended %v apart: a grace period (%v) each, want one for both", apart, grace)
	}
	for id, want := range map[string]proto.Status{a.AgentID: proto.StatusClosed, ab.AgentID: proto.StatusClosed, c.AgentID: proto.StatusClosed, b.AgentID: proto.StatusCompleted} {
		if got := summaryOf(t, s, id).Status; got != want {
			t.Errorf("%s is %s after close --status running, want %s", id[:8], got, want)
		}
	}
	if r, err := s.Resume(t.Context(), a.AgentID); err != nil || !slices.Equal(r.Descendants, []string{ab.AgentID}) {
		t.Errorf("resume a: %+v %v; want its child reopened", r, err)
	}
	res, err = s.CloseMany(t.Context(), proto.CloseManyRequest{All: true})
	if err != nil || !slices.Equal(res.Closed, []string{ab.AgentID, a.AgentID, b.AgentID}) {
		t.Fatalf("close --all: %+v %v; want [ab a b]", res, err)
	}
	if res, err = s.CloseMany(t.Context(), proto.CloseManyRequest{All: true}); err != nil || len(res.Closed) != 0 {
		t.Errorf("close --all with every agent closed: %+v %v; want nothing closed, no error", res, err)
	}
}

// waitIgnoringTERM waits until stubborn agent id sleeps: its shell set
// its TERM trap before reading the message, so a SIGTERM sent now is
// ignored (sent earlier, the shell ends at once).
func waitIgnoringTERM(t *testing.T, s *Supervisor, id string) {
	t.Helper()
	pgid := groupOf(t, s, id)
	testkit.Eventually(t, 10*time.Second, id[:8]+"'s sleep", func() bool {
		members, _ := local.GroupMembers(pgid)
		for _, pid := range members {
			if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && string(comm) == "sleep\n" {
				return true
			}
		}
		return false
	})
}

// TestCloseManyIsOneGracePeriod: fifty agents that ignore SIGTERM, closed
// by one call, are gone after one grace period, not one each (50 s),
// nothing of their process groups left. (The time against grace + 1 s
// with 1,000 agents is BENCHMARKS.md's "A thousand agents".)
func TestCloseManyIsOneGracePeriod(t *testing.T) {
	const n, grace = 50, time.Second
	s := newTestSupervisor(t, stubborn, func(c *Config) { c.MaxAgents = n; c.Grace = grace })
	var groups []int
	for i := range n {
		id := spawnNamed(t, s, "", fmt.Sprintf("a%d", i), "sleep").AgentID
		groups = append(groups, groupOf(t, s, id))
	}
	start := time.Now()
	res, err := s.CloseMany(t.Context(), proto.CloseManyRequest{All: true})
	took := time.Since(start)
	if err != nil || len(res.Closed) != n {
		t.Fatalf("close --all: %d closed, %v", len(res.Closed), err)
	}
	if took > 10*grace {
		t.Errorf("closing %d stubborn agents took %v; want one grace period (%v) for all of them", n, took, grace)
	}
	for _, pg := range groups {
		assertGroupGone(t, pg)
	}
}

// escapeeCounter is a runner whose processes count their calls of
// TerminateEscapees.
type escapeeCounter struct {
	runner.Runner
	calls atomic.Int64
}

func (r *escapeeCounter) Start(req runner.StartRequest) (runner.Process, error) {
	p, err := r.Runner.Start(req)
	if err != nil {
		return nil, err
	}
	return countedEscapees{p, &r.calls}, nil
}

type countedEscapees struct {
	runner.Process
	calls *atomic.Int64
}

func (p countedEscapees) TerminateEscapees(grace time.Duration, cut <-chan struct{}) int {
	p.calls.Add(1)
	return p.Process.TerminateEscapees(grace, cut)
}

// TestAStopLooksForEscapeesOnce: a stopped submission's escapees (SPEC §4:
// processes that left its group) are looked for once, after its group is
// gone; nothing of it is left to start more. Each look reads every
// process's environment, and a thousand stops (quit, close --all) looked
// twice each.
func TestAStopLooksForEscapeesOnce(t *testing.T) {
	f, _ := runner.Lookup(runner.Local)
	lr, err := f(runner.Settings{Environ: os.Environ(), Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := &escapeeCounter{Runner: lr}
	s := newTestSupervisor(t, "sleep 30", func(c *Config) { c.Runner = r })
	ids := []string{spawn(t, s, "a"), spawn(t, s, "b")}
	if _, err := s.CloseMany(t.Context(), proto.CloseManyRequest{All: true}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if d := waitFinal(t, s, id); d.Status != proto.StatusClosed {
			t.Fatalf("%s: %s", id, d.Status)
		}
	}
	if got := r.calls.Load(); got != int64(len(ids)) {
		t.Fatalf("%d stopped submissions looked for escapees %d times, want once each", len(ids), got)
	}
}
