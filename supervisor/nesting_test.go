package supervisor

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The child prints its own pid and waits; CheckNesting must recognise that
// pid, and a grandchild's, as inside the submission, and this test process
// as outside.
func TestCheckNestingRecognisesProcessesOfASubmission(t *testing.T) {
	s := newTestSupervisor(t, `echo $$; sleep 60 & echo $!; wait`)
	id := spawn(t, s, "task")
	waitFor(t, s, 5*time.Second, func() bool { return len(lines(t, s, id)) >= 2 })
	for _, l := range lines(t, s, id)[:2] {
		pid, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil {
			t.Fatal(err)
		}
		err = s.CheckNesting(pid)
		if CodeOf(err) != CodeNested || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "--allow-nested") {
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
