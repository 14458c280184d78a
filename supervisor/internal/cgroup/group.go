package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Group is one cgroup of the v2 hierarchy: its folder. Its methods read
// and write the cgroup's files; none is cached.
type Group struct{ Dir string }

// Make makes the cgroup name under parent (mode 0755, as cgroupfs makes
// them) and returns it. An existing one is an error (fs.ErrExist).
func Make(parent, name string) (Group, error) {
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return Group{}, err
	}
	return Group{Dir: dir}, nil
}

// Open opens g's folder for SysProcAttr.CgroupFD (clone3's
// CLONE_INTO_CGROUP: the child starts in g, before it runs a thing). The
// caller closes the file once the process started.
func (g Group) Open() (*os.File, error) {
	return os.OpenFile(g.Dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// Add moves process pid into g (cgroup.procs): for a process started
// without CgroupFD.
func (g Group) Add(pid int) error {
	return os.WriteFile(filepath.Join(g.Dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// Procs returns the processes in g and in the cgroups under it that have
// not exited (zombies are left out: they hold nothing).
func (g Group) Procs() []int {
	var out []int
	_ = filepath.WalkDir(g.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for f := range bytes.FieldsSeq(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil && alive(pid) {
				out = append(out, pid)
			}
		}
		return nil
	})
	return out
}

// alive reports whether pid has not exited: not gone, not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// Populated reports whether a process that has not exited is in g or
// under it (cgroup.events: "populated 1"; a zombie does not count).
func (g Group) Populated() bool {
	b, err := os.ReadFile(filepath.Join(g.Dir, "cgroup.events"))
	if err != nil {
		return len(g.Procs()) > 0
	}
	return bytes.Contains(b, []byte("populated 1"))
}

// Signal sends sig to every process in g and under it, and returns how
// many it sent it to.
func (g Group) Signal(sig syscall.Signal) int {
	pids := g.Procs()
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return len(pids)
}

// HasKill is whether the kernel has cgroup.kill (Linux 5.14), read from
// the hierarchy at dir; a variable so that a test can take the fallback.
var HasKill = func(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "cgroup.kill"))
	return err == nil
}

// Kill sends SIGKILL to everything in g and under it, processes started
// meanwhile included: cgroup.kill where the kernel has it, else SIGKILL to
// every process of cgroup.procs, again until none is left or within
// (processes in uninterruptible sleep) has passed. It returns when g
// holds no process, or an error naming g and how many survived.
func (g Group) Kill(within time.Duration) error {
	if HasKill(g.Dir) {
		if err := os.WriteFile(filepath.Join(g.Dir, "cgroup.kill"), []byte("1"), 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot kill cgroup %s: %v", g.Dir, err)
		}
	}
	deadline := time.Now().Add(within)
	step := time.Millisecond
	for {
		if g.Signal(syscall.SIGKILL) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d process(es) of cgroup %s survived SIGKILL for %s", len(g.Procs()), g.Dir, within)
		}
		time.Sleep(step)
		step = min(2*step, 10*time.Millisecond)
	}
}

// Remove removes g and the cgroups under it, deepest first; they must
// hold no process (Kill). A cgroup that is gone already is not an error.
func (g Group) Remove() error {
	var dirs []string
	_ = filepath.WalkDir(g.Dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	var first error
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := unix.Rmdir(dirs[i]); err != nil && !errors.Is(err, unix.ENOENT) && first == nil {
			first = fmt.Errorf("cannot remove cgroup %s: %v", dirs[i], err)
		}
	}
	return first
}
