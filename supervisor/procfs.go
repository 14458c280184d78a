package supervisor

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// What the supervisor reads of other processes, from /proc (proc(5)).

// submissionEnv is the variable every submission's processes inherit
// (SPEC §2), which identifies them wherever they moved.
const submissionEnv = "SUBDASH_SUBMISSION_ID"

// procPIDs lists the pids in /proc.
func procPIDs() ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(names))
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// groupMembers lists the pids of live (non-zombie) processes whose process
// group is pgid, read from /proc.
func groupMembers(pgid int) ([]int, error) {
	pids, err := procPIDs()
	if err != nil {
		return nil, err
	}
	var live []int
	for _, pid := range pids {
		if pi, ok := procStat(pid); ok && pi.pgrp == pgid && pi.live() {
			live = append(live, pid)
		}
	}
	return live, nil
}

// procInfo is what procStat reads of a process.
type procInfo struct {
	state               byte // R, S, D, Z, T, ...
	ppid, pgrp, session int
}

// live reports whether the process has not exited (not a zombie).
func (pi procInfo) live() bool { return pi.state != 'Z' && pi.state != 'X' }

// procStat reads the state, parent, process group and session of pid from
// /proc/<pid>/stat (proc(5): "pid (comm) state ppid pgrp session ..."; comm
// may hold spaces and parentheses, so fields are counted from the last ')').
func procStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	var n [3]int
	for k := range n {
		if n[k], err = strconv.Atoi(string(f[k+1])); err != nil {
			return procInfo{}, false
		}
	}
	return procInfo{state: f[0][0], ppid: n[0], pgrp: n[1], session: n[2]}, true
}

// Descendants returns the live processes below pid: its children, then
// theirs, from the parent pids in /proc (proc(5)). The dashboard uses it to
// end a pager that shares its process group.
func Descendants(pid int) []int {
	pids, _ := procPIDs()
	children := map[int][]int{}
	for _, p := range pids {
		if pi, ok := procStat(p); ok && pi.live() {
			children[pi.ppid] = append(children[pi.ppid], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// processAlive reports whether pid exists and has not exited.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	pi, ok := procStat(pid)
	return ok && pi.live()
}

// envValue returns the value of variable key in the environment pid started
// with; ok is false when it is not set or cannot be read (another user's
// process).
func envValue(pid int, key string) (value string, ok bool) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	prefix := []byte(key + "=")
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.HasPrefix(kv, prefix) {
			return string(kv[len(prefix):]), true
		}
	}
	return "", false
}

// ofSubmission reports whether pid is a live process of submission id: one
// that inherited its SUBDASH_SUBMISSION_ID.
func ofSubmission(pid int, id string) bool {
	v, ok := envValue(pid, submissionEnv)
	return ok && v == id && processAlive(pid)
}
