package local

import "time"

// The orphan sweep (SPEC §4: nothing outlives its submission): submissions
// that an earlier host started on this machine and never saw end, because
// that host was killed with SIGKILL or the machine's init killed it without
// letting it clean up. The engine reads the candidates from the journals of
// earlier runs (Leftover); the sweep decides which of them still run and
// ends them.

// Leftover is a submission that an earlier host's journal says started and
// never ended: a candidate of the orphan sweep.
type Leftover struct {
	RunDir       string // the earlier host's run folder
	HostPID      int    // that host's process id (its run_started); 0 when its journal does not say
	AgentID      string // the agent's id
	SubmissionID string // the submission's id, which its processes carry as SUBDASH_SUBMISSION_ID
	PGID         int    // its process group (its submission_started); 0 when it ran elsewhere
}

// Orphans returns, in their order, the leftovers whose host is gone and
// that still have live processes verifiably theirs: a member of their
// process group, or a process that left it, whose environment holds the
// submission's SUBDASH_SUBMISSION_ID, so that a reused pid is never taken
// for one. A leftover of a host whose pid is not known (HostPID 0: a
// journal older than the pid) or still alive is not an orphan.
func Orphans(leftovers []Leftover) []Leftover {
	var out []Leftover
	for _, l := range leftovers {
		if l.HostPID == 0 || ProcessAlive(l.HostPID) {
			continue
		}
		if l.PGID > 0 && groupHolds(l.PGID, l.SubmissionID) || len(escapees(l.SubmissionID)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// TerminateOrphan ends what is left of orphan o as a submission is ended:
// its process group (SIGTERM, SIGKILL after grace or once cut is closed),
// when a member of it is still the submission's, then the processes that
// left the group. It returns how many of those it signalled, and an error
// naming the group when it survived SIGKILL.
func TerminateOrphan(o Leftover, grace time.Duration, cut <-chan struct{}) (escaped int, err error) {
	if o.PGID > 0 && groupHolds(o.PGID, o.SubmissionID) {
		err = terminateGroup(o.PGID, grace, cut, nil)
	}
	return terminateEscapees(o.SubmissionID, grace, cut), err
}

// groupHolds reports whether a live member of process group pgid is a
// process of submission submissionID.
func groupHolds(pgid int, submissionID string) bool {
	members, _ := GroupMembers(pgid)
	for _, pid := range members {
		if ofSubmission(pid, submissionID) {
			return true
		}
	}
	return false
}
