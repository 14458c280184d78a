package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/subdash/subdash/internal/signals"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/mcpserver"
	"github.com/subdash/subdash/supervisor/sshlink"
	"github.com/subdash/subdash/ui"
)

// Hosts on another machine, over the user's own ssh (SPEC §9): `subdash
// attach ssh://…` and `subdash mcp --host ssh://…` (`subdash ctl --host`
// is package ctl's).

// oneTarget parses the one target of a command line; an error (a
// usageError) for none valid or more than one.
func oneTarget(targets []string) (sshlink.Target, error) {
	if len(targets) > 1 {
		return sshlink.Target{}, usageError{fmt.Errorf("give one host, not %d (%s): one dashboard shows one host; open a terminal for each", len(targets), strings.Join(targets, " "))}
	}
	t, err := sshlink.ParseTarget(targets[0])
	if err != nil {
		return t, usageError{err}
	}
	return t, nil
}

// linkOptions are the ssh link's options for this binary: batch for
// programs (ctl, mcp), prompts on the terminal for attach.
func linkOptions(batch bool) sshlink.Options {
	o := sshlink.Options{Batch: batch, Protocol: wire.Protocol, Version: wire.Version()}
	if !batch && term.IsTerminal(os.Stdin.Fd()) {
		o.Terminal = os.Stdin
	}
	return o
}

// connectTarget makes the link to t, saying on stderr what it waits for
// once ssh has logged in and a step takes longer than slowAttach (the
// prompts before that are ssh's own); ctx ends it (the command's signals:
// ctrl+c gives up).
func connectTarget(ctx context.Context, t sshlink.Target, o sshlink.Options) (*sshlink.Carrier, error) {
	var mu sync.Mutex // once connected, nothing more is written: the screen is the dashboard's
	done := false
	t0 := time.AfterFunc(slowAttach, func() {
		mu.Lock()
		defer mu.Unlock()
		if !done && o.Terminal == nil {
			fmt.Fprintf(os.Stderr, "subdash: connecting to %s (ssh's own ConnectTimeout, then at most %s a step; ctrl+c gives up)\n", t.Name(), sshlink.DefaultCallTimeout)
		}
	})
	c, err := sshlink.Connect(ctx, t, o)
	mu.Lock()
	done = true
	mu.Unlock()
	t0.Stop()
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("%s: connecting was interrupted", t.Name())
	}
	return c, err
}

// attachRemote is `subdash attach ssh://…`: the dashboard of the host
// serving the target's folder on that machine, through an ssh link made
// before the dashboard takes the terminal (so ssh's prompts work), which
// is made again without prompts when it drops (for about 30 s).
func attachRemote(tm terminal, t sshlink.Target, readOnly bool, spawns []string, notify ui.Notify, lk look) int {
	c, err := connectTarget(tm.sig.Context(), t, linkOptions(false))
	if err != nil {
		return tm.sig.Status(failed(err))
	}
	defer c.Close()
	cl := client.NewClientVia(t.Name(), c.ForViewer().DialContext).WithHostInfo(c.Link().Info())
	ctx, cancel := context.WithTimeout(tm.sig.Context(), client.CallTimeout+client.CallTimeout)
	r, err := client.AttachVia(ctx, cl, t.Name(), readOnly, c)
	cancel()
	if err != nil {
		return tm.sig.Status(failed(fmt.Errorf("%s: %v", t.Name(), err)))
	}
	return runViewer(tm, r, remoteSocket(r), spawns, notify, lk)
}

// mcpRemote is `subdash mcp --host ssh://…`: the MCP server of the host
// serving the target's folder on that machine, never a host of its own
// (the agents would run on the wrong machine). set are the flags given
// besides --host: host settings mean nothing here and are refused.
func mcpRemote(target string, family mcpserver.Family, set map[string]string) int {
	for name := range set {
		if name != "host" && name != "tools" {
			return failed(usageError{fmt.Errorf("--%s is a setting of a host, and with --host the host there runs with its own: leave it out", name)})
		}
	}
	t, err := oneTarget([]string{target})
	if err != nil {
		return failed(err)
	}
	sig := signals.Take(nil)
	defer sig.Release()
	c, err := connectTarget(sig.Context(), t, linkOptions(true))
	if err != nil {
		return sig.Status(failed(err))
	}
	defer c.Close()
	collab := strings.TrimSpace(os.Getenv("MEMO_ENABLE_COLLAB_TOOLS")) != "0"
	cl := client.NewClientVia(t.Name(), c.DialContext).WithHostInfo(c.Link().Info()).WithOrigin("mcp")
	code := 0
	if err := mcpserver.RunVia(sig.Context(), cl, t.Name(), family, collab, os.Stdin, os.Stdout, os.Stderr); err != nil && !errors.Is(err, context.Canceled) {
		code = failed(err)
	}
	return sig.Status(code)
}
