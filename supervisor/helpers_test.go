package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner/local"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newTestSupervisor returns a supervisor running command in a temporary
// working directory, shut down when the test ends.
func newTestSupervisor(t *testing.T, command string, edit ...func(*Config)) *Supervisor {
	t.Helper()
	dir := t.TempDir()
	cfg := Config{
		Command:    command,
		MaxAgents:  4,
		Dir:        dir,
		StateDir:   filepath.Join(dir, ".state"),
		Grace:      300 * time.Millisecond,
		Scrollback: DefaultScrollback,
		Environ:    os.Environ(),
	}
	for _, e := range edit {
		e(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

// waitFinal waits (up to the 5 minutes Wait allows) until agent id is final
// and returns its details.
func waitFinal(t *testing.T, s *Supervisor, id string) proto.WaitDetail {
	t.Helper()
	ms := proto.MaxWaitTimeoutMS
	res, err := s.Wait(context.Background(), []string{id}, &ms)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	if res.TimedOut {
		t.Fatalf("wait %s timed out", id)
	}
	return res.Details[id]
}

// spawn spawns an agent or fails the test.
func spawn(t *testing.T, s *Supervisor, msg string) string {
	t.Helper()
	res, err := s.Spawn(t.Context(), msg)
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}
	return res.AgentID
}

// lines returns the plain display lines of the latest submission of id.
func lines(t *testing.T, s *Supervisor, id string) []string {
	t.Helper()
	w, err := s.Window(t.Context(), id, 0, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(w.Lines))
	for i, l := range w.Lines {
		out[i] = l.Text
	}
	return out
}

// waitForLine waits, event-driven, until a display line of agent id
// contains want, failing after d.
func waitForLine(t *testing.T, s *Supervisor, id, want string, d time.Duration) {
	t.Helper()
	sub := s.Subscribe()
	defer sub.Close()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		for _, l := range lines(t, s, id) {
			if strings.Contains(l, want) {
				return
			}
		}
		select {
		case <-sub.Ready():
			sub.Drain()
		case <-deadline.C:
			t.Fatalf("no line containing %q within %s; lines: %q", want, d, lines(t, s, id))
		}
	}
}

// groupOf returns the process group of the latest submission of id.
func groupOf(t *testing.T, s *Supervisor, id string) int {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[id]
	sub := a.subs[len(a.subs)-1]
	if sub.proc == nil {
		t.Fatal("submission has no process")
	}
	return sub.proc.pgid
}

// assertGroupGone fails when a process of group pgid is still alive.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	if members, err := local.GroupMembers(pgid); err != nil || len(members) > 0 {
		t.Fatalf("process group %d still has live members %v (err %v)", pgid, members, err)
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func statFile(p string) (os.FileInfo, error) { return os.Stat(p) }

// listOf returns every agent's summary, oldest first (s.List).
func listOf(s *Supervisor) []proto.Summary {
	res, _ := s.List(context.Background())
	return res.Agents
}

// breakJournal makes every later write to the journal at path fail with
// EBADF, as a disk that went away would: the writer's descriptor is
// replaced (dup2) by one open for reading only.
func breakJournal(t *testing.T, path string) {
	t.Helper()
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close() //nolint:errcheck // read only: its Close cannot lose data
	replaceJournalFD(t, path, ro)
}

// mendJournal undoes breakJournal: the writer's descriptor is replaced by
// one open for appending again, as a disk that came back.
func mendJournal(t *testing.T, path string) {
	t.Helper()
	rw, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close() //nolint:errcheck // its duplicate stays the writer's; this one wrote nothing
	replaceJournalFD(t, path, rw)
}

// replaceJournalFD replaces (dup2) the descriptor of this process that
// names path, other than by's, with by.
func replaceJournalFD(t *testing.T, path string, ro *os.File) {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd == int(ro.Fd()) {
			continue
		}
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == path {
			if err := unix.Dup2(int(ro.Fd()), fd); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no descriptor of this process writes %s", path)
}
