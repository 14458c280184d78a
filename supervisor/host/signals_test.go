package host

import (
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
)

// sendSelf sends sig to this process (taken by TakeSignals, so it does not
// end the test binary).
func sendSelf(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
}

// TestTheFirstSignalEndsTheHost: a held signal (SIGINT while the pager
// runs) is passed over; the next one ends the host, naming itself, and
// makes the exit status 128+n (SPEC §6).
func TestTheFirstSignalEndsTheHost(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	g := TakeSignals(func(s os.Signal) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, s.String())
		return s == syscall.SIGINT
	})
	defer g.Release()
	sendSelf(t, syscall.SIGINT)
	testkit.Eventually(t, 5*time.Second, "SIGINT was not taken", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(asked) == 1
	})
	if err := g.Context().Err(); err != nil || g.Status(0) != 0 {
		t.Fatalf("after a held SIGINT: context %v, status %d; want neither ended", err, g.Status(0))
	}
	sendSelf(t, syscall.SIGHUP)
	select {
	case <-g.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGHUP did not end the host")
	}
	if cause := context.Cause(g.Context()); cause == nil || cause.Error() != "SIGHUP received" {
		t.Errorf("cause %v; want SIGHUP received", cause)
	}
	if got := g.Status(0); got != 128+int(syscall.SIGHUP) {
		t.Errorf("status %d; want %d", got, 128+int(syscall.SIGHUP))
	}
	sendSelf(t, syscall.SIGTERM)
	testkit.Eventually(t, 5*time.Second, "SIGTERM was not taken", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(asked) == 3
	})
	if got := g.Status(1); got != 128+int(syscall.SIGHUP) {
		t.Errorf("status after a later SIGTERM %d; want the first signal's, %d", got, 128+int(syscall.SIGHUP))
	}
}

// TestASignalWhileStoppingSkipsTheGrace: an agent that ignores SIGTERM
// would hold Stop for its 20 s grace period; a signal once Stop began
// kills it at once ("ctrl+c: kill them now"), and does not count as the
// signal that ended the host. Stop says on stderr what it stops.
func TestASignalWhileStoppingSkipsTheGrace(t *testing.T) {
	g := TakeSignals(nil)
	defer g.Release()
	cfg := config(t, func(c *supervisor.Config) {
		c.Command, c.Grace = `trap '' TERM; read m; echo started; exec sleep 60`, 20*time.Second
	})
	var stderr strings.Builder
	h, err := Start(cfg, Options{Kind: "serve", Signals: g, Stderr: &stderr, Name: "subdash serve"})
	if err != nil {
		t.Fatal(err)
	}
	s := h.Supervisor()
	sp, err := s.Spawn(t.Context(), "hold on")
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the agent did not start", func() bool {
		w, err := s.Window(t.Context(), sp.AgentID, 1, 0, 10)
		return err == nil && len(w.Lines) > 0
	})
	stopped := make(chan error, 1)
	began := time.Now()
	go func() { stopped <- h.Stop() }()
	testkit.Eventually(t, 5*time.Second, "Stop did not begin", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.cut != nil
	})
	sendSelf(t, syscall.SIGTERM)
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("stop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Stop still waits %s after the signal; the grace period was not skipped", time.Since(began))
	}
	if got := g.Status(0); got != 0 {
		t.Errorf("status %d; want 0: the signal came while stopping", got)
	}
	if want := "subdash serve: stopping 1 running agent(s)… (ctrl+c: kill them now)\n"; stderr.String() != want {
		t.Errorf("stderr %q; want %q", stderr.String(), want)
	}
	if err := g.Context().Err(); err != nil {
		t.Errorf("context ended by a signal while stopping: %v", err)
	}
}
