package host

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Signals is how a subdash host takes SIGINT, SIGTERM and SIGHUP (SPEC §6,
// §7): the first one ends the host (Context is done) and makes its exit
// status 128+n (Status); once the host stops (Host.Stop), each one skips
// the rest of the grace period instead, killing what is left at once
// ("ctrl+c: kill them now"). None of them ends the process by the default
// action while it is taken.
type Signals struct {
	ch     chan os.Signal
	ctx    context.Context
	cancel context.CancelCauseFunc
	// held reports a signal that belongs to a program in front of the
	// dashboard (the pager has ctrl+c); nil: none.
	held  func(os.Signal) bool
	first atomic.Int32 // the signal that ended the host, 0 for none
	done  chan struct{}

	mu  sync.Mutex
	cut func() // set once the host stops: skips the grace period
}

// TakeSignals takes SIGINT, SIGTERM and SIGHUP from now until Release.
// Take them before the control socket: a signal while the records are
// restored then ends the host once it is up (SPEC §10). held, when not
// nil, is asked about each signal before the host stops; one it reports
// (SIGINT while $PAGER runs in front of the dashboard: the terminal sends
// it to the whole foreground process group) is passed over.
func TakeSignals(held func(os.Signal) bool) *Signals {
	g := &Signals{ch: make(chan os.Signal, 4), held: held, done: make(chan struct{})}
	g.ctx, g.cancel = context.WithCancelCause(context.Background())
	signal.Notify(g.ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for {
			select {
			case sig := <-g.ch:
				g.take(sig)
			case <-g.done:
				return
			}
		}
	}()
	return g
}

// take acts on one signal.
func (g *Signals) take(sig os.Signal) {
	g.mu.Lock()
	cut := g.cut
	g.mu.Unlock()
	switch {
	case cut != nil:
		cut()
	case g.held != nil && g.held(sig):
	default:
		n, _ := sig.(syscall.Signal)
		g.first.CompareAndSwap(0, int32(n))
		g.cancel(fmt.Errorf("%s received", unix.SignalName(n)))
	}
}

// stopping makes every later signal call cut (Host.Stop: skip the grace
// period).
func (g *Signals) stopping(cut func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cut = cut
}

// Context is done once a signal ended the host; its cause names the
// signal ("SIGTERM received").
func (g *Signals) Context() context.Context { return g.ctx }

// Status returns the exit status of a command that would exit with code:
// 128+n when signal n ended it (SPEC §6), else code.
func (g *Signals) Status(code int) int {
	if n := g.first.Load(); n != 0 {
		return 128 + int(n)
	}
	return code
}

// Release gives the signals back to their default action. Call it once,
// as the command returns.
func (g *Signals) Release() {
	signal.Stop(g.ch)
	close(g.done)
	g.cancel(context.Canceled)
}
