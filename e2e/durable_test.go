package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// Durability (SPEC §4, §5, §10): what a user wrote or ran is never lost or
// left behind silently, when the state directory is removed, the disk
// fills, or an agent's child leaves its process group.

// needRoot skips a test that needs root for what it does (mount a tmpfs,
// make cgroups), saying why; under SUBDASH_REQUIRE_TOOLS=1 (CI, which runs
// as root) it fails instead, so the test cannot hide there.
func needRoot(t *testing.T, what string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("SUBDASH_REQUIRE_TOOLS") == "1" {
		t.Fatalf("needs root to %s (SUBDASH_REQUIRE_TOOLS=1), runs as uid %d", what, os.Geteuid())
	}
	t.Skipf("needs root to %s; runs as uid %d", what, os.Geteuid())
}

// mountTmpfs mounts a tmpfs of size (mount's -o size=, "4m") on dir,
// unmounted when the test ends (after the hosts started later stopped).
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	needRoot(t, "mount a tmpfs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs on %s as root: %v %s", dir, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
}

// hostWarned polls ctl info until one of its warnings holds want, and
// returns it.
func hostWarned(t *testing.T, w workspace, want string) string {
	t.Helper()
	return testkit.Poll(t, dashWait, "ctl info to warn "+want, func() (string, bool) {
		var info struct{ Warnings []string }
		ctlOK(t, w, &info, "info")
		for _, s := range info.Warnings {
			if strings.Contains(s, want) {
				return s, true
			}
		}
		return "", false
	})
}

// restoredPaths returns the agents a host lists, by path, with their
// last messages.
func restoredPaths(t *testing.T, w workspace) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range listAgents(t, w) {
		out[a.AgentPath] = a.LastMessage
	}
	return out
}

// TestStateDirRemovedUnderServe: `rm -rf` of the state directory under a
// serving host is said within seconds (ctl info's warnings, serve's
// stderr), the host lock is taken again (a second serve of the folder on
// another socket is refused, naming this one), and after a kill -9 and a
// restart every agent is restored, the one spawned after the removal with
// its task name and message.
func TestStateDirRemovedUnderServe(t *testing.T) {
	w := newWorkspace(t)
	p := startServe(t, w)
	var before proto.SpawnResult
	ctlOK(t, w, &before, "spawn", "before the removal")
	waitDone(t, w, before.AgentID)
	if err := os.RemoveAll(w.state); err != nil {
		t.Fatal(err)
	}
	warned := hostWarned(t, w, "was removed under this host")
	if !strings.Contains(warned, "took the host lock again") {
		t.Errorf("the warning does not say the host lock was taken again: %q", warned)
	}
	other := w
	other.socket = filepath.Join(w.base, "other", "s.sock")
	second := start(t, nil, append([]string{"serve", "--command", e2eCommand}, other.flags()...)...)
	if code, stderr := second.wait(t); code == 0 || !strings.Contains(stderr, fmt.Sprintf("another subdash (pid %d) hosts %s", p.cmd.Process.Pid, w.dir)) {
		t.Errorf("a second serve of the folder after the removal: exit %d, stderr %q; want it refused, naming the host", code, stderr)
	}
	var after proto.SpawnResult
	ctlOK(t, w, &after, "spawn", "the message after", "--task-name", "after")
	waitDone(t, w, after.AgentID)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, stderr := p.wait(t); !strings.Contains(stderr, "subdash serve: the state directory "+w.state+" was removed under this host") {
		t.Errorf("serve's stderr does not say the state directory was removed:\n%s", stderr)
	}
	startServe(t, w)
	got := restoredPaths(t, w)
	want := map[string]string{"/root/" + before.AgentID[:8]: "before the removal", "/root/after": "the message after"}
	if len(got) != len(want) || got["/root/after"] != want["/root/after"] || got["/root/"+before.AgentID[:8]] != "before the removal" {
		t.Errorf("restored %v; want %v", got, want)
	}
}

