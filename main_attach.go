package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/subdash/subdash/internal/signals"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/socket"
	"github.com/subdash/subdash/ui"
)

// viewerFlags are the flags that mean something to a viewer; every other
// flag given to a dashboard that attaches is a host setting, checked
// against the host's (hostSettings).
var viewerFlags = map[string]bool{"dir": true, "socket": true, "read-only": true, "spawn": true, "notify": true, "mouse": true}

// hostSettings maps a host-only flag to the resolved setting it chose, so
// that a viewer given the flag compares its value with the host's (SPEC
// §9: never attach silently to a host that runs another agent command).
// A flag added for a host gets a line here; a flag missing here refuses to
// attach rather than be ignored.
var hostSettings = map[string]func(c wire.Settings) any{
	"command": func(c wire.Settings) any { return c.Command },
	"preset": func(c wire.Settings) any {
		return presetField(c, func(p *wire.Preset) string { return p.Name })
	},
	"preset-args": func(c wire.Settings) any {
		return presetField(c, func(p *wire.Preset) string { return p.Args })
	},
	"max-agents":     func(c wire.Settings) any { return c.MaxAgents },
	"state-dir":      func(c wire.Settings) any { return c.StateDir },
	"grace":          func(c wire.Settings) any { return c.Grace },
	"scrollback":     func(c wire.Settings) any { return c.Scrollback },
	"allow-nested":   func(c wire.Settings) any { return c.AllowNested },
	"max-depth":      func(c wire.Settings) any { return c.MaxDepth },
	"timeout":        func(c wire.Settings) any { return c.Timeout },
	"restore-window": func(c wire.Settings) any { return c.RestoreWindow },
	"log-retention":  func(c wire.Settings) any { return c.LogRetention },
	"approvals":      func(c wire.Settings) any { return c.Preset != nil && c.Preset.Approvals },
	"line-memory":    func(c wire.Settings) any { return c.LineMemory },
	"max-log-size":   func(c wire.Settings) any { return c.MaxLogSize },
	"notify-command": func(c wire.Settings) any { return c.NotifyCommand },
	"track-changes":  func(c wire.Settings) any { return c.TrackChanges },
	"runner": func(c wire.Settings) any {
		if c.RunnerName == "" {
			return runner.Local
		}
		return c.RunnerName
	},
	"kube-namespace":     func(c wire.Settings) any { return c.Kube.Namespace },
	"kube-image":         func(c wire.Settings) any { return c.Kube.Image },
	"kube-node":          func(c wire.Settings) any { return c.Kube.Node },
	"kube-env":           func(c wire.Settings) any { return c.Kube.Env },
	"kube-secret":        func(c wire.Settings) any { return c.Kube.Secrets },
	"kube-start-timeout": func(c wire.Settings) any { return c.Kube.StartTimeout },
}

func presetField(c wire.Settings, f func(*wire.Preset) string) string {
	if c.Preset == nil {
		return ""
	}
	return f(c.Preset)
}

// hostConflict returns an error naming the first host-only flag in set
// whose value (resolved into mine) differs from the host's; nil when every
// one agrees.
func hostConflict(set map[string]string, mine, host wire.Settings, info proto.Info) error {
	for name, given := range set {
		if viewerFlags[name] {
			continue
		}
		get, ok := hostSettings[name]
		if !ok {
			return fmt.Errorf("subdash (pid %d) serves %s; --%s is a host setting this viewer cannot check against it: leave it out to attach, or quit that host first",
				info.PID, info.Dir, name)
		}
		if !reflect.DeepEqual(get(mine), get(host)) {
			return fmt.Errorf("subdash (pid %d) serves %s with %s; this command line says --%s %s: leave the flag out to attach to it, or quit that host first",
				info.PID, info.Dir, hostSetting(name, host, get), name, given)
		}
	}
	return nil
}

