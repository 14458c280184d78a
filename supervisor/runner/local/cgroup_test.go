package local

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/internal/cgroup"
	"github.com/subdash/subdash/supervisor/runner"
)

// needCgroups skips a test that needs a cgroup v2 hierarchy this process
// may write in (root on this machine: cgroup2 at /sys/fs/cgroup/unified),
// saying why; under SUBDASH_REQUIRE_TOOLS=1 (CI, as root) it fails.
func needCgroups(t *testing.T) {
	t.Helper()
	if _, _, ok := cgroup.Writable(); ok {
		return
	}
	why := fmt.Sprintf("no cgroup v2 hierarchy writable by uid %d in /proc/self/mountinfo", os.Geteuid())
	if os.Getenv("SUBDASH_REQUIRE_TOOLS") == "1" {
		t.Fatal(why + " (SUBDASH_REQUIRE_TOOLS=1)")
	}
	t.Skip(why)
}

// cgroupRunner is the local runner of a host with cgroups, closed (its
// cgroups removed) when the test ends.
func cgroupRunner(t *testing.T) localRunner {
	t.Helper()
	needCgroups(t)
	r, err := Factory(runner.Settings{Environ: os.Environ(), Grace: time.Second,
		Host: runner.Host{RunID: "test-" + strconv.FormatInt(time.Now().UnixNano(), 36), PID: os.Getpid()}})
	if err != nil {
		t.Fatal(err)
	}
	lr := r.(localRunner)
	if lr.cg == nil {
		t.Fatal("a writable cgroup v2 hierarchy, and no cgroup for the host")
	}
	t.Cleanup(func() {
		if err := lr.Close(t.Context()); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(lr.cg.own.Dir); err == nil {
			t.Errorf("the host's cgroup %s is left after Close", lr.cg.own.Dir)
		}
	})
	return lr
}

// daemonPID starts, in r, a submission whose child leaves its process
// group and its environment (a daemon), ignores SIGTERM and writes its
// pid to a file; it returns the process and that pid.
func daemonPID(t *testing.T, r localRunner, id string) (runner.Process, int) {
	t.Helper()
	dir := t.TempDir()
	p, err := r.Start(runner.StartRequest{
		Command:      `env -i PATH=/usr/bin:/bin setsid -f sh -c 'trap "" TERM; echo $$ > daemon.pid; exec sleep 600'; exec sleep 600`,
		Dir:          dir,
		Stdin:        func(w io.WriteCloser) { _ = w.Close() },
		SubmissionID: id,
		Output:       func(runner.Stream, []byte) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if !pollUntil(func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "daemon.pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}, 10*time.Second, nil) {
		t.Fatal("the daemon did not write its pid")
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return p, pid
}

// TestCgroupEndsWhatLeftTheGroup: a submission's child that left its
// process group and dropped SUBDASH_SUBMISSION_ID (env -i setsid -f) is
// in the submission's cgroup, which Containing names; Terminate ends it
// with the rest and removes the cgroup. With cgroup.kill and without it
// (kernels before 5.14: every pid of cgroup.procs).
func TestCgroupEndsWhatLeftTheGroup(t *testing.T) {
	for _, c := range []struct {
		withKill bool
		end      string // Terminate, or Kill: SIGKILL at once (a CLI deaf to its interrupt)
	}{{true, "Terminate"}, {false, "Terminate"}, {true, "Kill"}, {false, "Kill"}} {
		withKill := c.withKill
		t.Run(fmt.Sprintf("cgroup.kill=%v/%s", withKill, c.end), func(t *testing.T) {
			r := cgroupRunner(t)
			if !withKill {
				had := cgroup.HasKill
				cgroup.HasKill = func(string) bool { return false }
				t.Cleanup(func() { cgroup.HasKill = had })
			}
			id := "sub-" + strconv.FormatBool(withKill) + "-" + c.end
			p, daemon := daemonPID(t, r, id)
			if got := r.Containing(daemon); got != id {
				t.Errorf("Containing(the daemon) = %q; want %q", got, id)
			}
			if pi, _ := procStat(daemon); pi.PGID == p.Place().PGID || SubmissionOf(daemon) != "" {
				t.Fatalf("the daemon is in the submission's process group or environment: %+v", pi)
			}
			dir := filepath.Join(r.cg.own.Dir, id)
			end := func() error { return p.Terminate(100*time.Millisecond, nil) }
			if c.end == "Kill" {
				end = p.Kill
			}
			if err := end(); err != nil {
				t.Fatal(err)
			}
			if ProcessAlive(daemon) {
				t.Errorf("the daemon %d outlived its submission", daemon)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("the submission's cgroup %s is left", dir)
			}
			if got := r.Containing(os.Getpid()); got != "" {
				t.Errorf("Containing(the host) = %q", got)
			}
			p.Drain()
		})
	}
}

// TestCgroupLingersAndClose: a submission whose main process exited
// lingers while its daemon lives; the host's Close ends what is left and
// removes every cgroup.
func TestCgroupLingersAndClose(t *testing.T) {
	r := cgroupRunner(t)
	dir := t.TempDir()
	p, err := r.Start(runner.StartRequest{
		Command:      `env -i PATH=/usr/bin:/bin setsid -f sh -c 'echo $$ > daemon.pid; exec sleep 600'`,
		Dir:          dir,
		Stdin:        func(w io.WriteCloser) { _ = w.Close() },
		SubmissionID: "lingering",
		Output:       func(runner.Stream, []byte) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	var daemon int
	pollUntil(func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "daemon.pid"))
		daemon, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return daemon > 0
	}, 10*time.Second, nil)
	if !p.Lingers() {
		t.Error("the submission does not linger while its daemon lives")
	}
	if err := r.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if daemon == 0 || ProcessAlive(daemon) {
		t.Errorf("the daemon %d outlived the host's Close", daemon)
	}
	p.Drain()
}

// TestSweepEndsTheCgroupsOfHostsThatAreGone: a cgroup a host killed with
// SIGKILL left (subdash-<its pid>-<run>) is ended and removed by the next
// host's Sweep, with the process in it; a live host's is left alone.
func TestSweepEndsTheCgroupsOfHostsThatAreGone(t *testing.T) {
	r := cgroupRunner(t)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	left, err := cgroup.Make(r.cg.parent, fmt.Sprintf("%s%d-20261201T000000Z-dead", cgroupPrefix, gone.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cgroup.Make(left.Dir, "a-submission")
	if err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	if err := sub.Add(sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}
	live := cgroupRunner(t) // another host of this process: alive
	note := r.Sweep("")
	if note != "ended 1 process(es) left in the cgroups of 1 earlier host(s) that are gone, and removed the cgroups" {
		t.Errorf("the sweep's note: %q", note)
	}
	_ = sleeper.Wait() // reaped here: killed by the sweep
	if _, err := os.Stat(left.Dir); err == nil {
		t.Errorf("the cgroup of the host that is gone, %s, is left", left.Dir)
	}
	if _, err := os.Stat(live.cg.own.Dir); err != nil {
		t.Errorf("the sweep removed a live host's cgroup: %v", err)
	}
}
