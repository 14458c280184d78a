// Package ui is the dashboard: the Bubble Tea model that shows the agents of
// a supervisor, their live output and the operations on them (SPEC §7).
//
// The ui never touches processes or files, and imports the contract
// (supervisor/proto), never the engine: the host dashboard and a viewer
// run the same code over proto's roles (Supervisor). Every call that may
// block is made inside a tea.Cmd, none in Update or View, and supervisor
// changes reach the program through one forwarding goroutine that
// coalesces them to at most one message a frame, each change carrying the
// snapshot of its agent (see Run, Forward). Widgets live in sub-packages
// shaped like the bubbles ones: agenttable, logview and lineinput.
package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/screen"
)

// Supervisor is the one seam between the dashboard and a supervisor: the
// in-process *supervisor.Supervisor (the host dashboard) and a viewer's
// backend (*client.Remote, SPEC §9) both satisfy it, so host and viewer
// run the same ui code. It is the roles of package proto the dashboard
// uses:
//
//   - proto.Viewer answers from memory: HostConfig is read once, in New;
//     Agents in commands and the forwarding goroutine (ChangesMsg carries
//     the snapshots, with each submission's output counts, so Update never
//     asks);
//   - proto.Reader and proto.Operator may block (process groups, files,
//     the socket) and are only called inside commands: the log pane's
//     windows too (Window, Transcript; from < 0 asks for the last n
//     items), fetched one request at a time for what the pane draws
//     (logview.Request).
//
// Stopping the agents when the dashboard quits is not part of it: only a
// host has that (Options.Host). Adding an operation is one method on
// proto.Operator, implemented by the supervisor, plus one endpoint on the
// control socket (server.Server) that its client (client.Client) calls.
type Supervisor interface {
	proto.Viewer
	proto.Reader
	proto.Operator
	proto.MessageFiles
	proto.Searcher
	proto.Differ
}

// Lifecycle stops the agents of a host when its dashboard quits (SPEC §4);
// *supervisor.Supervisor implements it. Its calls do I/O (signals, the
// journal): the dashboard makes them in commands.
type Lifecycle interface {
	// Shutdown terminates every running submission and waits until their
	// process groups are gone or ctx ends.
	Shutdown(ctx context.Context) error
	// SkipGrace makes the stops in progress kill at once (SIGKILL) instead
	// of after the grace period: quitting without waiting.
	SkipGrace()
}

// Backend is a Supervisor that also publishes changes, as Run needs.
type Backend interface {
	Supervisor
	Subscribe() *proto.Subscription
}

// Options configure the dashboard.
type Options struct {
	// Spawn are messages to spawn an agent with at start (--spawn).
	Spawn []string
	// SocketPath is the control socket, shown in the help overlay.
	SocketPath string
	// HostErrors carries errors of the host's other parts that happen
	// while the dashboard runs (the control socket's Serve); each is
	// shown as a note. nil: none.
	HostErrors <-chan error
	// Styles are the colours the dashboard starts with; nil builds them
	// with theme.Detect on stdout. Once the terminal reports its
	// background (Init asks), the dashboard builds them again for it with
	// the same profile (background.go).
	Styles *theme.Styles
	// Pager returns the command that shows what feed writes (e.g. $PAGER
	// reading it on stdin); nil means the pager key reports that none is
	// configured. The ui runs it with tea.Exec and redraws when it ends;
	// feed runs in the pager's goroutine, never in Update, and writes the
	// display lines (from the host's stream for a viewer). The pager
	// cancels feed's ctx once it ends (feed may wait on a host that does
	// not answer); feed also ends when the dashboard does.
	Pager func(feed func(ctx context.Context, w io.Writer) error) tea.ExecCommand
	// Editor returns the command that edits the file at path (e.g.
	// $EDITOR path), for edit-and-resend of a message over 64 KiB (SPEC
	// §10); nil means such a message cannot be edited here (R still
	// resends it). The ui runs it with tea.Exec, after streaming the
	// message into the file, and sends the file when the editor changed it.
	Editor func(path string) tea.ExecCommand
	// PagerCommand is the command line Pager runs (e.g. "less -R"), named
	// in the message when the pager fails; "" leaves it out.
	PagerCommand string
	// Host stops the agents when the dashboard quits: the host
	// dashboard's supervisor. nil for a viewer (SPEC §9), attached to a
	// host: quitting detaches at once, without asking, and stops nothing.
	// (A viewer attached with --read-only says so in its HostConfig: the
	// keys that would change an agent say at once that they are refused.)
	Host Lifecycle
	// Viewers returns how many viewers are attached to this host, named in
	// the quit question; nil means none. It must answer from memory.
	Viewers func() int
	// Now is the clock for elapsed times; nil means time.Now.
	Now func() time.Time
	// FrameInterval is the shortest time between two supervisor event
	// messages; 0 means proto.FrameInterval.
	FrameInterval time.Duration
	// Keys are the dashboard's bindings: the config file's [keys] over
	// SPEC §7's defaults (keymap.KeyMap.Rebind); nil means
	// keymap.DefaultKeyMap. The help, the hints and the widgets follow them.
	Keys *keymap.KeyMap
	// Notify says how this dashboard raises notifications in its terminal
	// (--notify, SPEC §11); the zero value raises none.
	Notify Notify
	// Terminal is where notifications are written, the program's output
	// too when Run is given none; nil in Run means a Terminal on stdout.
	Terminal io.Writer
	// NoMouse turns the mouse off (--mouse=false, SPEC §7): the terminal
	// then reports no click, wheel or drag, and a plain drag selects text
	// as it does outside the dashboard.
	NoMouse bool
	// screen draws the frames of Run's program, nil for a model run
	// otherwise (tests): commands that give the terminal to another
	// program release it (onTerminal).
	screen *screen.Screen
	// ProgramOptions are extra Bubble Tea options (tests pass input and
	// output here).
	ProgramOptions []tea.ProgramOption
}

