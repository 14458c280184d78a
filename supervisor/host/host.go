// Package host starts and stops a host (SPEC §1): the one process that owns
// the supervisor of a working directory and serves its control socket. The
// dashboard that found no host serving, `subdash serve` and `subdash mcp`
// (when nothing else serves) are hosts; they share this choreography:
//
//   - the signals are taken first (signals.Take), so that a signal while the
//     records are restored ends the host with its cleanup and 128+n, not by
//     the default action with the socket left behind;
//   - the control socket is taken before the supervisor is created (Start),
//     so that a start refused because another subdash serves the directory
//     writes nothing to the state directory (SPEC §10);
//   - the socket is served; its failure is reported (Failed);
//   - warnings and notes go where the host shows them (Forward: stderr for
//     serve and mcp; the dashboard's screen reads them itself);
//   - Stop terminates every running submission before it closes the
//     socket, so that a wait in flight answers with the final statuses
//     (SPEC §3); a signal meanwhile skips the rest of the grace period.
//
// The main package (the dashboard and serve) and mcpserver (its own host
// when none serves) import it; ui, control and the engine do not.
package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/subdash/subdash/internal/signals"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/server"
)

// Options say what a host is and where it speaks.
type Options struct {
	// Kind is what serves the socket, as GET /v1/info tells viewers
	// ("attached to subdash serve, pid N"): "dashboard", "serve" or "mcp".
	Kind string
	// Signals are the process's signals (signals.Take), or nil: once Stop
	// begins, each one skips the rest of the grace period.
	Signals *signals.Taken
	// Stderr, when not nil, is told by Stop how many running agents it
	// stops, as "<Name>: stopping 2 running agent(s)… (ctrl+c: kill them
	// now)", since that may take a grace period.
	Stderr io.Writer
	// Name starts the lines written to Stderr ("subdash", "subdash serve").
	Name string
}

// Host is a started host: its supervisor, serving its control socket until
// Stop.
type Host struct {
	opts   Options
	sup    *supervisor.Supervisor
	srv    *server.Server
	failed chan error // the socket stopped serving before Stop; buffered
	served chan error // what Serve returned; buffered

	// forwarding ends with Stop (see Forward).
	forwarding context.Context
	endForward context.CancelFunc
	forwarded  sync.WaitGroup

	stopOnce sync.Once
	stopErr  error
}

// Start takes the control socket cfg.Socket (server.Take), creates the
// supervisor of cfg (supervisor.New: this run's folder, the records
// restored, the orphan sweep) and serves the socket. cfg is as
// supervisor.Resolve returns it.
//
// Errors: server.Take's (*server.InUseError while another subdash
// serves the socket, *server.HostedElsewhereError for a second host of
// the directory on another socket, a socket folder of another user, …),
// then supervisor.New's (a state directory that cannot be written); the
// socket is let go again in that case, so nothing is left behind.
func Start(cfg supervisor.Config, o Options) (*Host, error) {
	sock, err := server.Take(cfg)
	if err != nil {
		return nil, err
	}
	s, err := supervisor.New(cfg)
	if err != nil {
		return nil, errors.Join(err, sock.Close())
	}
	h := &Host{opts: o, sup: s, srv: sock.Server(s), failed: make(chan error, 1), served: make(chan error, 1)}
	h.srv.SetKind(o.Kind)
	h.forwarding, h.endForward = context.WithCancel(context.Background())
	go h.serve()
	return h, nil
}

// serve serves the socket until Stop closes it. A failure before is sent
// on failed in words (the host keeps running: its agents, its screen);
// Stop returns it too.
func (h *Host) serve() {
	err := h.srv.Serve(context.Background())
	if err != nil {
		who := "this host"
		if h.opts.Kind == "dashboard" {
			who = "this dashboard"
		}
		h.failed <- fmt.Errorf("control socket %s stopped serving (%v): subdash ctl and MCP clients cannot reach %s", h.srv.Path(), err, who)
	}
	h.served <- err
}

// Supervisor returns the host's supervisor.
func (h *Host) Supervisor() *supervisor.Supervisor { return h.sup }

// Socket returns the path of the control socket served.
func (h *Host) Socket() string { return h.srv.Path() }

// Viewers returns how many viewers (SPEC §9) are attached now, from
// memory.
func (h *Host) Viewers() int { return h.srv.Viewers() }

// Failed receives, at most once, the failure of the control socket while
// the host runs, in words saying who can no longer reach it (the
// dashboard shows it as a note; serve ends on it); Stop returns it as
// well, and closes Failed once the socket is closed.
func (h *Host) Failed() <-chan error { return h.failed }

// Forward hands the host's warnings and notes to warn and note, for a host
// without a screen (serve and mcp write them on stderr): first the
// start's warnings (a state directory that is not writable, journals that
// could not be read) and notes (agents restored, orphans terminated), in
// this goroutine, then each warning found while the host serves (a
// failing --notify-command, a journal that cannot be written), in a
// goroutine of its own, until Stop has stopped the agents. A warning found
// while the start's are handed may be handed twice, never not at all. Call
// it once, right after Start.
func (h *Host) Forward(warn, note func(msg string)) {
	later := h.sup.Subscribe()
	cfg := h.sup.Config()
	for _, w := range cfg.Warnings {
		warn(w)
	}
	for _, n := range cfg.Notes {
		note(n)
	}
	h.forwarded.Add(1)
	go func() {
		defer h.forwarded.Done()
		defer later.Close()
		for {
			changes, err := later.Next(h.forwarding)
			if err != nil {
				return
			}
			for _, c := range changes {
				for _, w := range c.Warnings {
					warn(w)
				}
			}
		}
	}()
}

// Stop stops the host (SPEC §4, §6): it terminates every running
// submission (the agent CLI's own interrupt where it takes one, SIGTERM to
// its process group, SIGKILL after the grace period or at once on a
// signal, see Options.Signals), waiting at most the grace period and
// supervisor.ShutdownTimeout more, then closes the control socket and
// removes its file. A
// wait in flight on the socket thus answers with the final statuses
// instead of an error. It returns what failed, joined: stopping the agents,
// closing the socket, serving it. Later calls return the same.
func (h *Host) Stop() error {
	h.stopOnce.Do(func() {
		if g := h.opts.Signals; g != nil {
			g.Then(h.sup.SkipGrace)
		}
		if n := running(h.sup); n > 0 && h.opts.Stderr != nil {
			fmt.Fprintf(h.opts.Stderr, "%s: stopping %d running agent(s)… (ctrl+c: kill them now)\n", h.opts.Name, n) //nolint:errcheck // a note on the host's stderr: nothing is left to tell
		}
		var errs []error
		if err := h.sup.Shutdown(context.Background()); err != nil {
			errs = append(errs, fmt.Errorf("stopping the agents failed: %v", err))
		}
		h.endForward()
		h.forwarded.Wait()
		if err := h.srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the control socket: %v", err))
		}
		if err := <-h.served; err != nil {
			errs = append(errs, fmt.Errorf("control socket %s: %v", h.srv.Path(), err))
		}
		close(h.failed) // serve sends before served, never after
		h.stopErr = errors.Join(errs...)
	})
	return h.stopErr
}

// running counts the agents whose submission may still be alive.
func running(s *supervisor.Supervisor) int {
	n := 0
	for _, a := range s.Agents() {
		if a.Running() {
			n++
		}
	}
	return n
}

// Each returns the errors joined in err (errors.Join, as Stop returns
// them), each to be said on a line of its own; err alone when it joins
// none; nothing for nil.
func Each(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}
