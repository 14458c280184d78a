package local

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"time"
)

// Scans of /proc shared by every caller that asks at once. Ending a
// thousand submissions together (quit, SIGTERM, close --all) asked /proc
// a thousand times at once whether each group still had a live member
// and which processes carried each submission's id: every process's stat
// and environ read once per submission, 10^6 reads and more, which took
// a host 15–40 s to stop (BENCHMARKS.md "A thousand agents"). A shared
// scan reads each process once for everyone who asked before it started.

// sharedScan runs scan for the callers of get, one run at a time: a
// caller gets the result of a run that started after it called (never
// one begun before, which could miss what the caller just caused), and
// every caller that arrives while a run is under way, or waits to start,
// shares the next one. A run starts no sooner than twice the previous
// one's duration after it ended (scanGap), so that callers arriving one
// after another (a thousand submissions ending at once, each at its own
// moment) share few runs: scanning takes at most a third of the time,
// which on a loaded machine was the most of the host's work at quit.
type sharedScan[T any] struct {
	scan    func() T
	mu      sync.Mutex
	busy    bool        // a run is under way or waits to start
	pending *scanRun[T] // the next run, joined by callers, started when busy ends
	lastEnd time.Time   // when the previous run ended
	lastDur time.Duration
}

// scanGap is how long after a run of duration d the next may start.
func scanGap(d time.Duration) time.Duration { return 2 * d }

type scanRun[T any] struct {
	done   chan struct{}
	val    T
	shared int // callers waiting for it
}

// get returns the result of a run of scan that started after the call.
func (s *sharedScan[T]) get() T {
	s.mu.Lock()
	if s.pending == nil {
		s.pending = &scanRun[T]{done: make(chan struct{})}
	}
	r := s.pending
	r.shared++
	if !s.busy {
		s.startLocked()
	}
	s.mu.Unlock()
	<-r.done
	return r.val
}

// startLocked runs the pending run in a goroutine of its own, once the
// gap after the previous run has passed (callers join it meanwhile), then
// the one that callers joined while it ran, if any. Call with mu held.
func (s *sharedScan[T]) startLocked() {
	s.busy = true
	wait := scanGap(s.lastDur) - time.Since(s.lastEnd)
	go func() {
		if wait > 0 {
			time.Sleep(wait)
		}
		s.mu.Lock()
		r := s.pending
		s.pending = nil
		s.mu.Unlock()
		start := time.Now()
		r.val = s.scan()
		close(r.done)
		s.mu.Lock()
		s.lastEnd, s.lastDur = time.Now(), time.Since(start)
		s.busy = false
		if s.pending != nil {
			s.startLocked()
		}
		s.mu.Unlock()
	}()
}

// procTable is one reading of every process's /proc/<pid>/stat.
type procTable struct {
	procs []Proc
	err   error // /proc could not be listed
}

var procScan = sharedScan[procTable]{scan: func() procTable {
	pids, err := procPIDs()
	if err != nil {
		return procTable{err: err}
	}
	t := procTable{procs: make([]Proc, 0, len(pids))}
	for _, pid := range pids {
		if pi, ok := procStat(pid); ok {
			t.procs = append(t.procs, pi)
		}
	}
	return t
}}

// submissionTable maps each SUBDASH_SUBMISSION_ID found in the
// environment of a live process to those processes.
type submissionTable map[string][]int

var submissionScan = sharedScan[submissionTable]{scan: func() submissionTable {
	t := submissionTable{}
	pids, _ := procPIDs()
	prefix := []byte(submissionEnv + "=")
	for _, pid := range pids {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || len(env) == 0 { // another user's, gone, or a zombie's (empty)
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.HasPrefix(kv, prefix) {
				id := string(kv[len(prefix):])
				t[id] = append(t[id], pid)
				break
			}
		}
	}
	return t
}}
