// Command subdash is a terminal dashboard for supervising subagents: child
// runs of an agent CLI, each on one scoped task, shown side by side with
// their live output, with key bindings and a control socket, a `ctl` command
// line and an MCP server to spawn, send to, interrupt, close and resume them.
//
// Usage:
//
//	subdash [flags]              the dashboard
//	subdash serve [flags]        the same supervisor without a screen
//	subdash ctl <op> [args]      a client of the control socket
//	subdash mcp [flags]          an MCP server on stdio
//	subdash agent [--pace D]     the built-in audit agent (reads its task on stdin)
//
// This file holds flags, environment, terminal set-up and wiring only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/builtin"
	"github.com/subdash/subdash/supervisor/control"
	"github.com/subdash/subdash/supervisor/mcpserver"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "agent":
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			var ended endSignal
			go func() {
				sig := <-sigs
				ended.set(sig)
				cancel(fmt.Errorf("%s received", unix.SignalName(sig.(syscall.Signal))))
			}()
			dir, _ := os.Getwd()
			code := builtin.Run(ctx, os.Stdin, os.Stdout, os.Stderr, dir, args[1:])
			return ended.status(code)
		case "ctl":
			return control.Ctl(args[1:], os.Stdin, os.Stdout, os.Stderr)
		case "serve":
			return serve(args[1:])
		case "mcp":
			return mcp(args[1:])
		case "attach":
			return attach(args[1:])
		case "help", "-h", "-help", "--help":
			fs, _, _ := dashboardFlags()
			fs.SetOutput(os.Stdout)
			fs.Usage()
			return 0
		}
	}
	return dashboard(args)
}

// stringList is a repeatable string flag.
type stringList []string

// String joins the values, for flag's help output.
func (l *stringList) String() string { return strings.Join(*l, ", ") }

// Set appends one value.
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// commonFlags declares the flags of SPEC §2 shared by the dashboard, serve
// and mcp.
func commonFlags(fs *flag.FlagSet, o *supervisor.Options) {
	fs.StringVar(&o.Command, "command", "", "agent command run with /bin/sh -c for every submission (env MEMO_SUBAGENT_COMMAND)")
	fs.StringVar(&o.Preset, "preset", "", "agent CLI preset: "+strings.Join(supervisor.Presets, ", ")+" (env SUBDASH_PRESET)")
	fs.StringVar(&o.PresetArgs, "preset-args", "", "extra arguments appended to the preset's command")
	fs.IntVar(&o.MaxAgents, "max-agents", 0, "maximum running agents (env MEMO_SUBAGENT_MAX_AGENTS; default 4)")
	fs.StringVar(&o.Dir, "dir", "", "working directory of agents (default: current directory)")
	fs.StringVar(&o.StateDir, "state-dir", "", "state directory for logs and the journal (env SUBDASH_STATE_DIR)")
	fs.StringVar(&o.Socket, "socket", "", "control socket path (env SUBDASH_SOCKET)")
	fs.DurationVar(&o.Grace, "grace", supervisor.DefaultGrace, "grace period between SIGTERM and SIGKILL")
	fs.IntVar(&o.Scrollback, "scrollback", supervisor.DefaultScrollback, "display lines kept in memory per submission")
	fs.IntVar(&o.LineMemory, "line-memory", supervisor.DefaultLineMemory>>20, "MiB of display lines kept in memory by all submissions together; finished ones give theirs back first (-1: no limit)")
	fs.BoolVar(&o.AllowNested, "allow-nested", false, "let subagents spawn subagents (keep MEMO_ENABLE_COLLAB_TOOLS)")
	fs.DurationVar(&o.Timeout, "timeout", 0, "end a submission that runs longer than this (0: no limit)")
	fs.StringVar(&o.Runner, "runner", supervisor.RunnerLocal, "where submissions run: local or kubernetes (SPEC §13; kubernetes needs a binary built with -tags kube)")
	fs.StringVar(&o.Kube.Namespace, "kube-namespace", "", "Kubernetes namespace of the agents' pods (default: the kubeconfig's)")
	fs.StringVar(&o.Kube.Image, "kube-image", "", "container image of the agents' pods, with the agent command and /bin/sh (required with --runner kubernetes)")
	fs.StringVar(&o.Kube.Node, "kube-node", "", "run every agent's pod on this node")
	fs.Var((*stringList)(&o.Kube.Env), "kube-env", "copy this variable of the host's environment into the pods (repeatable)")
	fs.Var((*stringList)(&o.Kube.Secrets), "kube-secret", "mount this Secret's keys as environment variables of the pods (repeatable)")
	fs.DurationVar(&o.Kube.StartTimeout, "kube-start-timeout", supervisor.DefaultKubeStartTimeout, "an agent's pod that does not run within this makes its submission errored with the cluster's reason")
	fs.Var(durationFlag{&o.RestoreWindow, supervisor.DefaultRestoreWindow}, "restore-window", "restore the agents of earlier runs updated within this (7d, 36h; 0: none)")
	fs.Var(durationFlag{&o.LogRetention, supervisor.DefaultLogRetention}, "log-retention", "at start, remove this directory's runs (logs, journal) older than this, never those of restored agents (30d; 0: keep all)")
	fs.BoolVar(&o.Approvals, "approvals", false, "relay the claude preset's tool permission requests to you (answer with y/Y/d or subdash ctl approve/deny)")
	fs.StringVar(&o.NotifyCommand, "notify-command", "", "shell command the host runs once each time an agent needs you, with SUBDASH_AGENT_ID, SUBDASH_STATUS and SUBDASH_MESSAGE in its environment")
}

