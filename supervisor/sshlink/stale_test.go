package sshlink

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// deadFolder makes in base the folder of sockets of a link whose process
// is gone (a process that ran and ended) and returns it with that pid.
func deadFolder(t *testing.T, base string) (string, int) {
	t.Helper()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(base, fmt.Sprintf("subdash-ssh-%d-123", gone.Process.Pid))
	if err := os.MkdirAll(filepath.Join(dead, "cm"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dead, gone.Process.Pid
}

// The folder of a link whose process was killed (SIGKILL: no Close) goes
// at the next Dial's removeStale; a live process's folder, and an older
// folder named without a pid, stay.
func TestRemoveStaleFoldersOfGoneProcesses(t *testing.T) {
	base := t.TempDir()
	dead, pid := deadFolder(t, base)
	live := filepath.Join(base, fmt.Sprintf("subdash-ssh-%d-456", os.Getpid()))
	old := filepath.Join(base, "subdash-ssh-789012")
	other := filepath.Join(base, "other-1-2")
	for _, d := range []string{live, old, other} {
		if err := os.MkdirAll(filepath.Join(d, "cm"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeStale(base)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the folder of gone pid %d is still there (%v)", pid, err)
	}
	for _, d := range []string{live, old, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

// Two links dialled at once read the same folders: a stale folder the
// other link removed between this one's ReadDir and its look at the
// folder is passed over (it panicked on the missing folder's info).
func TestRemoveStaleOfAFolderGoneSince(t *testing.T) {
	base := t.TempDir()
	dead, _ := deadFolder(t, base)
	entries, err := os.ReadDir(base)
	if err != nil || len(entries) != 1 {
		t.Fatalf("read %s: %v %v", base, entries, err)
	}
	if err := os.RemoveAll(dead); err != nil { // the other link's removeStale
		t.Fatal(err)
	}
	removeStaleOf(base, entries)
}