// fullDiskCommand floods stdout for a message beginning "flood", else answers
// "got: <message>".
const fullDiskCommand = `read m; case "$m" in flood*) exec yes "$m";; esac; echo "got: $m"`

// fillDisk writes zeros to path until its filesystem is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // its writes fail on purpose: the disk is full
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// TestFullDiskJournalKeepsTheNextRecord: the state
// directory on a 4 MiB tmpfs, an agent flooding, the disk filled, spawns
// that fail, the space freed, `ctl spawn … --task-name after`, then kill
// -9 of the host and a restart: /root/after comes back with its name and
// message, and the journal's failure had ended before the kill.
func TestFullDiskJournalKeepsTheNextRecord(t *testing.T) {
	w := newWorkspace(t)
	mountTmpfs(t, w.state, "4m")
	p := serveWith(t, w, nil, "--command", fullDiskCommand, "--grace", "200ms")
	var flood proto.SpawnResult
	ctlOK(t, w, &flood, "spawn", "flooding-line-of-output")
	waitAgent(t, w, flood.AgentID, "paused by the free-space floor", func(a proto.Summary) bool { return a.LogDropped > 0 })
	filler := filepath.Join(w.state, "filler")
	fillDisk(t, filler)
	for i := range 3 {
		runCtl(t, nil, "", "spawn", fmt.Sprintf("while the disk is full %d", i), "--socket", w.socket) // refused or errored: said either way
	}
	var full proto.Info
	ctlOK(t, w, &full, "info")
	if !strings.Contains(full.Failure, "journal could not be written (no space left on device)") {
		t.Errorf("ctl info's failure on a full disk: %q", full.Failure)
	}
	ctlOK(t, w, nil, "interrupt", flood.AgentID)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	var after proto.SpawnResult
	ctlOK(t, w, &after, "spawn", "the message after", "--task-name", "after")
	waitDone(t, w, after.AgentID)
	hostWarned(t, w, "journal written again")
	testkit.Eventually(t, dashWait, "ctl info's failure to clear", func() bool {
		var info proto.Info
		ctlOK(t, w, &info, "info")
		return info.Failure == ""
	})
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	serveWith(t, w, nil, "--command", fullDiskCommand, "--grace", "200ms")
	got := restoredPaths(t, w)
	if got["/root/after"] != "the message after" {
		t.Errorf("restored %v; want /root/after with its message", got)
	}
}

// gitObjects counts the objects of the repository at dir (git
// count-objects: loose, then packed).
func gitObjects(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "count-objects", "-v").Output()
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "count:") || strings.HasPrefix(line, "in-pack:") {
			n = append(n, line)
		}
	}
	return strings.Join(n, " ")
}

