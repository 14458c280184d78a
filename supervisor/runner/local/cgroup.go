package local

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/subdash/subdash/supervisor/internal/cgroup"
	"github.com/subdash/subdash/supervisor/runner"
)

// Cgroups (SPEC §4). A process that leaves its submission's process group
// and drops its environment (`env -i setsid -f …`, a daemon) is beyond
// signals to the group and the escapee scan, and would outlive its
// submission and pass the nesting check. Where this host may write in a
// cgroup v2 hierarchy (cgroup.Writable), the host makes a cgroup of its
// own there, <its cgroup>/subdash-<pid>-<run id>, and each submission
// starts inside one of its own under it, <submission id> (clone3's
// CLONE_INTO_CGROUP: before it runs a thing), which no process of it can
// leave without privileges. Ending the submission ends the cgroup
// (cgroup.kill), its removal follows, and the host's goes at its end
// (Close); a later host ends and removes those of a host that is gone
// (Sweep). Elsewhere the process-group rule stays.

// cgroupPrefix begins the name of a host's cgroup.
const cgroupPrefix = "subdash-"

// hostCgroups are a host's cgroups: its own and its submissions'.
type hostCgroups struct {
	parent string       // the host's own cgroup, which holds its cgroup and those of other hosts
	own    cgroup.Group // subdash-<pid>-<run id>
	path   string       // own, as /proc/<pid>/cgroup names it
	// clone: clone3 with CLONE_INTO_CGROUP works here (probed once);
	// without it a process is moved into its cgroup as it starts.
	probe sync.Once
	clone bool

	mu   sync.Mutex
	subs map[string]cgroup.Group // by submission id, until removed
}

// newHostCgroups makes the cgroup of host h, nil where there is no cgroup
// v2 hierarchy it may write in (or h is not a host: no pid).
func newHostCgroups(h runner.Host) *hostCgroups {
	if h.PID == 0 || h.RunID == "" {
		return nil
	}
	parent, _, ok := cgroup.Writable()
	v2, _, _ := cgroup.Of(0)
	if !ok {
		return nil
	}
	name := cgroupPrefix + strconv.Itoa(h.PID) + "-" + h.RunID
	own, err := cgroup.Make(parent, name)
	if err != nil {
		return nil
	}
	return &hostCgroups{parent: parent, own: own, path: path.Join(v2, name), subs: map[string]cgroup.Group{}}
}

// subCgroup is the cgroup a submission starts in.
type subCgroup struct {
	host *hostCgroups
	id   string
	g    cgroup.Group
	dir  *os.File // open for CgroupFD until the process started
}

// forSubmission makes the cgroup of submission id; nil (the process
// group alone) when h is nil or it cannot be made.
func (h *hostCgroups) forSubmission(id string) *subCgroup {
	if h == nil {
		return nil
	}
	h.probe.Do(h.probeClone)
	g, err := cgroup.Make(h.own.Dir, id)
	if err != nil {
		return nil
	}
	c := &subCgroup{host: h, id: id, g: g}
	if h.clone {
		if c.dir, err = g.Open(); err != nil {
			_ = g.Remove()
			return nil
		}
	}
	h.mu.Lock()
	h.subs[id] = g
	h.mu.Unlock()
	return c
}

// probeClone finds whether a process can be started inside a cgroup
// (clone3 and CLONE_INTO_CGROUP: Linux 5.7, and no seccomp refusing
// clone3), with one /bin/sh that exits at once.
func (h *hostCgroups) probeClone() {
	g, err := cgroup.Make(h.own.Dir, "probe")
	if err != nil {
		return
	}
	defer g.Remove() //nolint:errcheck // empty once the probe exited; Close removes what is left
	f, err := g.Open()
	if err != nil {
		return
	}
	defer f.Close() //nolint:errcheck // a folder opened read only
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(f.Fd())}
	h.clone = cmd.Run() == nil
}

// prepare has cmd start inside c (nil: nothing to do).
func (c *subCgroup) prepare(cmd *exec.Cmd) {
	if c != nil && c.dir != nil {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(c.dir.Fd())
	}
}

// started is told how the start of c's process went (pid, or err): it
// moves a process started without CgroupFD into c, and removes c when the
// process did not start. It returns c, nil when it was removed.
func (c *subCgroup) started(pid int, err error) *subCgroup {
	if c == nil {
		return nil
	}
	if c.dir != nil {
		_ = c.dir.Close() // a folder opened read only
		c.dir = nil
	} else if err == nil {
		err = c.g.Add(pid)
	}
	if err != nil {
		c.remove()
		return nil
	}
	return c
}

// populated reports whether a process of c is alive (c nil: none).
func (c *subCgroup) populated() bool { return c != nil && c.g.Populated() }

