package local

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/subdash/subdash/supervisor/internal/fdlimit"
)

// A host in a pids cgroup with a pids.max (fdlimit.PidsLimit)
// shares that limit with its agents and their children, and Go aborts the
// whole host when it cannot start a thread it needs ("runtime/cgo:
// pthread_create failed: Resource temporarily unavailable", seen at
// pids.max 30 with flooding agents: every agent's pipes closed with it).
// There, at the first start of a submission, the host starts the threads
// it will need at once (Go keeps an idle thread for the next one that is
// needed, it never ends them), a flood's reader waits in poll(2) on a
// thread of its own only while fewer than floodPollCap do (the others wait
// in the shared poller, which needs no thread each), and a spawn is
// refused while fewer than fdlimit.PidsReserve are left.

// floodPollCap bounds the floods that wait in poll(2) at once under a
// pids limit.
const floodPollCap = 4

var (
	pidsOnce    sync.Once
	pidsLimited atomic.Bool  // the host runs under a pids.max
	floodPolls  atomic.Int32 // flood readers in poll(2) now, counted under a pids limit only
)

// hostThreads is how many threads the host keeps ready under a pids
// limit: one per P running Go code, one per P that has just left one in
// a system call, the shared poller's, the floods' in poll(2), and a few
// for the log writes and timers that block a thread for a moment.
func hostThreads() int { return 2*runtime.GOMAXPROCS(0) + 1 + floodPollCap + 4 }

// checkPids is run before each start of a submission: the first looks for
// a pids limit and, if there is one, starts the host's threads; each one
// under a limit then refuses the start, with the limit and what to do,
// while fewer than fdlimit.PidsReserve processes or threads are left.
func checkPids() error {
	pidsOnce.Do(func() {
		p, ok := fdlimit.PidsLimit()
		if !ok {
			return
		}
		pidsLimited.Store(true)
		startThreads(min(hostThreads()-threadsNow(), int(p.Left()-fdlimit.PidsReserve)))
	})
	if !pidsLimited.Load() {
		return nil
	}
	if p, ok := fdlimit.PidsLimit(); ok && p.Left() < fdlimit.PidsReserve {
		return fmt.Errorf("cannot start submission: %d processes or threads left%s", p.Left(), fdlimit.PidsHint(p, fdlimit.PidsReserve))
	}
	return nil
}

// threadsNow is how many threads the host has (/proc/self/task); 0 when
// it cannot be read.
func threadsNow() int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	return len(tasks)
}

// startThreads makes Go start about n threads more: n goroutines each lock
// a thread of their own until all n have one, then let it go idle, where
// the runtime keeps it for the next goroutine that needs a thread.
func startThreads(n int) {
	if n <= 0 {
		return
	}
	var locked sync.WaitGroup
	release := make(chan struct{})
	locked.Add(n)
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			locked.Done()
			<-release
			runtime.UnlockOSThread()
		}()
	}
	locked.Wait()
	close(release)
	done.Wait()
}

// floodPoll reports whether a flood's reader may wait in poll(2) on its
// own thread now; when it may, done must be called after the wait.
func floodPoll() (ok bool, done func()) {
	if !pidsLimited.Load() {
		return true, func() {}
	}
	if floodPolls.Add(1) > floodPollCap {
		floodPolls.Add(-1)
		return false, nil
	}
	return true, func() { floodPolls.Add(-1) }
}
