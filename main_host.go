package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control"
	"github.com/subdash/subdash/supervisor/host"
	"github.com/subdash/subdash/supervisor/mcpserver"
	"github.com/subdash/subdash/supervisor/socket"
	"github.com/subdash/subdash/ui"
)

// The hosts of SPEC §1: the dashboard (or its viewer, where a host serves
// already), `subdash serve` and `subdash mcp`, wired to package host, which
// starts and stops each of them.

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
	if _, named := socket.Resolve(set["socket"], "", os.Getenv, 0); named {
		dir = ""
	}
	r, err := attachTo(cfg.Socket, dir, readOnly)
	var notServing *control.NotServingError
	switch {
	case err == nil:
		if cerr := hostConflict(set, control.SettingsOf(cfg), r.Settings(), r.Info()); cerr != nil {
			r.Detach()
			return failed(usageError{cerr})
		}
		return runViewer(r, spawns, notify)
	case !errors.As(err, &notServing):
		return failed(err)
	case readOnly:
		return failed(usageError{fmt.Errorf("--read-only is for a viewer, and %v", err)})
	}
	return hostDashboard(cfg, spawns, notify)
}

// hostDashboard runs the host dashboard (SPEC §7) until the user quits or
// a signal ends it, then stops the host: every agent, then the socket.
// It returns the exit status.
func hostDashboard(cfg supervisor.Config, spawns []string, notify ui.Notify) int {
	// While the pager runs in front, ctrl+c belongs to it (the terminal
	// sends SIGINT to the whole foreground process group, us included).
	var inPager pagerState
	sig := host.TakeSignals(func(s os.Signal) bool { return s == os.Interrupt && inPager.active() })
	defer sig.Release()
	// The program waits for the pager in front: end it, or SIGTERM would
	// wait for someone to quit less.
	context.AfterFunc(sig.Context(), inPager.stop)
	h, err := host.Start(cfg, host.Options{Kind: "dashboard", Signals: sig, Stderr: os.Stderr, Name: "subdash", AdaptProcs: true})
	if err != nil {
		return failed(err)
	}
	err = ui.Run(sig.Context(), h.Supervisor(), ui.Options{
		Spawn:        spawns,
		SocketPath:   h.Socket(),
		HostErrors:   h.Failed(),
		Pager:        func(feed func(io.Writer) error) tea.ExecCommand { return newPager(feed, &inPager) },
		Editor:       newEditor,
		PagerCommand: pagerCommand(),
		Notify:       notify,
		Viewers:      h.Viewers,
		Host:         h.Supervisor(),
	})
	code := 0
	if err != nil && !errors.Is(err, context.Canceled) {
		code = failed(err)
	}
	if err := h.Stop(); err != nil {
		code = failed(err)
	}
	return sig.Status(code)
}

// serve runs `subdash serve`: a host without a screen, until a signal or
// the failure of its control socket. It returns the exit status.
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
	sig := host.TakeSignals(nil)
	defer sig.Release()
	h, err := host.Start(cfg, host.Options{Kind: "serve", Signals: sig, Stderr: os.Stderr, Name: "subdash serve", AdaptProcs: true})
	if err != nil {
		return failed(err)
	}
	s := h.Supervisor()
	fmt.Fprintf(os.Stderr, "subdash serve: agent command %s; control socket %s; logs in %s\n",
		s.Config().Shown(), h.Socket(), s.RunDir())
	say := func(msg string) { fmt.Fprintf(os.Stderr, "subdash serve: %s\n", msg) }
	h.Forward(say, say)
	select {
	case <-sig.Context().Done():
	case <-h.Failed(): //nolint:errcheck // Stop returns it
	}
	code := 0
	if err := h.Stop(); err != nil {
		code = failed(err)
	}
	return sig.Status(code)
}

// mcp runs `subdash mcp` (mcpserver.Run) until stdin closes or a signal
// ends it. It returns the exit status.
func mcp(args []string) int {
	fs := flag.NewFlagSet("subdash mcp", flag.ContinueOnError)
	fs.SetOutput(os.Stderr) // stdout carries protocol messages only
	var o supervisor.Options
	commonFlags(fs, &o)
	tools := fs.String("tools", "", "the tool family: seed (spawn_agent, send_input, resume_agent, wait, close_agent, list_agents) or multi-agent (Memo 0.9's spawn_agent, send_message, followup_task, wait_agent, interrupt_agent, list_agents) (env SUBDASH_MCP_TOOLS; default seed)")
	target := hostFlag(fs)
	if err := parse(fs, args, &o); err != nil {
		return failed(err)
	}
	if *tools == "" {
		*tools = os.Getenv("SUBDASH_MCP_TOOLS")
	}
	family, err := mcpserver.ParseFamily(*tools)
	if err != nil {
		return failed(usageError{err})
	}
	if *target != "" {
		return mcpRemote(*target, family, given(fs))
	}
	if _, err := supervisor.Resolve(o, supervisor.SystemEnvironment()); err != nil {
		return failed(usageError{err})
	}
	sig := host.TakeSignals(nil)
	defer sig.Release()
	code := 0
	if err := mcpserver.Run(sig.Context(), o, family, os.Stdin, os.Stdout, os.Stderr, sig); err != nil && !errors.Is(err, context.Canceled) {
		code = failed(err)
	}
	return sig.Status(code)
}
