package output

import (
	"runtime"
	"sync"
	"time"
)

// Budget bounds the CPU time the host spends processing output
// (log file writes, display lines), so that a flood of output from its
// agents cannot take the machine from the agents themselves or from the
// dashboard's own keys. At most slots feeds run at once, and each slot is
// busy at most 1/(1+idleRatio) of the time: after every feed, idleRatio of
// the time it took is owed, and once pauseAfter is owed the slot is held
// idle for that long. A flooding child meanwhile blocks on its full pipe
// (back-pressure); every pipe is still read, in turn.
//
// With light output the debt grows slowly and is paid in rare pauses of
// pauseAfter, invisible next to a terminal's frame time.
type Budget struct {
	slots     chan struct{}
	idleRatio float64
	mu        sync.Mutex
	debt      time.Duration
}

const (
	// feedDuty is the share of a slot's time that may be spent feeding.
	feedDuty = 0.8
	// pauseAfter is the debt paid at once.
	pauseAfter = 2 * time.Millisecond
)

// NewBudget returns the budget for this machine: half the CPUs (at least
// one) as slots, each busy at most feedDuty of the time. One budget serves
// every output of a host (Options.Budget).
func NewBudget() *Budget {
	return &Budget{
		slots:     make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
		idleRatio: (1 - feedDuty) / feedDuty,
	}
}

// acquire waits for a slot and returns the time the feed starts.
func (b *Budget) acquire() time.Time {
	b.slots <- struct{}{}
	return time.Now()
}

// release records the feed that started at start, pays the debt if it is
// due, and frees the slot.
func (b *Budget) release(start time.Time) {
	owed := time.Duration(float64(time.Since(start)) * b.idleRatio)
	b.mu.Lock()
	b.debt += owed
	pay := b.debt
	if pay >= pauseAfter {
		b.debt = 0
	}
	b.mu.Unlock()
	if pay >= pauseAfter {
		time.Sleep(pay)
	}
	<-b.slots
}
