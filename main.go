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
//	subdash bridge --print-socket --dir D
//	                             run over ssh by another machine's subdash: finds the host of D
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
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/builtin"
	"github.com/subdash/subdash/supervisor/control"
	"github.com/subdash/subdash/supervisor/host"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/socket"
	"github.com/subdash/subdash/supervisor/termtext"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "agent":
			return agent(args[1:])
		case "ctl":
			return control.Ctl(args[1:], os.Stdin, os.Stdout, os.Stderr)
		case "serve":
			return serve(args[1:])
		case "mcp":
			return mcp(args[1:])
		case "attach":
			return attach(args[1:])
		case "bridge":
			return control.Bridge(args[1:], os.Stdout, os.Stderr, os.Getenv)
		case "version", "--version", "-version":
			fmt.Println("subdash", control.Version())
			return 0
		case "help", "-h", "-help", "--help":
			fs, _, _ := dashboardFlags()
			fs.SetOutput(os.Stdout)
			fs.Usage()
			return 0
		}
	}
	return dashboard(args)
}

// agent runs `subdash agent`, the built-in audit agent, on its task read
// from stdin. SIGINT or SIGTERM stops it (the host's interrupt and
// grace period), and it then exits 128+n. Its split task spawns children
// through the host of $SUBDASH_SOCKET (SPEC §2: set for the agents of a
// host run with --allow-nested).
func agent(args []string) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var ended atomic.Int32
	go func() {
		sig := (<-sigs).(syscall.Signal)
		ended.Store(int32(sig))
		cancel(fmt.Errorf("%s received", unix.SignalName(sig)))
	}()
	dir, _ := os.Getwd()
	if v := os.Getenv("SUBDASH_AGENT_INPUT"); v != "" {
		// the host steers it (SPEC §11): stdin carries stream-json
		args = append([]string{"--input-format", v}, args...)
	}
	var host builtin.Delegate // a host lets its agents spawn children (split) through SUBDASH_SOCKET
	if sock := os.Getenv(socket.Env); sock != "" {
		host = control.NewClient(sock, "")
	} else if r := os.Getenv(runner.EnvRunner); r != "" && r != runner.Local {
		host = builtin.NoHostOn(r) // a pod: the host's socket is out of reach (SPEC §13)
	}
	code := builtin.RunDelegating(ctx, os.Stdin, os.Stdout, os.Stderr, dir, args, host)
	if n := ended.Load(); n != 0 {
		return 128 + int(n)
	}
	return code
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
	fs.IntVar(&o.MaxDepth, "max-depth", 0, "with --allow-nested, how deep agent paths may go below /root (env MEMO_SUBAGENT_MAX_DEPTH; default 3)")
	fs.DurationVar(&o.Timeout, "timeout", 0, "end a submission that runs longer than this (0: no limit)")
	fs.StringVar(&o.Runner, "runner", runner.Local, "where submissions run: local or kubernetes (SPEC §13; kubernetes needs a binary built with -tags kube)")
	fs.StringVar(&o.Kube.Namespace, "kube-namespace", "", "Kubernetes namespace of the agents' pods (default: the kubeconfig's)")
	fs.StringVar(&o.Kube.Image, "kube-image", "", "container image of the agents' pods, with the agent command and /bin/sh (required with --runner kubernetes)")
	fs.StringVar(&o.Kube.Node, "kube-node", "", "run every agent's pod on this node")
	fs.Var((*stringList)(&o.Kube.Env), "kube-env", "copy this variable of the host's environment into the pods (repeatable)")
	fs.Var((*stringList)(&o.Kube.Secrets), "kube-secret", "mount this Secret's keys as environment variables of the pods (repeatable)")
	fs.DurationVar(&o.Kube.StartTimeout, "kube-start-timeout", runner.DefaultKubeStartTimeout, "an agent's pod that does not run within this makes its submission errored with the cluster's reason")
	fs.Var(durationFlag{&o.RestoreWindow, supervisor.DefaultRestoreWindow}, "restore-window", "restore the agents of earlier runs updated within this (7d, 36h; 0: none)")
	fs.Var(sizeFlag{&o.MaxLogSize, supervisor.DefaultMaxLogSize}, "max-log-size", "the bytes each submission's log files may hold: the first and the last half are kept, a marker says what was dropped (10MiB, 10M, 1GiB; 0: no cap)")
	fs.Var(durationFlag{&o.LogRetention, supervisor.DefaultLogRetention}, "log-retention", "at start, remove this directory's runs (logs, journal) older than this, never those of restored agents (30d; 0: keep all)")
	fs.BoolVar(&o.Approvals, "approvals", false, "relay the claude preset's tool permission requests to you (answer with y/Y/d or subdash ctl approve/deny)")
	fs.BoolFunc("track-changes", "count what each submission changes in its git work tree (SPEC §15; default true, =false: off)", func(v string) error {
		on, err := strconv.ParseBool(v)
		o.NoTrackChanges = !on
		return err
	})
	fs.Float64Var(&o.MaxBudgetUSD, "max-budget-usd", 0, "US dollars each agent may spend over its life (--preset claude; claude gets what is left as its own --max-budget-usd); no new submission starts past it (0: none)")
	fs.Float64Var(&o.FleetBudgetUSD, "fleet-budget-usd", 0, "US dollars this host's agents may spend since it started (--preset claude); spawns and sends are refused past it, running submissions go on (0: none)")
	fs.Var(durationFlag{&o.StallAfter, supervisor.DefaultStallAfter}, "stall-after", "mark a running agent stalled (and needing you) after this long with no output, no event and no CPU time of its process group (0: never)")
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
		return proto.FormatDuration(f.def)
	}
	return proto.FormatDuration(**f.p)
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

