package supervisor

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Escapees are processes a submission started that left its process group
// (setsid, setpgid: a daemonizing dev server, Node's detached children), so
// signals to the group miss them. They still carry the submission's
// SUBDASH_SUBMISSION_ID in their environment, which is how they are found.

// escapees returns the live processes, other than this one, whose
// environment holds SUBDASH_SUBMISSION_ID=submissionID. Processes of other
// users cannot be read and are not returned.
func escapees(submissionID string) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	want := []byte("SUBDASH_SUBMISSION_ID=" + submissionID)
	self := os.Getpid()
	var out []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + name + "/environ")
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				if pi, ok := procStat(pid); ok && pi.state != 'Z' && pi.state != 'X' {
					out = append(out, pid)
				}
				break
			}
		}
	}
	return out
}

// terminateEscapees ends the escapees of a submission as terminateGroup ends
// a group: SIGTERM (and SIGCONT), SIGKILL after grace to what is left, and
// again for any they started meanwhile. It returns how many it signalled.
func terminateEscapees(submissionID string, grace time.Duration) int {
	n := 0
	for round := 0; round < 3; round++ {
		pids := escapees(submissionID)
		if len(pids) == 0 {
			return n
		}
		n += len(pids)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
		if waitPIDsGone(pids, grace) {
			continue
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		waitPIDsGone(pids, killWait)
	}
	return n
}

// waitPIDsGone polls until none of pids is alive or d has passed.
func waitPIDsGone(pids []int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := time.Millisecond
	for {
		alive := false
		for _, pid := range pids {
			if processAlive(pid) {
				alive = true
				break
			}
		}
		if !alive {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(step)
		if step < 10*time.Millisecond {
			step *= 2
		}
	}
}
