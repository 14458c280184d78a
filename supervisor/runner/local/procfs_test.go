package local

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestDescendants: the children and grandchildren of a process, not
// itself, not its siblings.
func TestDescendants(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & sh -c 'sleep 301; true' & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, pid := range Descendants(cmd.Process.Pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	var got []int
	if !pollUntil(func() bool { got = Descendants(cmd.Process.Pid); return len(got) == 3 }, 10*time.Second, nil) {
		t.Fatalf("descendants of sh: %v, want the two children and a grandchild", got)
	}
	if slices.Contains(got, cmd.Process.Pid) || slices.Contains(got, os.Getpid()) {
		t.Fatalf("descendants %v hold the process itself or its parent", got)
	}
}
