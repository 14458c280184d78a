package local

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// startOf starts `sleep 300` in a session of its own with
// SUBDASH_SUBMISSION_ID=id, and kills it at the end of the test.
func startOf(t *testing.T, id string) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "300")
	c.Env = append(os.Environ(), submissionEnv+"="+id)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	return c
}

// TestOrphansAreOnlyThoseOfHostsThatAreGone: a leftover is an orphan when
// its host is gone and a live process is verifiably the submission's (in
// its group, or one that left the group); not when its host still runs,
// when the journal does not name its host, or when its group is another
// submission's.
func TestOrphansAreOnlyThoseOfHostsThatAreGone(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	inGroup := startOf(t, "sub-in-group")
	escaped := startOf(t, "sub-escaped") // its group (PGID below) is gone
	stranger := startOf(t, "someone-else")
	deadHost, liveHost := gone.Process.Pid, os.Getpid()
	leftovers := []Leftover{
		{HostPID: deadHost, SubmissionID: "sub-in-group", PGID: inGroup.Process.Pid},
		{HostPID: deadHost, SubmissionID: "sub-escaped", PGID: deadHost},
		{HostPID: deadHost, SubmissionID: "sub-of-stranger", PGID: stranger.Process.Pid},
		{HostPID: liveHost, SubmissionID: "sub-in-group", PGID: inGroup.Process.Pid},
		{HostPID: 0, SubmissionID: "sub-in-group", PGID: inGroup.Process.Pid},
	}
	got := Orphans(leftovers)
	if len(got) != 2 || got[0] != leftovers[0] || got[1] != leftovers[1] {
		t.Fatalf("orphans %+v; want the first two leftovers only", got)
	}
	if n, err := TerminateOrphan(got[1], 100*time.Millisecond, nil); n != 1 || err != nil {
		t.Fatalf("the orphan whose process left its group: %d escapee(s) signalled, %v; want 1", n, err)
	}
	if n, err := TerminateOrphan(got[0], 100*time.Millisecond, nil); n != 0 || err != nil {
		t.Fatalf("the orphan in its group: %d escapee(s) signalled, %v; want 0", n, err)
	}
	for _, c := range []*exec.Cmd{inGroup, escaped} {
		if !pollUntil(func() bool { return !ProcessAlive(c.Process.Pid) }, 10*time.Second, nil) {
			t.Fatalf("process %d of an orphan is still alive", c.Process.Pid)
		}
	}
	if !ProcessAlive(stranger.Process.Pid) {
		t.Fatal("another submission's process was terminated")
	}
}