// durationFlag is a duration flag that takes days ("7d") as well as Go
// durations, and leaves its option nil (the default) when not given.
type durationFlag struct {
	p   **time.Duration
	def time.Duration
}

// String shows the value, or the default, in days where whole.
func (f durationFlag) String() string {
	if f.p == nil || *f.p == nil {
		return supervisor.FormatDuration(f.def)
	}
	return supervisor.FormatDuration(**f.p)
}

// Set parses a duration ("7d", "36h", "0").
func (f durationFlag) Set(v string) error {
	d, err := supervisor.ParseDuration(v)
	if err != nil {
		return err
	}
	*f.p = &d
	return nil
}

// parse parses args into options, rejecting an invalid --max-agents. Every
// error but flag.ErrHelp is a usageError.
func parse(fs *flag.FlagSet, args []string, o *supervisor.Options) error {
	err := parseArgs(fs, args, o)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return usageError{err}
	}
	return err
}

func parseArgs(fs *flag.FlagSet, args []string, o *supervisor.Options) error {
	// The flag package would print the error and the whole usage; say the
	// error once, with where to read more, instead. -h still prints usage.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return err
	}
	if err != nil {
		return fmt.Errorf("%v; see %s --help", err, fs.Name())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case set["max-agents"] && o.MaxAgents < 1:
		return fmt.Errorf("invalid --max-agents %d: must be a positive number", o.MaxAgents)
	case set["scrollback"] && o.Scrollback < 1:
		return fmt.Errorf("invalid --scrollback %d: must be a positive number of lines", o.Scrollback)
	case set["command"] && strings.TrimSpace(o.Command) == "":
		return fmt.Errorf("--command is empty; give the agent command to run, or leave the flag out to use the default")
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q; messages are given with --spawn", fs.Arg(0))
	}
	return nil
}

func newSupervisor(o supervisor.Options) (*supervisor.Supervisor, error) {
	cfg, err := supervisor.Resolve(o, supervisor.SystemEnvironment())
	if err != nil {
		return nil, usageError{err} // a setting that cannot work as given
	}
	return supervisor.New(cfg)
}

// dashboardFlags declares the dashboard's flags: SPEC §2's and --spawn.
func dashboardFlags() (*flag.FlagSet, *supervisor.Options, *stringList) {
	fs := flag.NewFlagSet("subdash", flag.ContinueOnError)
	fs.Usage = func() { usage(fs.Output()); fs.PrintDefaults() }
	var o supervisor.Options
	var spawns stringList
	commonFlags(fs, &o)
	fs.Var(&spawns, "spawn", "spawn an agent with this message at start (repeatable)")
	fs.String("notify", "auto", "notifications in this terminal when an agent needs you: auto (BEL and a desktop notification, OSC 9 or 777), bell, osc, off")
	fs.Bool("read-only", false, "as a viewer of a host already serving the directory: change nothing")
	return fs, &o, &spawns
}

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
	r, err := control.Attach(context.Background(), cfg.Socket, dir, readOnly)
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
	s, err := supervisor.New(cfg)
	if err != nil {
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
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
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
	srv, err := control.Listen(s)
	if err != nil {
		_ = s.Shutdown(context.Background())
		return failed(err)
	}
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

// Exit statuses of every subdash command (SPEC §6): 0 on success, 1 for a
// failure at run time, 2 for a usage error, 128+n when ended by signal n
// (after the terminal was restored and every agent stopped).
const (
	exitFailure = 1
	exitUsage   = 2
)

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

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ error }