// ViewerFrameInterval is a viewer's batching interval (SPEC §9,
// proto.ViewerFrameInterval says why).
const ViewerFrameInterval = proto.ViewerFrameInterval

// Run shows the dashboard on the alternate screen until the user quits
// (after the running submissions were stopped) or ctx ends. It returns
// ctx's error when ctx ended it, and the error of stopping the agents when
// that failed. The terminal is restored in every case,
// panics in Update and View included (Bubble Tea recovers them).
func Run(ctx context.Context, s Backend, o Options) error {
	if o.Styles == nil {
		st := theme.New(theme.Detect(os.Stdout, os.Environ()))
		o.Styles = &st
	}
	if o.Terminal == nil {
		o.Terminal = NewTerminal(os.Stdout)
	}
	sub := s.Subscribe()
	defer sub.Close()
	profile := o.Styles.Options.Profile
	if profile == colorprofile.Unknown {
		profile = colorprofile.Detect(o.Terminal, os.Environ())
	}
	// The dashboard's frames are drawn by a screen.Screen as soon as View
	// returns them, not by Bubble Tea's renderer at the ticks of its clock
	// (package screen says why): Bubble Tea reads the keys and runs the
	// model, the Screen owns the terminal's modes and its size.
	tty := terminalFile(o.Terminal)
	scr := screen.New(screen.Options{Out: o.Terminal, TTY: tty, Env: os.Environ(), Profile: profile, Mouse: !o.NoMouse})
	o.screen = scr
	if err := scr.Start(); err != nil {
		_ = scr.Close()
		return err
	}
	// The run's context ends when Run returns (the user quit, or ctx
	// ended): the operations still in flight then end with it.
	rctx, quit := context.WithCancel(ctx)
	defer quit()
	m := New(s, o)
	m.ctx = rctx
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithoutSignalHandler(), tea.WithOutput(o.Terminal), tea.WithoutRenderer(), tea.WithColorProfile(profile)}
	if tty != nil {
		// Bubble Tea without its renderer does not read the terminal's
		// size: its first WindowSizeMsg carries this one, and watchSize
		// the later ones.
		if w, h, err := term.GetSize(tty.Fd()); err == nil {
			opts = append(opts, tea.WithWindowSize(w, h))
		}
	}
	opts = append(opts, o.ProgramOptions...)
	p := tea.NewProgram(onScreen{Model: m, scr: scr}, opts...)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if tty != nil {
		go watchSize(tty, p.Send, fctx.Done())
	}
	var crashed atomic.Value
	go func() {
		// A panic here is not Bubble Tea's to recover: kill the program,
		// and report the panic; the Screen restores the terminal.
		defer func() {
			if r := recover(); r != nil {
				crashed.Store(fmt.Sprint(r))
				p.Kill()
			}
		}()
		Forward(fctx, sub, p.Send, o.FrameInterval)
	}()
	final, err := p.Run()
	cancel()
	if cerr := scr.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if on, ok := final.(onScreen); ok {
		final = on.Model
	}
	if r, ok := crashed.Load().(string); ok {
		return fmt.Errorf("ui: supervisor events: panic: %s", r)
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	if fm, ok := final.(Model); ok && err == nil && fm.shutdownErr != nil {
		return fmt.Errorf("stopping the agents: %w", fm.shutdownErr)
	}
	return err
}

// Events are coalesced supervisor changes; *proto.Subscription
// satisfies it.
type Events interface {
	Ready() <-chan struct{}
	Drain() []proto.Change
}

// Forward is the one goroutine that carries supervisor changes to the
// program: it waits for changes, lets more gather until at least interval
// (0: proto.FrameInterval) has passed since the last message, then sends
// one message holding the changes, each with the snapshot of the agent
// that changed (proto.Change.Info). A flood of output therefore costs at
// most one message (one redraw) per interval, and a snapshot of the agents
// that changed, not of every agent. It returns when ctx ends.
func Forward(ctx context.Context, ev Events, send func(tea.Msg), interval time.Duration) {
	if interval <= 0 {
		interval = proto.FrameInterval
	}
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-ev.Ready():
		}
		if wait := interval - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		changes := ev.Drain()
		if len(changes) == 0 {
			continue
		}
		last = time.Now()
		send(ChangesMsg{Changes: changes})
	}
}

// ChangesMsg carries supervisor changes, each with the snapshot of the
// agent that changed (Info; nil for one forgotten). The model owns the
// slice.
type ChangesMsg struct {
	Changes []proto.Change
}
