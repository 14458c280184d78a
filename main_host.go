package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control"
	"github.com/subdash/subdash/supervisor/mcpserver"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui"
)

// The hosts of SPEC §1: the dashboard (or its viewer, where a host serves
// already), `subdash serve` and `subdash mcp`; how each ends, on quit or a
// signal, with every agent stopped.

// dashboard runs `subdash`: the host dashboard on its own supervisor and
// control socket, or a viewer of the host serving its directory (SPEC §9).
// It returns the exit status.
func dashboard(args []string) int {
	fs, op, sp := dashboardFlags()
	if err := parse(fs, args, op); err != nil {
		return failed(err)
	}
	o, spawns := *op, *sp
	notify, err := ui.ResolveNotify(fs.Lookup("notify").Value.String(), os.Getenv)
	if err != nil {
		return failed(usageError{err})
	}
	cfg, err := supervisor.Resolve(o, supervisor.SystemEnvironment())
	if err != nil {
		return failed(usageError{err}) // a setting that cannot work as given
	}
	// Where a host serves the directory, the dashboard is its viewer
	// (SPEC §9).
	set := given(fs)
	readOnly := set["read-only"] == "true"
	dir := cfg.Dir
	if set["socket"] != "" || os.Getenv("SUBDASH_SOCKET") != "" {
		dir = ""
	}
	r, err := attachTo(cfg.Socket, dir, readOnly)
	var notServing *control.NotServingError
	switch {
	case err == nil:
		if cerr := hostConflict(set, cfg, r.Config(), r.Info()); cerr != nil {
			r.Detach()
			return failed(usageError{cerr})
		}
		return runViewer(r, spawns, notify)
	case !errors.As(err, &notServing):
		return failed(err)
	case readOnly:
		return failed(usageError{fmt.Errorf("--read-only is for a viewer, and %v", err)})
	}
	// Signals before the socket, as for serve; they are acted on below.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// The socket first: a dashboard refused here (another host started
	// meanwhile) leaves nothing in the state directory (SPEC §10).
	sock, err := control.Take(cfg)
	if err != nil {
		return failed(err)
	}
	s, err := supervisor.New(cfg)
	if err != nil {
		_ = sock.Close()
		return failed(err)
	}
	var ended endSignal
	// SIGINT, SIGTERM and SIGHUP end the dashboard like quitting does: the
	// terminal is restored and every running submission terminated. While
	// the pager runs in front, ctrl+c belongs to it (the terminal sends
	// SIGINT to the whole foreground process group, us included). A signal
	// after the screen is gone cuts the grace period of those stops.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var inPager pagerState
	var screenDone atomic.Bool
	go func() {
		for sig := range sigs {
			switch {
			case sig == os.Interrupt && inPager.active():
			case screenDone.Load():
				// The screen is gone and the agents are being stopped:
				// kill what is left now instead of after --grace.
				s.SkipGrace()
			default:
				ended.set(sig)
				cancel()
				// The program waits for the pager in front: end it, or
				// SIGTERM would wait for someone to quit less.
				inPager.stop()
			}
		}
	}()
	srv := sock.Server(s)
	srv.SetKind("dashboard")
	// The socket outlives the screen: it closes after the shutdown below,
	// so a wait in progress gets the final statuses, not an error.
	served := make(chan error, 1)
	hostErrs := make(chan error, 1)
	go func() {
		err := srv.Serve(context.Background())
		if err != nil {
			// On screen while it runs; on stderr and in the exit status
			// after.
			hostErrs <- fmt.Errorf("control socket %s stopped serving (%v): subdash ctl and MCP clients cannot reach this dashboard", srv.Path(), err)
		}
		served <- err
	}()
	// Ask the terminal for its background now, before Bubble Tea reads
	// stdin: a later query would leak the reply into the input.
	styles := theme.New(theme.Detect(os.Stdout))
	err = ui.Run(ctx, s, ui.Options{
		Spawn:        spawns,
		SocketPath:   srv.Path(),
		HostErrors:   hostErrs,
		Styles:       &styles,
		Pager:        func(feed func(io.Writer) error) tea.ExecCommand { return newPager(feed, &inPager) },
		PagerCommand: pagerCommand(),
		Notify:       notify,
		Viewers:      srv.Viewers,
	})
	screenDone.Store(true)
	cancel()
	if n := running(s); n > 0 {
		fmt.Fprintf(os.Stderr, "subdash: stopping %d running agent(s)… (ctrl+c: kill them now)\n", n)
	}
	code := 0
	if err != nil && !errors.Is(err, context.Canceled) {
		code = failed(err)
	}
	if !shutdown(s) {
		code = exitFailure
	}
	if err := srv.Close(); err != nil {
		code = failed(fmt.Errorf("closing the control socket: %v", err))
	}
	select {
	case err := <-served:
		if err != nil {
			code = failed(fmt.Errorf("control socket %s: %v", srv.Path(), err))
		}
	default:
	}
	return ended.status(code)
}

