package local

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// TestSharedScanJoinsCallers: callers that arrive while a scan runs share
// the next one (one scan for all of them, not one each), and none gets the
// result of a scan that began before it asked.
func TestSharedScanJoinsCallers(t *testing.T) {
	var runs atomic.Int64
	release := make(chan struct{})
	started := make(chan int64, 16)
	s := sharedScan[int64]{scan: func() int64 {
		n := runs.Add(1)
		started <- n
		<-release
		return n
	}}
	first := make(chan int64)
	go func() { first <- s.get() }()
	if n := <-started; n != 1 {
		t.Fatalf("first scan is run %d", n)
	}
	// Ten callers arrive while run 1 is under way.
	const callers = 10
	var wg sync.WaitGroup
	got := make([]int64, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = s.get()
		}()
	}
	testkit.Eventually(t, 10*time.Second, "ten callers waiting for the next scan", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.pending != nil && s.pending.shared == callers
	})
	close(release)
	if n := <-first; n != 1 {
		t.Errorf("the first caller got run %d, want 1", n)
	}
	wg.Wait()
	total := runs.Load()
	for i, n := range got {
		if n < 2 {
			t.Errorf("caller %d got run %d, which began before it asked", i, n)
		}
	}
	if total != 2 {
		t.Errorf("%d scans for 1 + %d callers; callers that arrive together share one", total, callers)
	}
}

// TestSharedScanSpacesItsRuns: callers arriving one after another share
// runs that start no sooner than twice the previous run's duration after
// it ended (at most a third of the time scanning), and each still gets a
// run that began after it asked.
func TestSharedScanSpacesItsRuns(t *testing.T) {
	type run struct{ start, end time.Time }
	var mu sync.Mutex
	var runs []run
	s := sharedScan[time.Time]{scan: func() time.Time {
		r := run{start: time.Now()}
		time.Sleep(5 * time.Millisecond)
		r.end = time.Now()
		mu.Lock()
		runs = append(runs, r)
		mu.Unlock()
		return r.start
	}}
	const callers = 40
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		asked := time.Now()
		go func() {
			defer wg.Done()
			if began := s.get(); began.Before(asked) {
				t.Errorf("a caller got a run that began %v before it asked", asked.Sub(began))
			}
		}()
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(runs); i++ {
		if gap, prev := runs[i].start.Sub(runs[i-1].end), runs[i-1].end.Sub(runs[i-1].start); gap < 2*prev {
			t.Errorf("run %d began %v after run %d, which took %v: want twice that", i+1, gap, i, prev)
		}
	}
	if len(runs) >= callers {
		t.Errorf("%d callers got %d runs", callers, len(runs))
	}
}