// TestSpawnInALargeWorkTree: 70 untracked files of 9.9 MiB (694 MB; sparse
// here, so the test costs no disk) made a spawn take over 10 s (ctl's
// deadline: the spawn failed while the agent ran) and filled .git with
// their blobs. The spawn answers at once, the snapshot leaves the
// untracked files out (too large, said in the changes note), nothing is
// added to the repository, and the diff of a tracked file still shows.
func TestSpawnInALargeWorkTree(t *testing.T) {
	requireTool(t, "git")
	w := newWorkspace(t)
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		if args[0] == "add" {
			if err := os.WriteFile(filepath.Join(w.dir, "README"), []byte("one\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := exec.Command("git", append([]string{"-C", w.dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	for i := range 70 {
		p := filepath.Join(w.dir, fmt.Sprintf("data%02d.bin", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("%d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 99<<20/10); err != nil {
			t.Fatal(err)
		}
	}
	before := gitObjects(t, w.dir)
	serveWith(t, w, nil, "--command", `read m; echo two >> README; echo "got: $m"`, "--grace", "200ms")
	asked := time.Now()
	var res proto.SpawnResult
	ctlOK(t, w, &res, "spawn", "edit the readme")
	if took := time.Since(asked); took > 5*time.Second {
		t.Errorf("ctl spawn answered in %s", took)
	}
	waitDone(t, w, res.AgentID)
	a := listAgents(t, w)[res.AgentID]
	if c := a.Changes; c == nil || c.Files != 1 || c.Added != 1 || !strings.Contains(c.Note, "untracked files not tracked: too large (692 MiB in 70 files, over the 64 MiB bound)") {
		t.Errorf("changes %+v", a.Changes)
	}
	if diff := ctlOK(t, w, nil, "diff", res.AgentID); !strings.Contains(diff, " one\n+two\n") {
		t.Errorf("ctl diff:\n%s", diff)
	}
	if after := gitObjects(t, w.dir); after != before {
		t.Errorf("the repository's objects went from %q to %q", before, after)
	}
}

// testCgroup makes a cgroup v2 of this test under this process's own
// cgroup (the hierarchy found from /proc/self/mountinfo and
// /proc/self/cgroup) and returns its folder, opened for
// SysProcAttr.CgroupFD; it is emptied and removed when the test ends. The
// hosts of a test start in it, so that the cgroups they make are beside
// no other host's (another test binary's host would sweep a dead one's).
// Without root or a cgroup v2 hierarchy the test is skipped, saying why;
// under SUBDASH_REQUIRE_TOOLS=1 it fails.
func testCgroup(t *testing.T) *os.File {
	t.Helper()
	needRoot(t, "make cgroups")
	own, err := ownCgroupDir()
	if err != nil {
		if os.Getenv("SUBDASH_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%v (SUBDASH_REQUIRE_TOOLS=1)", err)
		}
		t.Skip(err)
	}
	dir := filepath.Join(own, fmt.Sprintf("e2e-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-")))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = f.Close() // a folder opened read only
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		testkit.Eventually(t, dashWait, "the test's cgroup to be removed", func() bool {
			var sub []string
			_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					sub = append(sub, p)
				}
				return nil
			})
			for i := len(sub) - 1; i >= 0; i-- {
				_ = syscall.Rmdir(sub[i])
			}
			_, err := os.Stat(dir)
			return err != nil
		})
	})
	return f
}

// ownCgroupDir returns the folder of this process's cgroup in the cgroup
// v2 hierarchy.
func ownCgroupDir() (string, error) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path, found := "", false
	for _, line := range strings.Split(strings.TrimSpace(string(cg)), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path, found = p, true
		}
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(mi), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f := strings.Fields(pre)
		if !ok || !strings.HasPrefix(post, "cgroup2 ") || len(f) < 5 || !found {
			continue
		}
		if rel, ok := strings.CutPrefix(path, f[3]); ok {
			return filepath.Join(f[4], rel), nil
		}
	}
	return "", fmt.Errorf("no cgroup v2 hierarchy holding this process in /proc/self/mountinfo")
}

// serveIn starts `subdash serve` for w in the cgroup dir (testCgroup) with
// args, and waits until its socket answers.
func serveIn(t *testing.T, w workspace, dir *os.File, args ...string) *process {
	t.Helper()
	cmd := exec.Command(binPath, append(append([]string{"serve"}, args...), w.flags()...)...)
	cmd.Env = testEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(dir.Fd())}
	p := startCmd(t, cmd)
	waitListening(t, p, w.socket)
	return p
}

// daemonCommand is the agent command of the cgroup tests: for "daemon…" a
// child leaves the process group, the session and the environment
// (`env -i setsid -f`), writes its pid to <agent id>.daemon and sleeps;
// for "nest…" such a child runs `subdash ctl spawn inner` against socket
// and writes what it printed to <agent id>.nested; the agent then sleeps.
func daemonCommand(socket string) string {
	return `read m; f="$PWD/$SUBDASH_AGENT_ID"; case "$m" in ` +
		`daemon*) env -i PATH=/usr/bin:/bin setsid -f sh -c "echo \$\$ > $f.daemon.tmp; mv $f.daemon.tmp $f.daemon; exec sleep 600";; ` +
		`nest*) env -i PATH=/usr/bin:/bin setsid -f sh -c "` + binPath + ` ctl --socket ` + socket + ` spawn inner > $f.nested.tmp 2>&1; mv $f.nested.tmp $f.nested";; ` +
		`esac; exec sleep 600`
}

