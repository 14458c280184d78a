package host

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/signals"
	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
)

// sendSelf sends sig to this process (taken by signals.Take, so it does
// not end the test binary).
func sendSelf(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
}

// TestASignalWhileStoppingSkipsTheGrace: an agent that ignores SIGTERM
// would hold Stop for its 20 s grace period; a signal once Stop began
// kills it at once ("ctrl+c: kill them now"), and does not count as the
// signal that ended the host. Stop says on stderr what it stops.
func TestASignalWhileStoppingSkipsTheGrace(t *testing.T) {
	g := signals.Take(nil)
	defer g.Release()
	cfg := config(t, func(c *supervisor.Config) {
		c.Command, c.Grace = `trap '' TERM; read m; echo started; exec sleep 60`, 20*time.Second
	})
	var stderr testkit.SyncBuffer
	h, err := Start(cfg, Options{Kind: "serve", Signals: g, Stderr: &stderr, Name: "subdash serve"})
	if err != nil {
		t.Fatal(err)
	}
	s := h.Supervisor()
	spawnStarted(t, s)
	stopped := make(chan error, 1)
	began := time.Now()
	go func() { stopped <- h.Stop() }()
	// Stop says what it stops once it took the signals over.
	testkit.Eventually(t, 5*time.Second, "Stop did not begin", func() bool {
		return strings.Contains(stderr.String(), "stopping")
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
