// Package signals is how a subdash command that runs until it is told to
// stop takes SIGINT, SIGTERM and SIGHUP (SPEC §6, §7): a host (the
// dashboard, `serve`, `mcp`), a viewer (`subdash attach`, the dashboard
// where a host serves) and the built-in agent (`subdash agent`). One rule
// for all: the first signal ends the command (Context is done, its cause
// naming the signal), which then restores the terminal, stops what it runs
// and exits 128+n (Status); a later one calls what the command gave Then
// (a host that stops skips the grace period), else nothing. While they
// are taken, none of them ends the process by its default action.
package signals

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

// Taken are the signals a command took (Take), until Release.
type Taken struct {
	ch     chan os.Signal
	ctx    context.Context
	cancel context.CancelCauseFunc
	// held reports a signal that belongs to a program in front of the
	// command (a pager has ctrl+c); nil: none.
	held  func(os.Signal) bool
	first atomic.Int32 // the signal that ended the command, 0 for none
	done  chan struct{}

	mu   sync.Mutex
	then func() // set by Then: each later signal calls it
}

// Take takes SIGINT, SIGTERM and SIGHUP from now until Release. A command
// takes them before it does anything a signal should not cut short (a
// host before its control socket: a signal while the records are restored
// ends the host once it is up, SPEC §10). held, when not nil, is asked
// about each signal until Then; one it reports (SIGINT while $PAGER runs
// in front of the dashboard: the terminal sends it to the whole
// foreground process group) is passed over.
func Take(held func(os.Signal) bool) *Taken {
	g := &Taken{ch: make(chan os.Signal, 4), held: held, done: make(chan struct{})}
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
func (g *Taken) take(sig os.Signal) {
	g.mu.Lock()
	then := g.then
	g.mu.Unlock()
	switch {
	case then != nil:
		then()
	case g.held != nil && g.held(sig):
	default:
		n, _ := sig.(syscall.Signal)
		g.first.CompareAndSwap(0, int32(n))
		g.cancel(fmt.Errorf("%s received", unix.SignalName(n)))
	}
}

// Then makes each signal from now on call f instead of ending the
// command, and not count for Status (Host.Stop: skip the grace period).
func (g *Taken) Then(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.then = f
}

// Context is done once a signal ended the command; its cause names the
// signal ("SIGTERM received").
func (g *Taken) Context() context.Context { return g.ctx }

// Status returns the exit status of a command that would exit with code:
// 128+n when signal n ended it (SPEC §6), else code.
func (g *Taken) Status(code int) int {
	if n := g.first.Load(); n != 0 {
		return 128 + int(n)
	}
	return code
}

// Release gives the signals back to their default action. Call it once,
// as the command returns.
func (g *Taken) Release() {
	signal.Stop(g.ch)
	close(g.done)
	g.cancel(context.Canceled)
}