// sizeFlag is a size flag in binary units (proto.ParseSize) that
// leaves its option nil (the default) when not given.
type sizeFlag struct {
	p   **int64
	def int64
}

// String shows the value, or the default, as the flag takes it.
func (f sizeFlag) String() string {
	if f.p == nil || *f.p == nil {
		return proto.FormatSize(f.def)
	}
	return proto.FormatSize(**f.p)
}

// Set parses a size ("10MiB", "1G", "0").
func (f sizeFlag) Set(v string) error {
	n, err := proto.ParseSize(v)
	if err != nil {
		return err
	}
	*f.p = &n
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
	case set["max-depth"] && o.MaxDepth < 1:
		return fmt.Errorf("invalid --max-depth %d: must be a positive number", o.MaxDepth)
	case set["scrollback"] && o.Scrollback < 1:
		return fmt.Errorf("invalid --scrollback %d: must be a positive number of lines", o.Scrollback)
	case set["command"] && strings.TrimSpace(o.Command) == "":
		return fmt.Errorf("--command is empty; give the agent command to run, or leave the flag out to use the default")
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q; messages are given with --spawn", fs.Arg(0))
	}
	return nil
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

// Exit statuses of every subdash command (SPEC §6): 0 on success, 1 for a
// failure at run time, 2 for a usage error, 128+n when ended by signal n
// (after the terminal was restored and every agent stopped).
const (
	exitFailure = 1
	exitUsage   = 2
)

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ error }

// Unwrap returns the mistake itself, for errors.Is and errors.As.
func (e usageError) Unwrap() error { return e.error }

// failed prints err on stderr and returns its exit status: exitUsage for a
// usageError, 0 for -h, exitFailure for anything else. Errors joined
// (errors.Join: a host's Stop) get a line each.
func failed(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	for _, e := range host.Each(err) {
		// an error may carry what the user typed (a flag, a path): one
		// safe line, no escape sequence reaches the terminal
		fmt.Fprintf(os.Stderr, "subdash: %s\n", termtext.OneLine(e.Error(), 0))
	}
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
  subdash attach [--dir D | --socket S | ssh://[user@]host[:port]/D] [--read-only]
                                  a viewer of the subdash serving D, here or over ssh (subdash alone attaches too)
  subdash mcp [flags]             MCP server on stdio (spawn_agent, send_input, wait, ...);
                                  with --host ssh://host/D, of the host serving D there
  subdash agent [--pace D]        the built-in audit agent; reads its task on stdin
  subdash --version               print the version (devel and its commit for a local build)

flags:
`)
}
