package local

import (
	"os"
	"runtime"
	"testing"
)

// TestProcsFollowTheFloods: an adapting process runs on one processor
// while no stream floods, on all it had while one or more do, and on one
// again once the last flood ended.
func TestProcsFollowTheFloods(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two processors and no GOMAXPROCS set: AdaptProcs does nothing then")
	}
	wide := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		procs.mu.Lock()
		procs.adapt = false
		procs.mu.Unlock()
		runtime.GOMAXPROCS(wide)
	})
	AdaptProcs()
	procs.mu.Lock()
	adapting := procs.adapt
	procs.mu.Unlock()
	if !adapting {
		t.Skip("in a pids cgroup: AdaptProcs does nothing there")
	}
	steps := []struct {
		step func()
		want int
	}{{func() {}, 1}, {floodBegins, wide}, {floodBegins, wide}, {floodEnds, wide}, {floodEnds, 1}}
	for i, s := range steps {
		s.step()
		if got := runtime.GOMAXPROCS(0); got != s.want {
			t.Fatalf("step %d: %d processors, want %d", i, got, s.want)
		}
	}
}
