package supervisor

import (
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/runner"
)

// gatedStart is the local runner whose first Start waits until gate is
// closed: the first agent's process starts after the second's.
type gatedStart struct {
	runner.Runner
	starts atomic.Int32
	gate   chan struct{}
}

func (g *gatedStart) Start(req runner.StartRequest) (runner.Process, error) {
	if g.starts.Add(1) == 1 {
		<-g.gate
	}
	return g.Runner.Start(req)
}

// TestNewAgentsReachSubscribersInTheOrderTheyCame: a dashboard lists
// agents oldest first, adding a new one last as its first change comes
// (ui.applyChanges); so the first change of each new agent reaches a
// subscriber in the order the agents were made (SPEC §6), even when the
// first one's process starts after the second's.
func TestNewAgentsReachSubscribersInTheOrderTheyCame(t *testing.T) {
	f, _ := runner.Lookup(runner.Local)
	lr, err := f(runner.Settings{Environ: os.Environ(), Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedStart{Runner: lr, gate: make(chan struct{})}
	s := newTestSupervisor(t, "cat", func(c *Config) { c.Runner = g })
	sub := s.Subscribe()
	defer sub.Close()
	first := make(chan string, 1)
	go func() { first <- spawn(t, s, "one") }()
	testkit.Eventually(t, 10*time.Second, "the first agent's start waiting", func() bool { return g.starts.Load() == 1 })
	second := spawn(t, s, "two")
	close(g.gate)
	one := <-first

	var seen []string
	testkit.Poll(t, 10*time.Second, "both agents' first changes", func() ([]string, bool) {
		for _, c := range sub.Drain() {
			if c.Info != nil && !slices.Contains(seen, c.AgentID) {
				seen = append(seen, c.AgentID)
			}
		}
		return seen, len(seen) == 2
	})
	if !slices.Equal(seen, []string{one, second}) {
		t.Errorf("the subscriber learned of %q, want %q: the agent made first comes first", seen, []string{one, second})
	}
}
