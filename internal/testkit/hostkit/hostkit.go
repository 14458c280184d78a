// Package hostkit starts real hosts (supervisor.Supervisor) for the tests
// of the packages built on the engine: the tests of the control socket's
// packages, mcpserver and ui import it instead of each keeping a copy of
// the same set-up. Only tests
// import it. The engine's own tests (package supervisor) cannot, since
// hostkit imports the engine; they keep newTestSupervisor.
package hostkit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor"
)

// Defaults of Supervisor's configuration.
const (
	// MaxAgents is the maximum of agents running at once.
	MaxAgents = 4
	// Grace is the grace period between SIGTERM and SIGKILL of an agent's
	// process group: short, so that an interrupt ends a test's agent soon.
	Grace = 300 * time.Millisecond
)

// Supervisor returns a host running command (through sh -c, as
// --command) in a fresh working directory t.TempDir() with its state in
// DIR/.state, at most MaxAgents agents at once, a grace period of Grace,
// supervisor.DefaultScrollback lines of scrollback, this process's
// environment and no socket (Config.Socket empty: an edit sets one for a
// test that listens). edits change that configuration, in order, before
// supervisor.New. A configuration New
// refuses fails the test (t.Fatal). The host is shut down when the test
// ends (within its own bound, supervisor.ShutdownTimeout); a shutdown
// error fails the test (t.Errorf).
func Supervisor(t testing.TB, command string, edits ...func(*supervisor.Config)) *supervisor.Supervisor {
	t.Helper()
	dir := t.TempDir()
	cfg := supervisor.Config{
		Command:    command,
		MaxAgents:  MaxAgents,
		Dir:        dir,
		StateDir:   filepath.Join(dir, ".state"),
		Grace:      Grace,
		Scrollback: supervisor.DefaultScrollback,
		Environ:    os.Environ(),
	}
	for _, edit := range edits {
		edit(&cfg)
	}
	s, err := supervisor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

// MaxAgentsOf returns an edit of Supervisor's configuration that sets
// the maximum of agents running at once to n.
func MaxAgentsOf(n int) func(*supervisor.Config) {
	return func(c *supervisor.Config) { c.MaxAgents = n }
}