// daemonOf waits for agent id's daemon to write its pid and returns it;
// the process is killed at the end of the test if still alive.
func daemonOf(t *testing.T, w workspace, id string) int {
	t.Helper()
	pid := testkit.Poll(t, dashWait, "agent "+id[:8]+"'s daemon to write its pid", func() (int, bool) {
		b, err := os.ReadFile(filepath.Join(w.dir, id+".daemon"))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return pid, err == nil && pid > 0
	})
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// processGone waits until pid is gone or a zombie.
func processGone(t *testing.T, pid int, what string) {
	t.Helper()
	testkit.Eventually(t, dashWait, what, func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		i := strings.LastIndexByte(string(b), ')')
		return i > 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
	})
}

// TestDaemonizedChildEndsWithItsSubmission (root, cgroup v2): an agent's
// child that leaves its process group, session and environment (`env -i
// PATH=/usr/bin:/bin setsid -f`) ends with the agent's close and with the
// host's exit, and running `subdash ctl spawn` that way from an agent of
// a host without --allow-nested is refused, the agent named. A host killed
// with SIGKILL leaves such a child; the next host ends it and removes the
// cgroups, saying so.
func TestDaemonizedChildEndsWithItsSubmission(t *testing.T) {
	cg := testCgroup(t)
	w := newWorkspace(t)
	p := serveIn(t, w, cg, "--command", daemonCommand(w.socket), "--grace", "200ms")
	var closed proto.SpawnResult
	ctlOK(t, w, &closed, "spawn", "daemon one")
	daemon := daemonOf(t, w, closed.AgentID)
	ctlOK(t, w, nil, "close", closed.AgentID)
	processGone(t, daemon, "the daemon to end with the agent's close")

	var nest proto.SpawnResult
	ctlOK(t, w, &nest, "spawn", "nest")
	said := testkit.Poll(t, dashWait, "the agent's ctl spawn to answer", func() (string, bool) {
		b, err := os.ReadFile(filepath.Join(w.dir, nest.AgentID+".nested"))
		return string(b), err == nil
	})
	if !strings.Contains(said, "agent "+nest.AgentID+" may not start or instruct agents") {
		t.Errorf("ctl spawn from the agent's escaped child said %q; want it refused", said)
	}
	if n := len(listAgents(t, w)); n != 2 {
		t.Errorf("%d agents after the refused nested spawn; want 2", n)
	}

	var atExit proto.SpawnResult
	ctlOK(t, w, &atExit, "spawn", "daemon at exit")
	daemon = daemonOf(t, w, atExit.AgentID)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	processGone(t, daemon, "the daemon to end with the host")

	killed := serveIn(t, w, cg, "--command", daemonCommand(w.socket), "--grace", "200ms")
	var left proto.SpawnResult
	ctlOK(t, w, &left, "spawn", "daemon left behind")
	daemon = daemonOf(t, w, left.AgentID)
	if err := killed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed.wait(t)
	if !processAlive(daemon) {
		t.Fatal("the daemon ended with the host killed by SIGKILL: nothing is left to sweep")
	}
	next := serveIn(t, w, cg, "--command", daemonCommand(w.socket), "--grace", "200ms")
	processGone(t, daemon, "the next host to end the daemon left behind")
	_ = next.cmd.Process.Signal(syscall.SIGTERM)
	if _, stderr := next.wait(t); !strings.Contains(stderr, "in the cgroups of 1 earlier host(s) that are gone, and removed the cgroups") {
		t.Errorf("the next host does not say it swept the cgroups:\n%s", stderr)
	}
}

// processAlive reports whether pid runs and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}
