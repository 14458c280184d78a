// Package cgroup reads where a process is in the kernel's cgroup
// hierarchies and works the cgroups of the v2 one (SPEC §4): each
// submission of the local runner runs in a cgroup of its own, so that
// everything it starts, whatever session, process group or environment
// it takes, ends with it.
//
// What lives here:
//
//   - Mounts and Of: the hierarchies mounted (/proc/self/mountinfo) and
//     the cgroups a process is in (/proc/<pid>/cgroup), which the pids
//     limit (internal/fdlimit) and the runner read;
//   - Writable: the folder of this process's own cgroup in a v2 hierarchy
//     it may write in, found from those two, never from a fixed path (a
//     machine may mount it at /sys/fs/cgroup, or /sys/fs/cgroup/unified
//     beside v1 controllers);
//   - Group: one cgroup v2 folder: make it, clone a process into it
//     (Open for SysProcAttr.CgroupFD), signal and kill all it holds
//     (cgroup.kill, or every pid of cgroup.procs on kernels before 5.14),
//     remove it.
//
// Who imports it: internal/fdlimit and the local runner.
package cgroup

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Mount is where a cgroup hierarchy is mounted: Point, the cgroup its root
// shows (Root, "/" but in a container or a bind mount), whether it is v2,
// and its controllers (v1: the mount's options, such as "pids").
type Mount struct {
	Point, Root string
	V2          bool
	Options     string
}

// Mounts returns the cgroup hierarchies this process sees, in
// /proc/self/mountinfo's order ("id parent dev root point opts … - type
// source superopts"); nil when it cannot be read.
func Mounts() []Mount {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close() //nolint:errcheck // read only
	var out []Mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 {
			continue
		}
		m := Mount{Point: unescape(fields[4]), Root: unescape(fields[3]), Options: tail[2]}
		switch tail[0] {
		case "cgroup2":
			m.V2 = true
		case "cgroup":
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and
// backslash.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Of returns the cgroups process pid (0: this process) is in, from
// /proc/<pid>/cgroup: its v2 cgroup ("" when it has none) and its v1
// cgroup by controller ("pids", "memory", a "name=…"); ok is false when
// the file cannot be read (the process is gone).
func Of(pid int) (v2 string, v1 map[string]string, ok bool) {
	p := "/proc/self/cgroup"
	if pid > 0 {
		p = "/proc/" + strconv.Itoa(pid) + "/cgroup"
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", nil, false
	}
	v1 = map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3) // id:controllers:path
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for c := range strings.SplitSeq(parts[1], ",") {
			v1[c] = parts[2]
		}
	}
	return v2, v1, true
}

// Dir returns the folder of cgroup path (as /proc/<pid>/cgroup names it)
// under mount m; ok is false when the mount does not show it.
func (m Mount) Dir(path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, m.Root)
	if !ok || rel != "" && m.Root != "/" && rel[0] != '/' {
		return "", false
	}
	return filepath.Join(m.Point, rel), true
}

// Writable returns the folder of this process's own cgroup in the cgroup
// v2 hierarchy and its mount point, when this process may make cgroups
// there (write permission: root, or a cgroup delegated to the user);
// ok is false when there is no v2 hierarchy, the process's cgroup is not
// in it (a cgroup namespace shows another root), or it may not write.
func Writable() (dir, mount string, ok bool) {
	v2, _, ok := Of(0)
	if !ok || v2 == "" {
		return "", "", false
	}
	for _, m := range Mounts() {
		if !m.V2 {
			continue
		}
		d, ok := m.Dir(v2)
		if !ok {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "cgroup.procs")); err != nil {
			continue
		}
		if unix.Access(d, unix.W_OK) != nil {
			continue
		}
		return d, m.Point, true
	}
	return "", "", false
}
