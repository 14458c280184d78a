package local

import (
	"os"
	"syscall"
	"time"
)

// Escapees are processes a submission started that left its process group
// (setsid, setpgid: a daemonizing dev server, Node's detached children), so
// signals to the group miss them. They still carry the submission's
// SUBDASH_SUBMISSION_ID in their environment, which is how they are found.

// escapees returns the live processes, other than this one, whose
// environment holds SUBDASH_SUBMISSION_ID=submissionID, from a scan of
// /proc that began after the call, shared by the callers of the moment
// (submissionScan). Processes of other users cannot be read and are not
// returned.
func escapees(submissionID string) []int {
	self := os.Getpid()
	var out []int
	for _, pid := range submissionScan.get()[submissionID] {
		if pid != self && ProcessAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// terminateEscapees ends the escapees of a submission as terminateGroup ends
// a group: SIGTERM (and SIGCONT), SIGKILL after grace to what is left, and
// again for any they started meanwhile. It returns how many it signalled.
func terminateEscapees(submissionID string, grace time.Duration, cut <-chan struct{}) int {
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
		if waitPIDsGone(pids, grace, cut) {
			continue
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		waitPIDsGone(pids, killWait, nil)
	}
	return n
}

// waitPIDsGone polls until none of pids is alive, d has passed or cut is
// closed.
func waitPIDsGone(pids []int, d time.Duration, cut <-chan struct{}) bool {
	return pollUntil(func() bool {
		for _, pid := range pids {
			if ProcessAlive(pid) {
				return false
			}
		}
		return true
	}, d, cut)
}