// terminate ends every process of c and of process group pgid (SPEC §4):
// SIGTERM (and SIGCONT) to each, then, after grace or once cut is closed,
// SIGKILL to all the cgroup holds (cgroup.kill) and to the group; it
// removes c once empty. It returns when nothing is left, or with an
// error naming what survived SIGKILL for killWait. Every member of the
// group is in c, so an empty c leaves only the group's leader to be
// reaped, which leader (closed then; nil: not known) says without a look
// at /proc (waitGroupGone).
func (c *subCgroup) terminate(pgid int, grace time.Duration, cut, leader <-chan struct{}) error {
	if c.g.Populated() || groupAlive(pgid) {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		_ = syscall.Kill(-pgid, syscall.SIGCONT)
		c.g.Signal(syscall.SIGTERM)
		c.g.Signal(syscall.SIGCONT)
		deadline := time.Now().Add(grace)
		empty := pollUntil(func() bool { return !c.g.Populated() }, grace, cut)
		if !empty || !waitGroupGone(pgid, max(time.Until(deadline), killWait), cut, leader) {
			return c.kill(pgid, leader)
		}
	}
	c.remove()
	return nil
}

// kill ends every process of c and of process group pgid with SIGKILL at
// once (cgroup.kill, or each pid of cgroup.procs), with no SIGTERM first,
// and removes c once empty. It returns when nothing is left, or with an
// error naming what survived SIGKILL for killWait; leader is as for
// terminate.
func (c *subCgroup) kill(pgid int, leader <-chan struct{}) error {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if err := c.g.Kill(killWait); err != nil {
		return err
	}
	if !waitGroupGone(pgid, killWait, nil, leader) {
		return fmt.Errorf("process group %d survived SIGKILL for %s", pgid, killWait)
	}
	c.remove()
	return nil
}

// remove removes c; a cgroup that cannot be removed yet stays for Close.
func (c *subCgroup) remove() {
	if c.g.Remove() == nil {
		c.host.mu.Lock()
		delete(c.host.subs, c.id)
		c.host.mu.Unlock()
	}
}

// containing returns the id of the submission whose cgroup holds process
// pid (or a cgroup under it: a host an agent started), "" for none.
func (h *hostCgroups) containing(pid int) string {
	if h == nil {
		return ""
	}
	v2, _, ok := cgroup.Of(pid)
	rest, under := strings.CutPrefix(v2, h.path+"/")
	if !ok || !under {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[id]; !ok {
		return ""
	}
	return id
}

// close ends what is left in the host's cgroups and removes them (the
// host ends: every submission ended).
func (h *hostCgroups) close() error {
	if h == nil {
		return nil
	}
	if err := h.own.Kill(killWait); err != nil {
		return err
	}
	return h.own.Remove()
}

// sweep ends and removes the cgroups that hosts that are gone left beside
// this one's (killed with SIGKILL: their Close never ran) with whatever
// their submissions left running in them, and returns a note saying so,
// "" when there were none.
func (h *hostCgroups) sweep() string {
	if h == nil {
		return ""
	}
	entries, err := os.ReadDir(h.parent)
	if err != nil {
		return ""
	}
	hosts, procs := 0, 0
	var failed []string
	for _, e := range entries {
		g := cgroup.Group{Dir: filepath.Join(h.parent, e.Name())}
		pid, ok := hostOf(e.Name())
		if !e.IsDir() || g.Dir == h.own.Dir || !ok || hostAlive(g, pid) {
			continue
		}
		hosts++
		procs += len(g.Procs())
		if err := g.Kill(killWait); err != nil {
			failed = append(failed, err.Error())
			continue
		}
		if err := g.Remove(); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if hosts == 0 {
		return ""
	}
	note := fmt.Sprintf("ended %d process(es) left in the cgroups of %d earlier host(s) that are gone, and removed the cgroups", procs, hosts)
	if len(failed) > 0 {
		note += "; " + strings.Join(failed, "; ")
	}
	return note
}

// hostOf returns the pid of the host whose cgroup is named name,
// subdash-<pid>-<run id>; ok is false for any other name.
func hostOf(name string) (pid int, ok bool) {
	rest, ok := strings.CutPrefix(name, cgroupPrefix)
	pidText, runID, cut := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidText)
	return pid, ok && cut && err == nil && pid > 0 && runID != ""
}

// hostAlive reports whether host pid, whose cgroup is g, runs: a live
// process that started before g was made (a later one has its pid by
// reuse).
func hostAlive(g cgroup.Group, pid int) bool {
	if !ProcessAlive(pid) {
		return false
	}
	fi, err := os.Stat(g.Dir)
	began, ok := startedAt(pid)
	return err != nil || !ok || !began.After(fi.ModTime().Add(time.Second))
}

// startedAt returns when process pid started (StartTime and the boot
// time of /proc/stat).
func startedAt(pid int) (time.Time, bool) {
	ticks, ok := StartTime(pid)
	boot, bok := bootTime()
	if !ok || !bok {
		return time.Time{}, false
	}
	return boot.Add(time.Duration(ticks) * (time.Second / userHZ)), true
}

// bootTime reads when the machine booted (btime of /proc/stat).
var bootTime = sync.OnceValues(func() (time.Time, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close() //nolint:errcheck // read only
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Unix(n, 0), err == nil
		}
	}
	return time.Time{}, false
})
