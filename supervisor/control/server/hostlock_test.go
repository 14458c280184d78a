package server

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// TestHostLockTakenAgainAfterRemoval: the state directory removed under a
// serving host takes its host lock with it; the host takes it again
// within seconds, so a second host of the same directory on another
// socket is still refused, naming this one.
func TestHostLockTakenAgainAfterRemoval(t *testing.T) {
	s := newSupervisor(t, 2)
	serve(t, s)
	cfg := s.Config()
	other := cfg
	other.Socket = filepath.Join(cfg.Dir, "other", "s.sock")
	refused := func() error {
		sk, err := Take(other)
		if err == nil {
			_ = sk.Close() // a test's second socket: nothing was served on it
		}
		return err
	}
	var elsewhere *HostedElsewhereError
	if err := refused(); !errors.As(err, &elsewhere) {
		t.Fatalf("a second host before the removal: %v", err)
	}
	if err := os.RemoveAll(cfg.StateDir); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 15*time.Second, "the host lock taken again", func() bool {
		return lockedSocket(cfg.StateDir, cfg.Dir) == cfg.Socket
	})
	err := refused()
	if !errors.As(err, &elsewhere) || elsewhere.PID != os.Getpid() || elsewhere.Socket != cfg.Socket {
		t.Fatalf("a second host after the removal: %v; want it refused, naming this host", err)
	}
}
