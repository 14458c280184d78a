package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// dashPID returns the dashboard process: the child of the pane's shell.
func (d *dash) dashPID() int {
	out, err := d.tm("display", "-p", "-t", "dash", "#{pane_pid}")
	if err != nil {
		return 0
	}
	sh := strings.TrimSpace(out)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%s/task/%s/children", sh, sh))
	if err != nil {
		return 0
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe == d.binary() {
			return pid
		}
	}
	return 0
}

// journal returns the events of the dashboard's run.
func (d *dash) journal() []map[string]any {
	files, _ := filepath.Glob(filepath.Join(d.state, "runs", "*", "journal.jsonl"))
	var out []map[string]any
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				out = append(out, ev)
			}
		}
		fh.Close() //nolint:errcheck // read only: its Close cannot lose data
	}
	return out
}

// agentID waits for the agent spawned with message and returns its id.
func (d *dash) agentID(message string) string {
	d.t.Helper()
	return testkit.Poll(d.t, dashWait, fmt.Sprintf("an agent spawned with %q", message), func() (string, bool) {
		for _, ev := range d.journal() {
			if ev["event"] == "spawned" && ev["message"] == message {
				return ev["agent_id"].(string), true
			}
		}
		return "", false
	})
}

// agentIDs returns every agent id and process group of the run.
func (d *dash) groups() (ids []string, pgids []int) {
	for _, ev := range d.journal() {
		if ev["event"] == "submission_started" {
			ids = append(ids, ev["agent_id"].(string))
			if pid, ok := ev["pid"].(float64); ok {
				pgids = append(pgids, int(pid))
			}
		}
	}
	return ids, pgids
}

// leftovers returns the processes still running for one of the run's
// agents: any member of their process groups, and any process whose
// environment names one of the agents (a child that left its group).
func (d *dash) leftovers() []string {
	ids, pgids := d.groups()
	var left []string
	for _, g := range pgids {
		if errors.Is(syscall.Kill(-g, 0), syscall.ESRCH) {
			continue
		}
		if m := groupMembers(g); m != "" {
			left = append(left, fmt.Sprintf("process group %d: %s", g, m))
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, id := range ids {
			if strings.Contains(string(b), "SUBDASH_AGENT_ID="+id+"\x00") {
				cmd, _ := os.ReadFile(strings.TrimSuffix(p, "environ") + "cmdline")
				left = append(left, fmt.Sprintf("%s (%s) of agent %s", filepath.Base(filepath.Dir(p)), strings.ReplaceAll(string(cmd), "\x00", " "), id[:8]))
			}
		}
	}
	return left
}

func (d *dash) killLeftovers() {
	_, pgids := d.groups()
	for _, g := range pgids {
		_ = syscall.Kill(-g, syscall.SIGKILL)
	}
}

// groupMembers describes the live processes of process group g from
// /proc. Zombies are dead: they wait only for init to reap them (init in
// some containers reaps late), so they do not count.
func groupMembers(g int) string {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(g) && f[0] != "Z" {
			out = append(out, s[:i+1]+" "+f[0]+" ppid "+f[1])
		}
	}
	return strings.Join(out, ", ")
}

// groupGone reports whether no process of group pgid is left.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// stopProcess is testkit.StopProcess within dashWait.
func stopProcess(t *testing.T, pid int) {
	t.Helper()
	testkit.StopProcess(t, pid, dashWait)
}

// waitForConnection waits until process pid (a client of one Unix socket)
// holds a connected Unix socket: one of its fds is socket:[inode], and
// /proc/net/unix lists that inode in state 03 (connected).
func waitForConnection(t *testing.T, pid int) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, fmt.Sprintf("process %d to connect to a Unix socket", pid), func() bool {
		inodes := map[string]bool{}
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
		b, err := os.ReadFile("/proc/net/unix")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 7 && f[5] == "03" && inodes[f[6]] {
				return true
			}
		}
		return false
	})
}

// rssKiB returns the resident memory (VmRSS) of process pid in KiB, or 0
// when /proc does not say.
func rssKiB(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			n, _ := strconv.Atoi(strings.Fields(l)[1])
			return n
		}
	}
	return 0
}

// cpuTicks returns the user+system CPU time of process pid in clock ticks
// (1/100 s).
func cpuTicks(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.Atoi(f[11])
	k, _ := strconv.Atoi(f[12])
	return u + k
}

// logBytes returns the size of every submission log file under dir, in bytes.
func logBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		// the head (.log) and the parts a cap or the floor made (.log.t…, .log.h…)
		if err == nil && !e.IsDir() && (strings.HasSuffix(path, ".log") || strings.Contains(filepath.Base(path), ".log.")) {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// waitCount polls until f() reaches n (and then checks it stays exactly n
// as later events arrive in the caller).
func waitCount(t *testing.T, what string, n int, f func() int) {
	t.Helper()
	testkit.Poll(t, dashWait, fmt.Sprintf("%s to reach %d", what, n), func() (int, bool) {
		got := f()
		return got, got >= n
	})
}
