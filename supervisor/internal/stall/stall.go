// Package stall holds the rule that marks a running agent stalled (SPEC
// §11 "Stalled"): no output, no event and no CPU time used by its process
// group for --stall-after. A Clock per running submission counts its signs
// of life; the engine's watcher checks every clock once per Interval with
// one reading of /proc for all of them (runner.CPUMeter).
package stall

import (
	"sync/atomic"
	"time"
)

// DefaultAfter is the default of --stall-after.
const DefaultAfter = 5 * time.Minute

// Interval is how often the watcher checks the clocks for a stall rule of
// after: a tenth of it, at least a second and at most 30 s, so a stall is
// marked within after plus that, and the /proc reading it needs (every
// process's stat, BENCHMARKS.md "The stall rule") costs little however
// many agents run.
func Interval(after time.Duration) time.Duration {
	return min(max(after/10, time.Second), 30*time.Second)
}

// Change is what one Check found.
type Change int

// The changes of a Clock.
const (
	Same    Change = iota // nothing changed
	Stalled               // it turned stalled now
	Cleared               // it was stalled and showed a sign of life
)

// Sample is what the watcher read for one submission at a check.
type Sample struct {
	// CPU is the CPU time its process group used so far, valid when
	// CPUKnown (runner.CPUMeter; never with the Kubernetes runner).
	CPU      time.Duration
	CPUKnown bool
	// Paused: an approval request waits for an answer (SPEC §12); the
	// clock does not run while it does.
	Paused bool
}

// Clock is one running submission's stall clock. Touch may be called
// from any goroutine (the output path); Check from one goroutine only
// (the watcher); Since from any.
type Clock struct {
	seen  atomic.Uint64 // output chunks and events so far
	since atomic.Int64  // unix nanoseconds it turned stalled; 0 when it is not

	// the watcher's own
	last     time.Time // the last sign of life a Check saw
	lastSeen uint64
	cpu      time.Duration
	cpuKnown bool
}

// NewClock returns the clock of a submission that started at now.
func NewClock(now time.Time) *Clock { return &Clock{last: now} }

// Touch counts a sign of life (output, an event). It reports whether
// that cleared a stall, which the caller then says (the summary's
// stalled_since is gone, the stalled needs-you too). Cheap: one atomic
// add and one atomic load while the clock is not stalled.
func (c *Clock) Touch() (cleared bool) {
	c.seen.Add(1)
	return c.since.Load() != 0 && c.since.Swap(0) != 0
}

// Since returns when the submission turned stalled, and false when it is
// not stalled.
func (c *Clock) Since() (time.Time, bool) {
	if c == nil {
		return time.Time{}, false
	}
	n := c.since.Load()
	if n == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// Check applies the rule at now for a stall after after (> 0) to what the
// watcher read (s): output or an event since the last check, CPU time
// used since then, or a pending approval are signs of life (the first
// CPU reading is one too: it is where the count starts); none of them
// for after makes the submission stalled.
func (c *Clock) Check(now time.Time, after time.Duration, s Sample) Change {
	alive := s.Paused
	if n := c.seen.Load(); n != c.lastSeen {
		c.lastSeen, alive = n, true
	}
	if s.CPUKnown {
		if !c.cpuKnown || s.CPU != c.cpu {
			alive = true
		}
		c.cpu, c.cpuKnown = s.CPU, true
	}
	if alive {
		c.last = now
		if c.since.Swap(0) != 0 {
			return Cleared
		}
		return Same
	}
	if now.Sub(c.last) < after || !c.since.CompareAndSwap(0, now.UnixNano()) {
		return Same
	}
	if c.seen.Load() != c.lastSeen { // output came meanwhile: not stalled
		c.since.Store(0)
		return Same
	}
	return Stalled
}

// Watched is one running submission at a check (CheckAll).
type Watched struct {
	Clock  *Clock
	PGID   int  // its process group on this machine; 0 when it runs elsewhere
	Paused bool // an approval request waits for an answer
	// Stalled and Cleared are called when the check finds it turned
	// stalled, or showed a sign of life while stalled.
	Stalled, Cleared func()
}

// CPU reads the CPU time of process groups (runner.CPUMeter.GroupCPU).
type CPU func(pgids []int) (map[int]time.Duration, error)

// CheckAll checks every clock of ws at now for a stall after after, with
// one reading of cpu (nil: none, output and events alone count) for all
// their process groups, and calls their Stalled or Cleared. The error is
// cpu's; the clocks are checked without CPU time then.
func CheckAll(now time.Time, after time.Duration, ws []Watched, cpu CPU) error {
	var pgids []int
	for _, w := range ws {
		if w.PGID > 0 {
			pgids = append(pgids, w.PGID)
		}
	}
	var used map[int]time.Duration
	var err error
	if cpu != nil && len(pgids) > 0 {
		used, err = cpu(pgids)
	}
	for _, w := range ws {
		t, known := used[w.PGID]
		switch w.Clock.Check(now, after, Sample{CPU: t, CPUKnown: known && w.PGID > 0, Paused: w.Paused}) {
		case Stalled:
			w.Stalled()
		case Cleared:
			w.Cleared()
		}
	}
	return err
}
