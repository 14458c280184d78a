package signals

import (
	"context"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// sendSelf sends sig to this process (taken by Take, so it does not end
// the test binary).
func sendSelf(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
}

// TestTheFirstSignalEndsTheCommand: a held signal (SIGINT while the pager
// runs) is passed over; the next one ends the command, naming itself, and
// makes the exit status 128+n (SPEC §6).
func TestTheFirstSignalEndsTheCommand(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	g := Take(func(s os.Signal) bool {
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
		t.Fatal("SIGHUP did not end the command")
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

// TestThenTakesTheLaterSignals: once Then, a signal calls its function
// and neither ends the command nor counts for its status.
func TestThenTakesTheLaterSignals(t *testing.T) {
	g := Take(nil)
	defer g.Release()
	called := make(chan struct{}, 1)
	g.Then(func() { called <- struct{}{} })
	sendSelf(t, syscall.SIGTERM)
	select {
	case <-called:
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not call Then's function")
	}
	if err := g.Context().Err(); err != nil || g.Status(0) != 0 {
		t.Errorf("context %v, status %d; want neither ended", err, g.Status(0))
	}
}
