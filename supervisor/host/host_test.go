package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/server"
	"github.com/subdash/subdash/supervisor/proto"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testCommand answers "ok…" with "fine …" and sleeps on anything else.
const testCommand = `read m; case "$m" in ok*) echo "fine $m";; *) exec sleep 60;; esac`

// config returns a host's configuration in a temporary working directory,
// its socket under it, changed by edit.
func config(t *testing.T, edit ...func(*supervisor.Config)) supervisor.Config {
	t.Helper()
	dir := t.TempDir()
	cfg := supervisor.Config{
		Command: testCommand, MaxAgents: 2, Dir: dir, StateDir: filepath.Join(dir, ".state"),
		Socket: filepath.Join(dir, "subdash", "s.sock"), Grace: 300 * time.Millisecond,
		Scrollback: supervisor.DefaultScrollback, Environ: os.Environ(),
		RestoreWindow: supervisor.DefaultRestoreWindow, LogRetention: supervisor.DefaultLogRetention,
	}
	for _, e := range edit {
		e(&cfg)
	}
	return cfg
}

// start starts a host of cfg, stopped when the test ends if it was not.
func start(t *testing.T, cfg supervisor.Config, o Options) *Host {
	t.Helper()
	h, err := Start(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return h
}

// runs returns the run folders under cfg's state directory.
func runs(t *testing.T, cfg supervisor.Config) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(cfg.StateDir, "runs"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestASecondHostIsRefusedAndWritesNothing: while a host serves the
// directory, a second Start is refused naming the first, and leaves no
// run of its own in the state directory (SPEC §10).
func TestASecondHostIsRefusedAndWritesNothing(t *testing.T) {
	cfg := config(t)
	start(t, cfg, Options{Kind: "serve"})
	_, err := Start(cfg, Options{Kind: "serve"})
	var inUse *server.InUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Fatalf("second start: %v; want the socket in use by pid %d", err, os.Getpid())
	}
	if got := runs(t, cfg); len(got) != 1 {
		t.Errorf("runs after a refused start: %q; want the first host's only", got)
	}
}

// TestAFailedStartLetsTheSocketGo: a supervisor that cannot be created
// (no such runner) fails the start with its reason, and the socket is
// free again for the next host.
func TestAFailedStartLetsTheSocketGo(t *testing.T) {
	cfg := config(t)
	bad := cfg
	bad.RunnerName = "nowhere"
	if _, err := Start(bad, Options{}); err == nil || !strings.Contains(err.Error(), `no runner "nowhere"`) {
		t.Fatalf("start with no such runner: %v", err)
	}
	if _, err := os.Stat(cfg.Socket); !os.IsNotExist(err) {
		t.Errorf("socket file after a failed start: %v; want none", err)
	}
	h := start(t, cfg, Options{Kind: "serve"})
	if h.Socket() != cfg.Socket {
		t.Errorf("socket %s; want %s", h.Socket(), cfg.Socket)
	}
}

// TestStopAnswersAWaitInFlight: Stop terminates the running agent before
// it closes the socket, so a wait in flight gets the agent's final status
// (SPEC §3), not an error; then the socket file is gone.
func TestStopAnswersAWaitInFlight(t *testing.T) {
	cfg := config(t)
	h, err := Start(cfg, Options{Kind: "serve"})
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(h.Socket(), cfg.Dir)
	ctx := context.Background()
	sp, err := c.Spawn(ctx, "sleep")
	if err != nil {
		t.Fatal(err)
	}
	type waited struct {
		res proto.WaitResult
		err error
	}
	got := make(chan waited, 1)
	go func() {
		ms := 60_000
		res, err := c.Wait(ctx, []string{sp.AgentID}, &ms)
		got <- waited{res, err}
	}()
	testkit.Eventually(t, 10*time.Second, "the wait did not reach the host", func() bool { return h.srv.Waiting() == 1 })
	if err := h.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	w := <-got
	if w.err != nil || w.res.Status[sp.AgentID] != proto.StatusErrored {
		t.Fatalf("wait in flight during Stop: %+v, %v; want the agent errored (interrupted)", w.res, w.err)
	}
	if _, err := os.Stat(cfg.Socket); !os.IsNotExist(err) {
		t.Errorf("socket file after Stop: %v; want none", err)
	}
	if err := h.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	select {
	case err, ok := <-h.Failed():
		if ok {
			t.Errorf("Failed after a clean Stop: %v", err)
		}
	default:
		t.Error("Failed is not closed after Stop")
	}
}

// TestForwardHandsWarningsAndNotes: Forward hands the start's notes (an
// agent restored) and, later, a warning found while serving (a failing
// --notify-command), each once.
func TestForwardHandsWarningsAndNotes(t *testing.T) {
	cfg := config(t)
	first := start(t, cfg, Options{Kind: "serve"})
	spawnToTheEnd(t, first, "ok one")
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	cfg.NotifyCommand = "echo no notifier here; exit 7"
	h := start(t, cfg, Options{Kind: "serve"})
	var mu sync.Mutex
	var warnings, notes []string
	h.Forward(func(w string) { mu.Lock(); warnings = append(warnings, w); mu.Unlock() },
		func(n string) { mu.Lock(); notes = append(notes, n); mu.Unlock() })
	mu.Lock()
	if len(notes) != 1 || !strings.Contains(notes[0], "restored 1 agent(s) of this directory") {
		t.Errorf("notes of the start: %q; want the agent restored", notes)
	}
	mu.Unlock()
	spawnToTheEnd(t, h, "ok two")
	testkit.Eventually(t, 10*time.Second, "no warning of the failing --notify-command", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(warnings) > 0
	})
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "--notify-command failed: exit status 7: no notifier here") {
		t.Errorf("warnings: %q; want the notify command's failure once", warnings)
	}
}

