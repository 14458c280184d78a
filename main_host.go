package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/subdash/subdash/internal/config"
	"github.com/subdash/subdash/internal/signals"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/server"
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
func dashboard(cmd *cobra.Command, hf *hostFlags, df *dashFlags) int {
	cfg, a, err := resolve(cmd, hf)
	if err != nil {
		return failed(err)
	}
	notify, err := ui.ResolveNotify(df.notify, os.Getenv)
	if err != nil {
		return failed(usageError{a.Blame(err)})
	}
	lk := lookOf(a.File, df.mouse)
	// Where a host serves the directory, the dashboard is its viewer
	// (SPEC §9); only the command line's flags are checked against the
	// host's, not the config file's, which are this user's defaults for
	// the hosts they start.
	set := given(cmd.Flags())
	readOnly := df.readOnly
	dir := cfg.Dir
	if _, named := socket.Resolve(set["socket"], "", os.Getenv, 0); named {
		dir = ""
	}
	tm := takeTerminal()
	defer tm.release()
	r, err := attachTo(tm.sig.Context(), cfg.Socket, dir, readOnly)
	var notServing *client.NotServingError
	switch {
	case err == nil:
		if cerr := hostConflict(set, server.SettingsOf(cfg), r.Settings(), r.Info()); cerr != nil {
			r.Detach()
			return failed(usageError{cerr})
		}
		return runViewer(tm, r, remoteSocket(r), df.spawns, notify, lk)
	case !errors.As(err, &notServing):
		return tm.sig.Status(failed(err))
	case readOnly:
		return failed(usageError{a.Blame(fmt.Errorf("--read-only is for a viewer, and %v", err))})
	}
	return hostDashboard(tm, cfg, df.spawns, notify, lk)
}

// hostDashboard runs the host dashboard (SPEC §7) until the user quits or
// a signal ends it, then stops the host: every agent, then the socket.
// It returns the exit status.
func hostDashboard(tm terminal, cfg supervisor.Config, spawns []string, notify ui.Notify, lk look) int {
	sig := tm.sig
	h, err := host.Start(cfg, host.Options{Kind: "dashboard", Signals: sig, Stderr: os.Stderr, Name: "subdash"})
	if err != nil {
		return sig.Status(failed(err))
	}
	err = ui.Run(sig.Context(), h.Supervisor(), ui.Options{
		Spawn:        spawns,
		SocketPath:   h.Socket(),
		HostErrors:   h.Failed(),
		Pager:        func(feed func(context.Context, io.Writer) error) tea.ExecCommand { return newPager(feed, tm.inPager) },
		Editor:       newEditor,
		PagerCommand: pagerCommand(),
		Notify:       notify,
		Keys:         &lk.keys,
		Styles:       &lk.styles,
		NoMouse:      !lk.mouse,
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
func serve(cmd *cobra.Command, hf *hostFlags) int {
	cfg, _, err := resolve(cmd, hf)
	if err != nil {
		return failed(err)
	}
	sig := signals.Take(nil)
	defer sig.Release()
	h, err := host.Start(cfg, host.Options{Kind: "serve", Signals: sig, Stderr: os.Stderr, Name: "subdash serve"})
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
// ends it. It returns the exit status. What it says goes to stderr:
// stdout carries protocol messages only.
func mcp(cmd *cobra.Command, hf *hostFlags, mf *mcpFlags) int {
	a, err := applyConfig(cmd)
	if err != nil {
		return failed(err)
	}
	family, err := mcpTools(cmd, mf, a)
	if err != nil {
		return failed(err)
	}
	if mf.host != "" {
		return mcpRemote(mf.host, family, given(cmd.Flags()))
	}
	// mcpserver.Run resolves the options again, and hosts only where no
	// host serves: this is the check of the command line and the file.
	if _, err := resolveApplied(hf, a); err != nil {
		return failed(err)
	}
	for _, w := range a.Warnings {
		fmt.Fprintf(os.Stderr, "subdash mcp: %s\n", w)
	}
	o := hf.options()
	sig := signals.Take(nil)
	defer sig.Release()
	code := 0
	if err := mcpserver.Run(sig.Context(), o, family, os.Stdin, os.Stdout, os.Stderr, sig); err != nil && !errors.Is(err, context.Canceled) {
		code = failed(err)
	}
	return sig.Status(code)
}

// mcpTools returns the tool family of --tools, else SUBDASH_MCP_TOOLS,
// else the config file's (a), else seed. An invalid
// SUBDASH_MCP_TOOLS is a warning on stderr and the next source applies.
func mcpTools(cmd *cobra.Command, mf *mcpFlags, a *config.Applied) (mcpserver.Family, error) {
	tools := mf.tools
	if !cmd.Flags().Changed("tools") && a.Source("tools").Kind != config.FromFile {
		if v := strings.TrimSpace(os.Getenv("SUBDASH_MCP_TOOLS")); v != "" {
			if checkTools(v) == nil {
				tools = v
			} else {
				fmt.Fprintf(os.Stderr, "subdash mcp: SUBDASH_MCP_TOOLS=%q %v; using %s\n", v, checkTools(v), mcpserver.FamilySeed)
			}
		}
	}
	family, err := mcpserver.ParseFamily(tools)
	if err != nil {
		return family, usageError{a.Blame(err)}
	}
	return family, nil
}
