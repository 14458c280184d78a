package fdlimit

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestWarningSaysByHowMuchAndWhatToDo(t *testing.T) {
	if w := Warning(100, 1024); w != "" {
		t.Errorf("100 agents fit 1,024 files, got %q", w)
	}
	w := Warning(1000, 1024)
	for _, want := range []string{"--max-agents 1000", "about 5064 open files", "ulimit -n) is 1024", "4040 short", "about 192 agents fit", "ulimit -n 5120", "too many open files"} {
		if !strings.Contains(w, want) {
			t.Errorf("the warning %q does not say %q", w, want)
		}
	}
	if w := Warning(1000, 20000); w != "" {
		t.Errorf("1,000 agents fit 20,000 files, got %q", w)
	}
}

func TestLimitIsTheProcesses(t *testing.T) {
	n, err := Limit()
	if err != nil || n == 0 {
		t.Fatalf("Limit: %d, %v", n, err)
	}
}

// The error of a process that could not start says which limit and what
// to do; other errors get nothing.
func TestHintNamesTheLimit(t *testing.T) {
	fork := func(e syscall.Errno) error { return &os.PathError{Op: "fork/exec", Path: "/bin/sh", Err: e} }
	for _, c := range []struct {
		err  error
		want string
	}{
		{fork(syscall.EMFILE), "open-files limit, ulimit -n"},
		{fmt.Errorf("pipe: %w", syscall.EMFILE), "lower --max-agents"},
		{fork(syscall.ENFILE), "/proc/sys/fs/file-max"},
		{fork(syscall.EAGAIN), "ulimit -u"},
		{fork(syscall.ENOENT), ""},
	} {
		got := Hint(c.err)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("Hint(%v) = %q, want it to say %q", c.err, got, c.want)
		}
	}
}

// A spawn refused for the pids cgroup names it, its limit, the pids in
// use and what to do.
func TestPidsHintNamesTheCgroup(t *testing.T) {
	p := Pids{Dir: "/sys/fs/cgroup/pids/x", Max: 40, Current: 35}
	if p.Left() != 5 || (Pids{Max: 3, Current: 5}).Left() != 0 {
		t.Errorf("Left: %d, %d; want 5 and 0", p.Left(), (Pids{Max: 3, Current: 5}).Left())
	}
	for _, c := range []struct {
		reserve int64
		want    []string
	}{
		{0, []string{"no process could be made", "the pids cgroup /sys/fs/cgroup/pids/x allows 40 processes and threads (pids.max), 35 in use;", "raise pids.max or lower --max-agents"}},
		{8, []string{"35 in use, 8 kept for the host's own threads;"}},
	} {
		h := PidsHint(p, c.reserve)
		for _, want := range c.want {
			if !strings.Contains(h, want) {
				t.Errorf("PidsHint(%d) = %q: it does not say %q", c.reserve, h, want)
			}
		}
	}
}

// The cgroup found is under a cgroup mount and its figures are read.
func TestPidsLimitOfThisProcess(t *testing.T) {
	p, ok := PidsLimit()
	if !ok {
		t.Skip("no pids.max over this process")
	}
	if !strings.HasPrefix(p.Dir, "/") || p.Max <= 0 || p.Current <= 0 {
		t.Errorf("PidsLimit = %+v", p)
	}
}

// On a machine with the v1 pids hierarchy at /sys/fs/cgroup/pids, the
// folders looked at end at its mount, nearest first.
func TestPidsDirsReachTheMount(t *testing.T) {
	const mount = "/sys/fs/cgroup/pids"
	if _, err := os.Stat(mount + "/cgroup.procs"); err != nil {
		t.Skip("no v1 pids hierarchy here")
	}
	dirs := pidsDirs()
	if !slices.Contains(dirs, mount) {
		t.Fatalf("pidsDirs() = %q: no %s", dirs, mount)
	}
	for _, d := range dirs[:slices.Index(dirs, mount)] {
		if !strings.HasPrefix(d, mount+"/") {
			t.Errorf("pidsDirs() = %q: %s is not under %s", dirs, d, mount)
		}
	}
	if containsWord("rw,pidsx", "pids") || !containsWord("rw,pids", "pids") {
		t.Error("containsWord matches parts of words")
	}
}