// hostSetting is the host's setting of flag name for a message, as the
// flags that chose it: a host running a preset has no --command of its own,
// so for --command it names the preset.
func hostSetting(name string, host wire.Settings, get func(wire.Settings) any) string {
	if name == "command" {
		if p := host.Preset; p != nil {
			if p.Args != "" {
				return fmt.Sprintf("--preset %s --preset-args %q", p.Name, p.Args)
			}
			return "--preset " + p.Name
		}
		return "--command " + describeSetting(host.Shown())
	}
	return "--" + name + " " + describeSetting(get(host))
}

// describeSetting prints a setting for a message ("" as "(none)").
func describeSetting(v any) string {
	if s, ok := v.(string); ok && s == "" {
		return "(none)"
	}
	return fmt.Sprint(v)
}

// given returns the flags set on fs's command line with their text (not
// the config file's: config.Apply leaves a flag it sets unchanged).
func given(fs *pflag.FlagSet) map[string]string {
	set := map[string]string{}
	fs.Visit(func(f *pflag.Flag) { set[f.Name] = f.Value.String() })
	return set
}

// attach is `subdash attach [--dir D | --socket S | ssh://… | @NAME | @all]…
// [--read-only]`: a viewer of the host serving the directory (SPEC §9),
// here or on another machine over ssh, never a host itself; given more
// than one host, a viewer of them all (attachHosts). args are the
// arguments: ssh:// targets and the config file's [[hosts]] names.
func attach(cmd *cobra.Command, af *attachFlags, args []string) int {
	a, err := applyConfig(cmd)
	if err != nil {
		return failed(err)
	}
	lk := lookOf(a.File, af.mouse)
	notify, err := ui.ResolveNotify(af.notify, os.Getenv)
	if err != nil {
		return failed(usageError{a.Blame(err)})
	}
	ts, err := viewTargets(af, args, a.File.Hosts, a.File.Path)
	if err != nil {
		return failed(err)
	}
	tm := takeTerminal()
	defer tm.release()
	switch {
	case len(ts) > 1:
		return attachHosts(tm, ts, af.spawns, notify, lk)
	case len(ts) == 1 && ts[0].ssh != nil:
		return attachRemote(tm, *ts[0].ssh, ts[0].readOnly, af.spawns, notify, lk)
	}
	var o supervisor.Options
	readOnly := af.readOnly
	if len(ts) == 1 {
		o, readOnly = supervisor.Options{Dir: ts[0].dir, Socket: ts[0].socket}, ts[0].readOnly
	}
	socket, dir, err := viewerSocket(o)
	if err != nil {
		return failed(err)
	}
	r, err := attachTo(tm.sig.Context(), socket, dir, readOnly)
	if err != nil {
		var ns *client.NotServingError
		if errors.As(err, &ns) {
			err = fmt.Errorf("%v; to keep agents independent of any screen, run `subdash serve` there and attach to it", err)
		}
		return tm.sig.Status(failed(err))
	}
	return runViewer(tm, r, remoteSocket(r), af.spawns, notify, lk)
}

// slowAttach is how long attaching may take before the terminal is told
// what it waits for (a stopped or busy host answers only at the deadline).
const slowAttach = time.Second

// attachTo is client.Attach, saying on stderr what it waits for once it
// takes longer than slowAttach, so a terminal is never blank and silent
// until the deadline (SPEC §6); ctx ends it (ctrl+c gives up).
func attachTo(ctx context.Context, socket, dir string, readOnly bool) (*client.Remote, error) {
	var mu sync.Mutex // once attached, nothing more is written: the screen is the dashboard's
	attached := false
	t := time.AfterFunc(slowAttach, func() {
		mu.Lock()
		defer mu.Unlock()
		if !attached {
			fmt.Fprintf(os.Stderr, "subdash: waiting for the host on %s to answer (at most %s; ctrl+c gives up)\n", socket, client.CallTimeout)
		}
	})
	r, err := client.Attach(ctx, socket, dir, readOnly)
	mu.Lock()
	attached = true
	mu.Unlock()
	t.Stop()
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("attaching to the host on %s was interrupted", socket)
	}
	return r, err
}

