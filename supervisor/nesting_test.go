package supervisor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/internal/cgroup"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner/local"
)

// The child prints its own pid and waits; CheckNesting must recognise that
// pid, a grandchild's, and one that left the session with setsid, as
// inside the submission, and this test process as outside.
func TestCheckNestingRecognisesProcessesOfASubmission(t *testing.T) {
	// the third process leaves the submission's session with setsid; its
	// parent is still the submission's shell
	s := newTestSupervisor(t, `echo $$; sleep 60 & echo $!; setsid sh -c 'echo $$; exec sleep 60' & wait`)
	id := spawn(t, s, "task")
	waitFor(t, s, 5*time.Second, func() bool { return len(lines(t, s, id)) >= 3 })
	for _, l := range lines(t, s, id)[:3] {
		pid, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil {
			t.Fatal(err)
		}
		err = s.CheckNesting(pid)
		if proto.CodeOf(err) != proto.CodeNested || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "--allow-nested") {
			t.Fatalf("pid %d inside the submission: %v", pid, err)
		}
	}
	if err := s.CheckNesting(os.Getpid()); err != nil {
		t.Fatalf("this process is not a subagent: %v", err)
	}
	nested := newTestSupervisor(t, `echo $$; sleep 60`, func(c *Config) { c.AllowNested = true })
	id = spawn(t, nested, "task")
	waitFor(t, nested, 5*time.Second, func() bool { return len(lines(t, nested, id)) >= 1 })
	pid, _ := strconv.Atoi(lines(t, nested, id)[0])
	if err := nested.CheckNesting(pid); err != nil {
		t.Fatalf("--allow-nested: %v", err)
	}
}

// needCgroups skips a test that needs a cgroup v2 hierarchy this process
// may write in (root here), saying why; under SUBDASH_REQUIRE_TOOLS=1
// (CI, as root) it fails.
func needCgroups(t *testing.T) {
	t.Helper()
	if _, _, ok := cgroup.Writable(); ok {
		return
	}
	why := "no cgroup v2 hierarchy writable by uid " + strconv.Itoa(os.Geteuid()) + " in /proc/self/mountinfo"
	if os.Getenv("SUBDASH_REQUIRE_TOOLS") == "1" {
		t.Fatal(why + " (SUBDASH_REQUIRE_TOOLS=1)")
	}
	t.Skip(why)
}

// TestCheckNestingFindsAChildThatLeftEverything: a process of a submission
// that left its session, its parent and its environment (env -i setsid
// -f: reparented to init, no SUBDASH_SUBMISSION_ID) is found from its
// cgroup, and ends with the agent's close.
func TestCheckNestingFindsAChildThatLeftEverything(t *testing.T) {
	needCgroups(t)
	s := newTestSupervisor(t, `env -i PATH=/usr/bin:/bin setsid -f sh -c 'echo $$ > escaped.pid; exec sleep 600'; exec sleep 600`)
	id := spawn(t, s, "task")
	pid := testkit.Poll(t, 10*time.Second, "the escaped process's pid", func() (int, bool) {
		b, err := os.ReadFile(filepath.Join(s.cfg.Dir, "escaped.pid"))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return pid, err == nil && pid > 0
	})
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	err := s.CheckNesting(pid)
	if proto.CodeOf(err) != proto.CodeNested || !strings.Contains(err.Error(), id) {
		t.Errorf("CheckNesting(the escaped process) = %v; want the agent named", err)
	}
	if _, err := s.Close(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if local.ProcessAlive(pid) {
		t.Errorf("the escaped process %d outlived the agent's close", pid)
	}
}
