package supervisor

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
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
