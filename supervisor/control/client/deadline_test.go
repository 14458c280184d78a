package client

import (
	"testing"
	"time"
)

// steppedClock is a clock a test moves.
type steppedClock struct{ t time.Time }

func (c *steppedClock) now() time.Time { return c.t }

// TestDeadlineCountsOnlyTheTimeTheProcessRan: the deadline passes after
// its limit of silence, counted tick by tick; a tick that comes long late
// (the process was stopped) counts as one tick; progress and a hold start
// the count again.
func TestDeadlineCountsOnlyTheTimeTheProcessRan(t *testing.T) {
	clock := &steppedClock{t: time.Unix(1000, 0)}
	expired := false
	d := newSteppedDeadline(time.Second, func() { expired = true }, clock.now)
	tick := d.tick
	if tick != 50*time.Millisecond {
		t.Fatalf("tick of a 1s deadline: %s", tick)
	}
	// ticks reports whether the deadline passed within n ticks of gap.
	ticks := func(n int, gap time.Duration) bool {
		for range n {
			clock.t = clock.t.Add(gap)
			if d.step() {
				return true
			}
		}
		return false
	}
	if ticks(19, tick) {
		t.Fatal("passed before its limit")
	}
	// Stopped for a minute: one tick, not a minute, and not past the limit.
	clock.t = clock.t.Add(time.Minute)
	d.Progress() // what waited in the socket is read on resume
	if d.step() {
		t.Fatal("a pause of the process counted as the host's silence")
	}
	if ticks(19, tick) {
		t.Fatal("passed before its limit after progress")
	}
	d.Hold()
	if ticks(40, tick) {
		t.Fatal("passed while held")
	}
	d.Release() // the next tick starts the count again
	if ticks(19, tick) {
		t.Fatal("passed before its limit after a release")
	}
	// A pause alone, with no progress: still one tick.
	clock.t = clock.t.Add(time.Hour)
	if d.step() {
		t.Fatal("a pause counted whole")
	}
	if !ticks(1, tick) {
		t.Fatal("did not pass at its limit of silence")
	}
	if d.step() || expired {
		t.Fatal("a stepped deadline calls expire only from its timer, and passes once")
	}
}
