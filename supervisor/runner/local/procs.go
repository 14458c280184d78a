package local

import (
	"os"
	"runtime"
	"sync"

	"github.com/subdash/subdash/supervisor/internal/fdlimit"
)

// Processors while quiet and while flooding (issue 27): a host whose
// agents print now and then spends most of its CPU handing each line
// from one thread to another (a read woken in the shared poller, the
// output's notice, the event path), and with two Go processors each
// hand-off wakes a second thread: 1,000 agents printing a line a second
// cost `serve` 0.117-0.123 core on two processors, 0.084-0.088 on one
// (BENCHMARKS.md, "A thousand agents"). A flood needs every core for its
// conversion. So a host that adapts (AdaptProcs) runs on one processor
// while no stream holds a flood's batch buffer, and on all while one
// does; a flood's buffer goes back after batchIdle without bytes, which
// keeps the switch from flapping.

var procs struct {
	mu     sync.Mutex
	adapt  bool // AdaptProcs was called and applies
	wide   int  // the processors while flooding: GOMAXPROCS when AdaptProcs was called
	floods int  // streams that hold a flood's batch buffer now
}

// AdaptProcs makes this process run on one Go processor while none of
// its agents floods and on as many as it has now while one does. It does
// nothing when the user set GOMAXPROCS (theirs wins), when there is one
// processor anyway, or in a pids cgroup (the threads the host keeps for
// its spawns were counted for the processors it has, pids.go). Call it
// once the host started: work that uses every core at start (the
// journal's decode) has been done.
func AdaptProcs() {
	if os.Getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) < 2 {
		return
	}
	if _, limited := fdlimit.PidsLimit(); limited {
		return
	}
	procs.mu.Lock()
	defer procs.mu.Unlock()
	procs.adapt, procs.wide = true, runtime.GOMAXPROCS(0)
	if procs.floods == 0 {
		runtime.GOMAXPROCS(1)
	}
}

// floodBegins and floodEnds count the streams holding a flood's batch
// buffer: the first widens the processors, the last one's end narrows
// them (AdaptProcs).
func floodBegins() {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	if procs.floods++; procs.floods == 1 && procs.adapt {
		runtime.GOMAXPROCS(procs.wide)
	}
}

func floodEnds() {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	if procs.floods--; procs.floods == 0 && procs.adapt {
		runtime.GOMAXPROCS(1)
	}
}
