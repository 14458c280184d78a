// Package fdlimit says whether a host's limit of agents fits the
// process's open-files limit (SPEC §4 --max-agents): each
// running agent of the local runner holds about PerAgent descriptors in
// the host (its stdout and stderr pipes, its pidfd, its log file), on top
// of the Base the host keeps for itself (the journal, the control socket
// and its clients, the terminal).
package fdlimit

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// PerAgent is about how many descriptors a running agent holds in its
// host: 5,014-5,016 for 1,000 agents (BENCHMARKS "A thousand agents").
const PerAgent = 5

// Base is what a host holds without agents, with room for viewers and
// ctl clients.
const Base = 64

// Needed returns about how many descriptors a host running maxAgents
// agents at once holds.
func Needed(maxAgents int) int { return Base + PerAgent*max(maxAgents, 0) }

// Limit returns the open-files limit the process runs under now (the
// soft RLIMIT_NOFILE; Go raises it to the hard limit at start), or an
// error when it cannot be read.
func Limit() (uint64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, err
	}
	return r.Cur, nil
}

// Warning returns what to tell the user when maxAgents agents would need
// more descriptors than limit (Needed against Limit): how many, by how
// much, and what to do; "" when they fit.
func Warning(maxAgents int, limit uint64) string {
	need := Needed(maxAgents)
	if uint64(need) <= limit {
		return ""
	}
	fit := max((int(limit)-Base)/PerAgent, 0)
	return fmt.Sprintf("--max-agents %d needs about %d open files (%d per agent), but the open-files limit (ulimit -n) is %d: %d short; "+
		"about %d agents fit, a spawn past that fails with \"too many open files\"; raise it (ulimit -n %d) or lower --max-agents",
		maxAgents, need, PerAgent, limit, uint64(need)-limit, fit, roundUp(need))
}

// roundUp rounds n up to a number a person would type: the next multiple
// of 1,024.
func roundUp(n int) int { return (n + 1023) / 1024 * 1024 }

// Hint returns what to add to err, the error of starting an agent's
// process, when a limit of the process or the system caused it: the
// limit and what to do, in parentheses after a space; "" otherwise.
//
//   - EMFILE: the open-files limit (ulimit -n) of the host;
//   - ENFILE: the system's open-files table (fs.file-max);
//   - EAGAIN from fork: the pids cgroup of the host when it has at most
//     PidsReserve left (PidsHint), else the process limit (ulimit -u) of
//     the user, which does not bind root.
func Hint(err error) string {
	switch {
	case errors.Is(err, syscall.EMFILE):
		lim, lerr := Limit()
		if lerr != nil {
			return " (the host reached its open-files limit, ulimit -n; each running agent holds about 5 files: raise the limit or lower --max-agents)"
		}
		return fmt.Sprintf(" (the host reached its open-files limit, ulimit -n %d, about %d running agents; raise it (ulimit -n %d) or lower --max-agents)",
			lim, max((int(lim)-Base)/PerAgent, 0), roundUp(int(lim)*2))
	case errors.Is(err, syscall.ENFILE):
		return " (the system's open-files table is full: see /proc/sys/fs/file-max, or stop agents)"
	case errors.Is(err, syscall.EAGAIN):
		if p, ok := PidsLimit(); ok && p.Left() <= PidsReserve {
			return PidsHint(p, 0)
		}
		var r syscall.Rlimit
		if os.Geteuid() != 0 && syscall.Getrlimit(rlimitNPROC, &r) == nil && r.Cur != ^uint64(0) {
			return fmt.Sprintf(" (no process could be made: the limit of processes of this user, ulimit -u, is %d; raise it or lower --max-agents)", r.Cur)
		}
		return " (no process could be made: the user's process limit, ulimit -u, or the system's; raise it or lower --max-agents)"
	}
	return ""
}

// PidsReserve is how many processes or threads of its pids cgroup
// (PidsLimit) a host keeps for itself: a spawn is refused when fewer are
// left, so that Go can still start the threads the host needs (a thread
// it cannot start aborts the host: "pthread_create failed").
const PidsReserve = 8

// rlimitNPROC is RLIMIT_NPROC (linux), which package syscall does not name.
const rlimitNPROC = 6