// spawnToTheEnd spawns an agent on h with message and waits for its final
// status; it returns its id.
func spawnToTheEnd(t *testing.T, h *Host, message string) string {
	t.Helper()
	s := h.Supervisor()
	sp, err := s.Spawn(t.Context(), message)
	if err != nil {
		t.Fatal(err)
	}
	ms := 20_000
	res, err := s.Wait(context.Background(), []string{sp.AgentID}, &ms)
	if err != nil || res.Status[sp.AgentID] != proto.StatusCompleted {
		t.Fatalf("agent on %q: %+v, %v", message, res, err)
	}
	return sp.AgentID
}

// TestStopWaitsOutALongGrace: a grace period longer than
// supervisor.ShutdownTimeout is waited out: an agent that ignores SIGTERM
// gets its SIGKILL when the grace period ends, and Stop then succeeds; it
// does not give up while the agent is still within its grace period.
func TestStopWaitsOutALongGrace(t *testing.T) {
	if testing.Short() {
		t.Skip("waits a grace period longer than supervisor.ShutdownTimeout")
	}
	t.Parallel()
	grace := supervisor.ShutdownTimeout + 2*time.Second
	cfg := config(t, func(c *supervisor.Config) {
		c.Command, c.Grace = `trap '' TERM; read m; echo started; exec sleep 600`, grace
	})
	h, err := Start(cfg, Options{Kind: "serve"})
	if err != nil {
		t.Fatal(err)
	}
	s := h.Supervisor()
	spawnStarted(t, s)
	began := time.Now()
	if err := h.Stop(); err != nil {
		t.Fatalf("stop after %s: %v", time.Since(began).Round(time.Second), err)
	}
	if took := time.Since(began); took < grace {
		t.Errorf("stop took %s, less than the grace period %s: the agent was not given it", took, grace)
	}
	if a := s.Agents(); len(a) != 1 || a[0].Running() {
		t.Errorf("agents after stop: %+v; want one, ended", a)
	}
}

// spawnStarted spawns an agent on s with "hold on" and waits until its
// command wrote its first line: it runs, past any trap it sets.
func spawnStarted(t *testing.T, s *supervisor.Supervisor) {
	t.Helper()
	sp, err := s.Spawn(t.Context(), "hold on")
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the agent did not start", func() bool {
		w, err := s.Window(t.Context(), sp.AgentID, 1, 0, 10)
		return err == nil && len(w.Lines) > 0
	})
}
