package local

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// What the local runner reads of other processes, from /proc (proc(5)).

// submissionEnv is the variable every submission's processes inherit
// (SPEC §2), which identifies them wherever they moved.
const submissionEnv = "SUBDASH_SUBMISSION_ID"

// procPIDs lists the pids in /proc.
func procPIDs() ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close() //nolint:errcheck // a directory, read only: its Close cannot lose data
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

// GroupMembers lists the pids of live (non-zombie) processes whose process
// group is pgid, read from /proc in a scan that began after the call and
// that callers at the same moment share (procScan); the error is /proc's,
// when it cannot be listed.
func GroupMembers(pgid int) ([]int, error) {
	t := procScan.get()
	if t.err != nil {
		return nil, t.err
	}
	var live []int
	for _, pi := range t.procs {
		if pi.PGID == pgid && pi.Live() {
			live = append(live, pi.PID)
		}
	}
	return live, nil
}

// Proc is what /proc/<pid>/stat says of a process.
type Proc struct {
	PID     int  // the process id
	State   byte // R, S, D, Z, T, ... (proc(5))
	PPID    int  // its parent
	PGID    int  // its process group
	Session int  // its session
	// CPU is its user and system time with that of the children it
	// waited for (utime+stime+cutime+cstime), in clock ticks (userHZ a
	// second); 0 when the line is too short to say.
	CPU uint64
}

// userHZ is the unit of the times of /proc/<pid>/stat: USER_HZ, 100 on
// every Linux (proc(5), sysconf(_SC_CLK_TCK)).
const userHZ = 100

// Live reports whether the process has not exited (not a zombie).
func (pi Proc) Live() bool { return pi.State != 'Z' && pi.State != 'X' }

// procStat reads the state, parent, process group and session of pid from
// /proc/<pid>/stat (proc(5): "pid (comm) state ppid pgrp session ..."; comm
// may hold spaces and parentheses, so fields are counted from the last ')').
func procStat(pid int) (Proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return Proc{}, false
	}
	var n [3]int
	for k := range n {
		if n[k], err = strconv.Atoi(string(f[k+1])); err != nil {
			return Proc{}, false
		}
	}
	pi := Proc{PID: pid, State: f[0][0], PPID: n[0], PGID: n[1], Session: n[2]}
	// fields 14-17 of proc(5), f[11:15] here: utime stime cutime cstime
	if len(f) >= 15 {
		for _, t := range f[11:15] {
			v, err := strconv.ParseUint(string(t), 10, 64)
			if err != nil {
				break
			}
			pi.CPU += v
		}
	}
	return pi, true
}

// GroupCPU implements runner.CPUMeter from one shared reading of every
// process's stat (procScan): the CPU time of each group of pgids, its
// zombies included (their time is not yet their parent's).
func (localRunner) GroupCPU(pgids []int) (map[int]time.Duration, error) {
	t := procScan.get()
	if t.err != nil {
		return nil, t.err
	}
	want := make(map[int]bool, len(pgids))
	for _, g := range pgids {
		want[g] = true
	}
	ticks := map[int]uint64{}
	for _, pi := range t.procs {
		if want[pi.PGID] {
			ticks[pi.PGID] += pi.CPU
		}
	}
	cpu := make(map[int]time.Duration, len(ticks))
	for g, n := range ticks {
		cpu[g] = time.Duration(n) * (time.Second / userHZ)
	}
	return cpu, nil
}

// Descendants returns the live processes below pid: its children, then
// theirs, from the parent pids in /proc (proc(5)). The dashboard uses it to
// end a pager that shares its process group.
func Descendants(pid int) []int {
	pids, _ := procPIDs()
	children := map[int][]int{}
	for _, p := range pids {
		if pi, ok := procStat(p); ok && pi.Live() {
			children[pi.PPID] = append(children[pi.PPID], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// ProcessAlive reports whether pid exists and has not exited (a zombie
// has).
func ProcessAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	pi, ok := procStat(pid)
	return ok && pi.Live()
}

// Ancestry returns pid and its ancestors, nearest first, up to the child of
// init and at most depth of them, as far as /proc can tell (a process
// that ended meanwhile ends the chain).
func Ancestry(pid, depth int) []Proc {
	var chain []Proc
	for ; pid > 1 && len(chain) < depth; pid = chain[len(chain)-1].PPID {
		pi, ok := procStat(pid)
		if !ok {
			break
		}
		chain = append(chain, pi)
	}
	return chain
}

// SubmissionOf returns the SUBDASH_SUBMISSION_ID that process pid started
// with (SPEC §2: every process of a submission inherits it), or "" when it
// has none or its environment cannot be read (another user's process).
func SubmissionOf(pid int) string {
	v, _ := envValue(pid, submissionEnv)
	return v
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
	return ok && v == id && ProcessAlive(pid)
}

// StartTime returns when process pid started, in clock ticks after boot
// (proc(5) stat field 22): with the pid, it names one process for as long
// as the machine runs, whatever pid reuse does. ok is false when pid is
// gone or /proc cannot be read.
func StartTime(pid int) (ticks uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return 0, false
	}
	t, err := strconv.ParseUint(string(f[19]), 10, 64)
	return t, err == nil
}
