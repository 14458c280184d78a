package client

import (
	"sync"
	"sync/atomic"
	"time"
)

// A deadline bounds one call or stream of a Client (SPEC §6: clients never
// hang) in the time this process ran, not in wall time: a stretch in which
// the process did not run (SIGSTOP, ctrl+z, a debugger, a frozen ssh
// session, a suspended laptop) is not the host's silence. A client that
// resumes reads what the host wrote meanwhile, waiting in its socket,
// before its deadline can pass; a wall-time timer would fire at once on
// resume and blame a host that had answered all along.
//
// It counts silence in ticks (tickOf(limit), at most 250 ms): a tick that
// comes more than pauseSlack late counts as one tick, since the process was
// not running in between. Progress (a read that returned bytes) starts the
// count again at the next tick, so the deadline passes between limit and
// limit plus a tick after the last progress. expire runs once, in a
// goroutine of its own, when it passes; Stop ends the count.
type deadline struct {
	limit, tick time.Duration
	expire      func()
	now         func() time.Time // time.Now; tests step it

	progress atomic.Uint64 // calls of Progress
	held     atomic.Int32  // Hold calls not yet Released

	mu     sync.Mutex
	t      *time.Timer // nil when a test steps the deadline itself
	last   time.Time   // the previous tick
	seen   uint64      // progress at the previous tick
	silent time.Duration
	over   bool // expired or stopped
}

// pauseSlack is how late a tick of a deadline may come and still count
// whole: a later one means this process did not run meanwhile (it was
// stopped, or starved of CPU), which is no fault of the host's.
const pauseSlack = time.Second

// tickOf is the tick of a deadline of limit: a twentieth of it, between
// 5 ms and 250 ms.
func tickOf(limit time.Duration) time.Duration {
	return min(max(limit/20, 5*time.Millisecond), 250*time.Millisecond)
}

// newDeadline starts a deadline of limit that calls expire when it passes.
func newDeadline(limit time.Duration, expire func()) *deadline {
	d := newSteppedDeadline(limit, expire, time.Now)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.t = time.AfterFunc(d.tick, d.onTick)
	return d
}

// newSteppedDeadline is a deadline with no timer of its own: the caller
// calls step at each tick, reading time from now.
func newSteppedDeadline(limit time.Duration, expire func(), now func() time.Time) *deadline {
	return &deadline{limit: limit, tick: tickOf(limit), expire: expire, now: now, last: now()}
}

// Progress says the host was heard from: the silence counts from now.
func (d *deadline) Progress() { d.progress.Add(1) }

// Hold stops the count until Release: the time the client itself spends
// (reading the message it uploads from a slow source) is not the host's.
func (d *deadline) Hold() { d.held.Add(1) }

// Release undoes a Hold; the silence counts from now.
func (d *deadline) Release() {
	d.progress.Add(1)
	d.held.Add(-1)
}

// Stop ends the count; expire is not called after Stop returns, unless it
// had started.
func (d *deadline) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.over = true
	if d.t != nil {
		d.t.Stop()
	}
}

// onTick is the timer's: one step, and the next tick unless it expired.
func (d *deadline) onTick() {
	if d.step() {
		d.expire()
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.over {
		d.t.Reset(d.tick)
	}
}

// step counts the time since the previous tick as silence unless the host
// was heard from (or the count was held) meanwhile, and reports whether
// the deadline passed just now (then it counts no more).
func (d *deadline) step() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.over {
		return false
	}
	now := d.now()
	gap := now.Sub(d.last)
	d.last = now
	if gap > d.tick+pauseSlack || gap < 0 {
		gap = d.tick // the process did not run: not the host's silence
	}
	if p := d.progress.Load(); p != d.seen || d.held.Load() > 0 {
		d.seen, d.silent = p, 0
		return false
	}
	d.silent += gap
	if d.silent < d.limit {
		return false
	}
	d.over = true
	return true
}