// endSignal remembers the first signal that ended a command.
type endSignal struct{ sig atomic.Int32 }

// set records sig unless a signal was recorded already.
func (e *endSignal) set(sig os.Signal) {
	if n, ok := sig.(syscall.Signal); ok {
		e.sig.CompareAndSwap(0, int32(n))
	}
}

// status returns 128+n when signal n ended the command, else code.
func (e *endSignal) status(code int) int {
	if n := e.sig.Load(); n != 0 {
		return 128 + int(n)
	}
	return code
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

func serve(args []string) int {
	fs := flag.NewFlagSet("subdash serve", flag.ContinueOnError)
	var o supervisor.Options
	commonFlags(fs, &o)
	if err := parse(fs, args, &o); err != nil {
		return failed(err)
	}
	cfg, err := supervisor.Resolve(o, supervisor.SystemEnvironment())
	if err != nil {
		return failed(usageError{err}) // a setting that cannot work as given
	}
	// Signals are ours before the socket is: a signal while the records
	// are restored ends the host once it is up, with its cleanup and
	// 128+n, not by the default action with the socket left behind.
	ctx, ended, stop := notifyEnd()
	defer stop()
	// The socket first: a serve refused because another host serves the
	// directory leaves nothing in the state directory (SPEC §10).
	sock, err := control.Take(cfg)
	if err != nil {
		return failed(err)
	}
	s, err := supervisor.New(cfg)
	if err != nil {
		_ = sock.Close()
		return failed(err)
	}
	srv := sock.Server(s)
	srv.SetKind("serve")
	fmt.Fprintf(os.Stderr, "subdash serve: agent command %s; control socket %s; logs in %s\n",
		s.Config().Shown(), srv.Path(), s.RunDir())
	for _, w := range append(s.Config().Warnings, s.Config().Notes...) {
		fmt.Fprintf(os.Stderr, "subdash serve: %s\n", w)
	}
	// Problems found while serving (a failing --notify-command) have no
	// screen here: they go to stderr.
	warnings := s.Subscribe()
	defer warnings.Close()
	go func() {
		for {
			changes, err := warnings.Next(ctx)
			if err != nil {
				return
			}
			for _, c := range changes {
				for _, w := range c.Warnings {
					fmt.Fprintf(os.Stderr, "subdash serve: %s\n", w)
				}
			}
		}
	}()
	// Agents are stopped before the socket closes, so a wait in progress
	// answers with their final statuses (SPEC §3) instead of an error.
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	// A second signal while the agents are being stopped kills what is
	// left now instead of after --grace.
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(again)
	go func() {
		for range again {
			s.SkipGrace()
		}
	}()
	if n := running(s); n > 0 {
		fmt.Fprintf(os.Stderr, "subdash serve: stopping %d running agent(s)… (ctrl+c: kill them now)\n", n)
	}
	code := 0
	if err != nil {
		code = failed(fmt.Errorf("control socket %s: %v", srv.Path(), err))
	}
	if !shutdown(s) {
		code = exitFailure
	}
	if err := srv.Close(); err != nil {
		code = failed(fmt.Errorf("closing the control socket: %v", err))
	}
	return ended.status(code)
}

// notifyEnd returns a context cancelled by the first SIGINT, SIGTERM or
// SIGHUP, the record of that signal, and a function that stops listening.
func notifyEnd() (context.Context, *endSignal, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ended := &endSignal{}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			ended.set(sig)
			cancel()
		case <-done:
		}
	}()
	return ctx, ended, func() { signal.Stop(sigs); close(done); cancel() }
}

func mcp(args []string) int {
	fs := flag.NewFlagSet("subdash mcp", flag.ContinueOnError)
	fs.SetOutput(os.Stderr) // stdout carries protocol messages only
	var o supervisor.Options
	commonFlags(fs, &o)
	if err := parse(fs, args, &o); err != nil {
		return failed(err)
	}
	if _, err := supervisor.Resolve(o, supervisor.SystemEnvironment()); err != nil {
		return failed(usageError{err})
	}
	ctx, ended, stop := notifyEnd()
	defer stop()
	code := 0
	if err := mcpserver.Run(ctx, o, os.Stdin, os.Stdout, os.Stderr); err != nil && !errors.Is(err, context.Canceled) {
		code = failed(err)
	}
	return ended.status(code)
}

// shutdown terminates every running submission (SPEC §4) before exit and
// reports whether that succeeded; a failure is printed on stderr.
func shutdown(s *supervisor.Supervisor) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "subdash: stopping the agents failed: %v\n", err)
		return false
	}
	return true
}
