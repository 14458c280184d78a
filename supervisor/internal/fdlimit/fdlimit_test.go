package fdlimit

import (
	"fmt"
	"os"
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