// Unwrap returns the mistake itself, for errors.Is and errors.As.
func (e usageError) Unwrap() error { return e.error }

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

// pager runs $PAGER (default "less -R") on what the dashboard feeds it for its
// pager key, through /bin/sh so that PAGER may hold arguments. The pager
// reads the log from its stdin, as display lines (termtext.WriteLines): SGR
// kept unless NO_COLOR, every other escape sequence removed, so that no
// pager, not even PAGER=cat, hands an agent's title, mouse or alternate
// screen sequences to the terminal. Pagers read their keys from the
// terminal (/dev/tty) when stdin is a pipe. inPager holds it while it runs.
type pager struct {
	cmd     *exec.Cmd
	feed    func(io.Writer) error
	inPager *pagerState
}

// pagerState is the pager running in front of the dashboard, if any.
type pagerState struct{ proc atomic.Pointer[os.Process] }

// active reports whether a pager runs.
func (s *pagerState) active() bool { return s.proc.Load() != nil }

// stop ends the running pager, if any: SIGTERM to the shell that runs
// $PAGER and to everything it started (the pager shares the dashboard's
// process group, the terminal's foreground one, so it cannot be signalled
// as a group of its own).
func (s *pagerState) stop() {
	p := s.proc.Load()
	if p == nil {
		return
	}
	for _, pid := range supervisor.Descendants(p.Pid) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	_ = p.Signal(syscall.SIGTERM)
}

func newPager(feed func(io.Writer) error, inPager *pagerState) *pager {
	return &pager{cmd: exec.Command("/bin/sh", "-c", pagerCommand()), feed: feed, inPager: inPager}
}

// pagerCommand returns the pager's command line: $PAGER, or "less -R".
func pagerCommand() string {
	if p := strings.TrimSpace(os.Getenv("PAGER")); p != "" {
		return p
	}
	return "less -R"
}

// Run runs the pager in front of the dashboard (tea.ExecCommand), feeding
// it the log until it ends or stops reading.
func (p *pager) Run() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	p.cmd.Stdin = r
	if err := p.cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return err
	}
	r.Close() // the pager holds it now; when the pager ends, writes fail with EPIPE
	p.inPager.proc.Store(p.cmd.Process)
	defer p.inPager.proc.Store(nil)
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		_ = p.feed(w) // EPIPE when the pager quits early
		w.Close()
	}()
	err = p.cmd.Wait()
	<-fed
	return err
}

// SetStdin is part of tea.ExecCommand; the pager's stdin is the log.
func (p *pager) SetStdin(io.Reader) {}

// SetStdout connects the pager's output to the terminal.
func (p *pager) SetStdout(w io.Writer) { p.cmd.Stdout = w }

// SetStderr connects the pager's errors to the terminal.
func (p *pager) SetStderr(w io.Writer) { p.cmd.Stderr = w }

func serve(args []string) int {
	fs := flag.NewFlagSet("subdash serve", flag.ContinueOnError)
	var o supervisor.Options
	commonFlags(fs, &o)
	if err := parse(fs, args, &o); err != nil {
		return failed(err)
	}
	s, err := newSupervisor(o)
	if err != nil {
		return failed(err)
	}
	ctx, ended, stop := notifyEnd()
	defer stop()
	srv, err := control.Listen(s)
	if err != nil {
		_ = s.Shutdown(context.Background())
		return failed(err)
	}
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

// failed prints err on stderr and returns its exit status: exitUsage for a
// usageError, 0 for -h, exitFailure for anything else.
func failed(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(os.Stderr, "subdash: %v\n", err)
	if errors.As(err, new(usageError)) {
		return exitUsage
	}
	return exitFailure
}

func usage(w io.Writer) {
	fmt.Fprint(w, `subdash: a terminal dashboard for supervising subagents

usage:
  subdash [flags]                 open the dashboard
  subdash serve [flags]           run the supervisor and control socket without a screen
  subdash ctl <op> [args]         talk to a running dashboard or serve (subdash ctl help)
  subdash attach [--dir D | --socket S] [--read-only]
                                  a viewer of the subdash serving D (subdash alone attaches too)
  subdash mcp [flags]             MCP server on stdio (spawn_agent, send_input, wait, ...)
  subdash agent [--pace D]        the built-in audit agent; reads its task on stdin

flags:
`)
}
