package supervisor

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
)

// An earlier run that died without cleaning up (SIGKILL) left a submission
// running: the next supervisor on the same state directory finds it by its
// journal, checks the process group really is that submission's, and
// terminates it.
func TestLeftoverSubmissionOfADeadRunIsTerminated(t *testing.T) {
	state := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	leftover := exec.Command("sleep", "300")
	leftover.Env = append(os.Environ(), "SUBDASH_SUBMISSION_ID=sub-1")
	leftover.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := leftover.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { _ = leftover.Wait(); close(reaped) }()
	// a live process group with another submission's id must be left alone
	stranger := exec.Command("sleep", "300")
	stranger.Env = append(os.Environ(), "SUBDASH_SUBMISSION_ID=someone-else")
	stranger.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stranger.Process.Kill(); _ = stranger.Wait() }()

	old := filepath.Join(state, "runs", "20200101T000000Z-aaaaaa")
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, ev := range []journal.Event{
		{Event: "run_started", PID: dead.Process.Pid},
		{Event: "submission_started", AgentID: "a-1", SubmissionID: "sub-1", PID: leftover.Process.Pid},
		{Event: "submission_started", AgentID: "a-2", SubmissionID: "sub-2", PID: stranger.Process.Pid},
	} {
		b, _ := json.Marshal(ev)
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(old, "journal.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	s := newTestSupervisor(t, "true", func(c *Config) { c.StateDir = state })
	if notes := s.Config().Notes; len(notes) != 1 || !strings.Contains(notes[0], "found 1 agent process group(s) left running by an earlier subdash that did not exit cleanly, and terminated them") {
		t.Fatalf("notes = %q", notes)
	}
	select {
	case <-reaped:
	case <-time.After(30 * time.Second):
		t.Fatal("the leftover submission was not terminated")
	}
	if err := stranger.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatal("a process group that is not the submission's was terminated")
	}
}