// viewerSocket returns the socket a viewer attaches to by SPEC §6's rule
// (socket.Resolve); dir is "" when the socket was named. A --dir that is
// not a directory is a usage error.
func viewerSocket(o supervisor.Options) (sock, dir string, err error) {
	if sock, named := socket.Resolve(o.Socket, "", os.Getenv, os.Getuid()); named {
		return sock, "", nil
	}
	if dir, err = filepath.Abs(strings.TrimSpace(o.Dir)); err != nil {
		return "", "", fmt.Errorf("working directory: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", "", usageError{fmt.Errorf("--dir %s is not a directory: give the folder whose host to attach to", dir)}
	}
	return socket.Default(dir, os.Getenv("XDG_RUNTIME_DIR"), os.Getuid()), dir, nil
}

// viewerBackend is what a viewer shows: the Remote of one host, or the
// Hosts of several (SPEC §9).
type viewerBackend interface {
	ui.Backend
	// Ended is closed when the viewer's host (every host, for several)
	// is gone for good; Err says why.
	Ended() <-chan struct{}
	Err() error
	// Detach ends the event streams; the hosts go on.
	Detach()
}

// remoteSocket names r's control socket for the help overlay, and where
// it is for a host on another machine.
func remoteSocket(r *client.Remote) string {
	socket := r.Info().Socket
	if where := r.HostConfig().Where; where != "" {
		socket = fmt.Sprintf("%s (socket %s there)", where, socket)
	}
	return socket
}

// terminal is what a command that draws the dashboard (the host
// dashboard or a viewer) takes at its start: the process's signals
// (package signals), of which SIGINT belongs to the pager while it runs in
// front (the terminal sends it to the whole foreground process group, us
// included), and that pager. Release it as the command returns.
type terminal struct {
	sig     *signals.Taken
	inPager *pagerState
}

// takeTerminal takes the signals of a command that draws the dashboard.
func takeTerminal() terminal {
	inPager := &pagerState{}
	sig := signals.Take(func(s os.Signal) bool { return s == os.Interrupt && inPager.active() })
	// The program waits for the pager in front: end it, or SIGTERM would
	// wait for someone to quit less.
	context.AfterFunc(sig.Context(), inPager.stop)
	return terminal{sig: sig, inPager: inPager}
}

// release gives the signals back.
func (tm terminal) release() { tm.sig.Release() }

// runViewer shows the dashboard over r until the user quits (detaching at
// once), a signal comes, or the host ends (every host, for several); then
// it says why it ended and returns the exit status (128+n after signal n,
// SPEC §6). socket names the control sockets in the help.
func runViewer(tm terminal, r viewerBackend, socket string, spawns []string, notify ui.Notify, lk look) int {
	if os.Getenv("GOMAXPROCS") == "" {
		// A viewer is one front-end: its goroutines (the event stream, the
		// batching, Bubble Tea's loop and renderer) hand work to each other
		// many times a frame, and with a second P each hand-off wakes
		// another thread: on one P it costs less CPU per GB in floods and
		// with many agents (BENCHMARKS.md, "The tuning against the plain
		// code"). GOMAXPROCS set by the user wins.
		runtime.GOMAXPROCS(1)
	}
	ctx, cancel := context.WithCancel(tm.sig.Context())
	defer cancel()
	go func() {
		select {
		case <-r.Ended():
			cancel()
			tm.inPager.stop()
		case <-ctx.Done():
		}
	}()
	err := ui.Run(ctx, r, ui.Options{
		Spawn:         spawns,
		SocketPath:    socket,
		Pager:         func(feed func(context.Context, io.Writer) error) tea.ExecCommand { return newPager(feed, tm.inPager) },
		Editor:        newEditor,
		PagerCommand:  pagerCommand(),
		FrameInterval: ui.ViewerFrameInterval,
		Notify:        notify,
		Keys:          &lk.keys,
		Styles:        &lk.styles,
		NoMouse:       !lk.mouse,
	})
	r.Detach()
	code := 0
	if herr := r.Err(); herr != nil {
		fmt.Fprintf(os.Stderr, "subdash: %v; the viewer closed (the terminal is yours again)\n", herr)
		code = 1
	} else if err != nil && !errors.Is(err, context.Canceled) {
		code = failed(err)
	}
	return tm.sig.Status(code)
}
