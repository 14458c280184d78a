package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/budget"
	"github.com/subdash/subdash/supervisor/internal/fdlimit"
	"github.com/subdash/subdash/supervisor/internal/memohome"
	"github.com/subdash/subdash/supervisor/internal/stall"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/socket"
)

// Defaults of SPEC §2 and §5.
const (
	DefaultMaxAgents  = 4                       // --max-agents: running agents at once (SPEC §2)
	DefaultGrace      = 1500 * time.Millisecond // --grace: SIGTERM to SIGKILL (SPEC §2)
	DefaultScrollback = 10000                   // --scrollback: display lines kept per submission (SPEC §5)
	// ShutdownTimeout bounds how long stopping a host (Shutdown) waits
	// for its running submissions past the grace period, and then for its
	// runner to close (SPEC §4): a process that SIGKILL does not end (one
	// in uninterruptible sleep, a pod its cluster does not delete) cannot
	// hold the host for ever. The one such bound of a host, its dashboard
	// and its stops.
	ShutdownTimeout = 30 * time.Second
	// DefaultLineMemory is the default of --line-memory: bytes of display
	// lines held in memory by all submissions together (SPEC §5). With the
	// default --scrollback it lets 8 agents keep every line of their
	// current submission while finished ones give theirs back.
	DefaultLineMemory = 24 << 20
	// DefaultMaxLogSize is the default of --max-log-size: the bytes a
	// submission's log files may hold, head and tail (SPEC §5).
	DefaultMaxLogSize = 1 << 30
	// minMaxLogSize is the smallest cap --max-log-size takes but 0.
	minMaxLogSize = 64 << 10
	// DefaultStallAfter is the default of --stall-after (SPEC §11).
	DefaultStallAfter = stall.DefaultAfter
)

// CommandSource says which step of SPEC §2's agent command resolution chose
// the command.
type CommandSource string

// The resolution steps of SPEC §2, in order.
const (
	SourceFlag    CommandSource = "--command"
	SourceEnv     CommandSource = "MEMO_SUBAGENT_COMMAND"
	SourceDist    CommandSource = "dist/index.js"
	SourceMemo    CommandSource = "memo on PATH"
	SourceBuiltin CommandSource = "built-in agent"
	SourcePreset  CommandSource = "--preset"
)

// Options are the raw settings given on the command line (SPEC §2). A zero
// value means "not given"; Resolve applies the environment and defaults.
type Options struct {
	Command     string             // --command
	Preset      string             // --preset (SPEC §8)
	PresetArgs  string             // --preset-args
	MaxAgents   int                // --max-agents; 0 = not given; negative is an error
	Dir         string             // --dir; "" = current directory
	StateDir    string             // --state-dir
	Socket      string             // --socket
	Grace       time.Duration      // --grace; 0 = DefaultGrace
	Scrollback  int                // --scrollback, display lines per submission; 0 = DefaultScrollback
	LineMemory  int                // --line-memory, MiB of display lines of all submissions; 0 = DefaultLineMemory, < 0 = no limit
	AllowNested bool               // --allow-nested
	MaxDepth    int                // --max-depth (SPEC §14); 0 = not given; negative is an error
	Timeout     time.Duration      // --timeout per submission; 0 = none
	Approvals   bool               // --approvals: relay claude's tool permission requests (SPEC §12)
	MCPAnswers  bool               // --mcp-answers: the answer_question MCP tool may answer agents' questions (SPEC §12)
	Runner      string             // --runner (SPEC §13): "" or runner.Local, runner.Kubernetes
	Kube        runner.KubeOptions // --kube-* (SPEC §13), with --runner kubernetes

	// RestoreWindow is --restore-window (SPEC §10): records updated within
	// it are restored at start; nil = DefaultRestoreWindow, 0 = none.
	RestoreWindow *time.Duration
	// LogRetention is --log-retention: runs older than it are removed at
	// start unless they hold a record inside the restore window; nil =
	// DefaultLogRetention, 0 = keep every run.
	LogRetention *time.Duration
	// MaxLogSize is --max-log-size in bytes (ParseSize): nil =
	// DefaultMaxLogSize, 0 = no cap, else at least 64 KiB.
	MaxLogSize *int64
	// NotifyCommand is --notify-command: a shell command the host runs once
	// per transition to needing you (SPEC §11); "" for none.
	NotifyCommand  string
	NoTrackChanges bool // --track-changes=false (SPEC §15)
	// StallAfter is --stall-after (SPEC §11 "Stalled"): nil =
	// stall.DefaultAfter, 0 = off; negative is an error.
	StallAfter *time.Duration
	// MaxBudgetUSD and FleetBudgetUSD are --max-budget-usd and
	// --fleet-budget-usd in US dollars (SPEC §11 "Budgets"); 0: none.
	MaxBudgetUSD, FleetBudgetUSD float64
}

// Environment is what Resolve reads from the outside world, so that tests
// can supply their own. SystemEnvironment returns the real one.
type Environment struct {
	Getenv     func(string) string          // os.Getenv
	LookPath   func(string) (string, error) // exec.LookPath: finds memo and the preset CLIs on PATH
	Executable string                       // absolute path of this binary, for the built-in agent
	Environ    []string                     // base environment of every submission
	UID        int                          // the user's id, in the default socket path (SPEC §6)
}

// SystemEnvironment returns the process's real environment.
func SystemEnvironment() Environment {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return Environment{
		Getenv:     os.Getenv,
		LookPath:   exec.LookPath,
		Executable: exe,
		Environ:    os.Environ(),
		UID:        os.Getuid(),
	}
}

// Config is the resolved configuration of a supervisor.
type Config struct {
	Command       string        // agent command line, run as /bin/sh -c Command
	CommandSource CommandSource // which resolution step chose Command
	// CommandShown is Command as screens and messages show it: this binary
	// by its name ("subdash agent"), not by a path such as go run's
	// temporary build; "" means Command itself. Use Shown.
	CommandShown string
	// Executable is this binary's absolute path (Environment.Executable):
	// the built-in agent's program, also for agents restored from records
	// a host of another path wrote (go run builds to a temporary path).
	Executable  string
	Preset      *Preset       // non-nil when --preset or SUBDASH_PRESET chose a preset (SPEC §8)
	MaxAgents   int           // maximum running submissions, ≥ 1
	Dir         string        // absolute working directory of every submission
	StateDir    string        // absolute state directory (logs, journal)
	Socket      string        // control socket path (SPEC §6)
	Grace       time.Duration // grace period between SIGTERM and SIGKILL
	Scrollback  int           // display lines kept in memory per submission
	LineMemory  int64         // bytes of display lines held by all submissions together (SPEC §5); 0 = no limit
	AllowNested bool          // keep MEMO_ENABLE_COLLAB_TOOLS for children
	MaxDepth    int           // deepest agent path below the root (SPEC §14), ≥ 1
	Timeout     time.Duration // per-submission time limit; 0 = none
	// MCPAnswers lets an MCP client (origin "mcp") answer agents'
	// questions (--mcp-answers, SPEC §12 "Questions"); without it a
	// person must.
	MCPAnswers bool
	// NotifyCommand is run with /bin/sh -c once per transition to needing
	// you, with SUBDASH_AGENT_ID, SUBDASH_STATUS and SUBDASH_MESSAGE in its
	// environment (SPEC §11); "" for none.
	NotifyCommand string
	CollabTools   bool     // MEMO_ENABLE_COLLAB_TOOLS is not "0"
	Environ       []string // base environment of every submission
	// Runner starts the submissions (SPEC §13); nil makes New create the
	// runner RunnerName names.
	Runner runner.Runner
	// RunnerName is --runner: runner.Local (the default) or
	// runner.Kubernetes.
	RunnerName string
	// Kube are the --kube-* settings, with runner.Kubernetes.
	Kube runner.KubeOptions
	// Warnings are problems with the configuration that did not stop it,
	// e.g. an invalid MEMO_SUBAGENT_MAX_AGENTS; the dashboard shows them.
	Warnings []string
	// Notes are facts worth showing, e.g. that memo was not found and the
	// built-in agent is used.
	Notes []string

	// RestoreWindow: records of this directory updated within it are
	// restored at start (SPEC §10); 0 restores none.
	RestoreWindow time.Duration
	// LogRetention: runs older than it are removed at start, except those
	// holding a record inside RestoreWindow; 0 keeps every run.
	LogRetention time.Duration
	// MaxLogSize caps each submission's log files, in bytes: the first
	// and the last half are kept (SPEC §5); 0: no cap.
	MaxLogSize int64
	// StallAfter marks a running agent stalled after this long without
	// output, event or CPU time (SPEC §11); 0: never.
	StallAfter time.Duration
	// Statfs reports the free bytes and the size of the filesystem of
	// StateDir, for the free-space floor of the log files (SPEC §5); nil
	// means statfs(2).
	Statfs func(dir string) (free, total uint64, err error)
	// TrackChanges: each submission's changes to its git work tree are
	// counted (SPEC §15; --track-changes, on unless set false).
	TrackChanges bool
	// Budget holds --max-budget-usd and --fleet-budget-usd (SPEC §11
	// "Budgets"); the zero value: none.
	Budget budget.Limits
}

// Resolve turns options and the environment into a Config following SPEC §2:
// flags win over environment variables; an invalid MEMO_SUBAGENT_MAX_AGENTS
// falls back to 4 with a warning; an invalid --max-agents, a missing
// working directory, or both --preset and --command are errors.
func Resolve(o Options, env Environment) (Config, error) {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.LookPath == nil {
		env.LookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	}
	if inPods(o) {
		env.Executable = PodExecutable
	}
	c := Config{
		Executable:    env.Executable,
		Grace:         o.Grace,
		Scrollback:    o.Scrollback,
		AllowNested:   o.AllowNested,
		Timeout:       o.Timeout,
		MCPAnswers:    o.MCPAnswers,
		NotifyCommand: strings.TrimSpace(o.NotifyCommand),
		Environ:       env.Environ,
		CollabTools:   strings.TrimSpace(env.Getenv("MEMO_ENABLE_COLLAB_TOOLS")) != "0",
		TrackChanges:  !o.NoTrackChanges,
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	c.RestoreWindow, c.LogRetention = DefaultRestoreWindow, DefaultLogRetention
	if o.RestoreWindow != nil {
		c.RestoreWindow = *o.RestoreWindow
	}
	if o.LogRetention != nil {
		c.LogRetention = *o.LogRetention
	}
	if c.RestoreWindow < 0 || c.LogRetention < 0 {
		return c, fmt.Errorf("invalid --restore-window or --log-retention: must not be negative (0 restores none / keeps every run)")
	}
	c.StallAfter = DefaultStallAfter
	if o.StallAfter != nil {
		c.StallAfter = *o.StallAfter
	}
	if c.StallAfter < 0 {
		return c, fmt.Errorf("invalid --stall-after %s: must not be negative (0: never mark an agent stalled)", c.StallAfter)
	}
	if c.Grace < 0 {
		return c, fmt.Errorf("invalid --grace %s: must not be negative", o.Grace)
	}
	if c.Scrollback == 0 {
		c.Scrollback = DefaultScrollback
	}
	c.MaxLogSize = DefaultMaxLogSize
	if o.MaxLogSize != nil {
		c.MaxLogSize = *o.MaxLogSize
	}
	if c.MaxLogSize != 0 && c.MaxLogSize < minMaxLogSize {
		return c, fmt.Errorf("invalid --max-log-size %s: give 0 (no cap) or at least 64KiB", proto.FormatSize(c.MaxLogSize))
	}
	switch {
	case o.LineMemory == 0:
		c.LineMemory = DefaultLineMemory
	case o.LineMemory > 0:
		c.LineMemory = int64(o.LineMemory) << 20
	}
	if c.Scrollback < 0 {
		return c, fmt.Errorf("invalid --scrollback %d: must be a positive number of lines", o.Scrollback)
	}
	if o.Timeout < 0 {
		return c, fmt.Errorf("invalid --timeout %s: must not be negative", o.Timeout)
	}

	switch {
	case o.MaxAgents < 0:
		return c, fmt.Errorf("invalid --max-agents %d: must be a positive number", o.MaxAgents)
	case o.MaxAgents > 0:
		c.MaxAgents = o.MaxAgents
	default:
		c.MaxAgents = DefaultMaxAgents
		if v := strings.TrimSpace(env.Getenv("MEMO_SUBAGENT_MAX_AGENTS")); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				c.Warnings = append(c.Warnings, fmt.Sprintf(
					"MEMO_SUBAGENT_MAX_AGENTS=%q is not a positive number; using %d", v, DefaultMaxAgents))
			} else {
				c.MaxAgents = n
			}
		}
	}

	if err := resolveDepth(&c, o, env); err != nil {
		return c, err
	}

	dir, err := resolveDir(o.Dir)
	if err != nil {
		return c, err
	}
	c.Dir = dir

	c.StateDir, err = resolveStateDir(o.StateDir, env)
	if err != nil {
		return c, err
	}

	c.Socket, _ = socket.Resolve(o.Socket, c.Dir, env.Getenv, env.UID)

	if err := resolveCommand(&c, o, env); err != nil {
		return c, err
	}
	if exe := env.Executable; exe != "" && (c.CommandSource == SourceBuiltin || c.Preset != nil && c.Preset.Name == "builtin") {
		c.CommandShown = strings.Replace(c.Command, shellQuote(exe), filepath.Base(exe), 1)
	}
	if err := resolveRunner(&c, o); err != nil {
		return c, err
	}
	c.Budget = budget.Limits{Agent: o.MaxBudgetUSD, Fleet: o.FleetBudgetUSD}
	if err := c.Budget.Check(c.Preset.name()); err != nil {
		return c, err
	}
	if lim, err := fdlimit.Limit(); err == nil && c.RunnerName == runner.Local { // a pod's files are not the host's
		if w := fdlimit.Warning(c.MaxAgents, lim); w != "" {
			c.Warnings = append(c.Warnings, w)
		}
	}
	if c.Preset.isMemo() && c.RunnerName == runner.Local {
		if err := memohome.CheckConfig(memohome.UserHome(env.Getenv)); err != nil {
			c.Warnings = append(c.Warnings, "--preset memo: "+err.Error()+"; until then every agent fails to start")
		}
	}
	return c, nil
}

// Shown returns the agent command as screens and messages show it (SPEC
// §2): CommandShown, or Command when that is empty.
func (c Config) Shown() string {
	if c.CommandShown != "" {
		return c.CommandShown
	}
	return c.Command
}

func resolveDir(d string) (string, error) {
	if d == "" {
		d = "."
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %v", d, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("working directory %s does not exist; pass an existing folder with --dir", abs)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("working directory %s is not a folder; pass a folder with --dir", abs)
	}
	// The real path, so that a folder reached through a symbolic link gets
	// the same control socket, and a second dashboard for it is refused.
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	return abs, nil
}

// DefaultStateDir is the state directory of a host given no --state-dir
// (SPEC §2): SUBDASH_STATE_DIR, else $XDG_STATE_HOME/subdash, else
// ~/.local/state/subdash; an error when HOME is unset too.
func DefaultStateDir(env Environment) (string, error) { return resolveStateDir("", env) }

func resolveStateDir(flag string, env Environment) (string, error) {
	d := flag
	if d == "" {
		d = strings.TrimSpace(env.Getenv("SUBDASH_STATE_DIR"))
	}
	if d == "" {
		if x := env.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
			d = filepath.Join(x, "subdash")
		} else if h := env.Getenv("HOME"); h != "" {
			d = filepath.Join(h, ".local", "state", "subdash")
		} else {
			return "", fmt.Errorf("no state directory: HOME is not set; pass --state-dir or set SUBDASH_STATE_DIR")
		}
	}
	return filepath.Abs(d)
}

// resolveCommand applies SPEC §2's agent command resolution (and SPEC §8's
// presets, which take the place of the command).
func resolveCommand(c *Config, o Options, env Environment) error {
	preset := strings.TrimSpace(o.Preset)
	if preset == "" && strings.TrimSpace(o.Command) == "" {
		preset = strings.TrimSpace(env.Getenv("SUBDASH_PRESET"))
		if _, err := LookupPreset(preset, "", ""); preset != "" && err != nil {
			// an invalid environment value is a warning, and the next
			// step applies (SPEC §2)
			c.Warnings = append(c.Warnings, fmt.Sprintf("SUBDASH_PRESET=%q is not a preset (%s); ignored", preset, strings.Join(Presets, ", ")))
			preset = ""
		}
	}
	if preset != "" {
		if strings.TrimSpace(o.Command) != "" {
			return fmt.Errorf("--preset and --command are both given; use one of them")
		}
		p, err := LookupPreset(preset, o.PresetArgs, env.Executable)
		if err != nil {
			return err
		}
		if o.Approvals && p.Name != "claude" && !p.isCodexApp() {
			return errApprovalsPreset("--preset " + p.Name)
		}
		p.Approvals = o.Approvals
		c.Preset = p
		c.Command = p.Describe()
		c.CommandSource = SourcePreset
		if cli := p.CLI(); cli != "" && !inPods(o) { // in a pod, the image's PATH decides
			if _, err := env.LookPath(cli); err != nil {
				c.Warnings = append(c.Warnings, fmt.Sprintf("--preset %s: %s is not on PATH, so every agent will fail (exit 127); install it, or pick another --preset or --command", p.Name, cli))
			}
		}
		return nil
	}
	if o.PresetArgs != "" {
		return fmt.Errorf("--preset-args needs --preset")
	}
	if o.Approvals {
		return errApprovalsPreset("a plain agent command")
	}
	if cmd := strings.TrimSpace(o.Command); cmd != "" {
		c.Command, c.CommandSource = cmd, SourceFlag
		return nil
	}
	if cmd := strings.TrimSpace(env.Getenv("MEMO_SUBAGENT_COMMAND")); cmd != "" {
		c.Command, c.CommandSource = cmd, SourceEnv
		return nil
	}
	if inPods(o) {
		// steps 2 and 3 look at this machine's folder and PATH; a pod has
		// the image's (SPEC §2, §13): resolveRunner says what runs there
		c.Command, c.CommandSource = BuiltinCommand(env.Executable), SourceBuiltin
		return nil
	}
	dist := filepath.Join(c.Dir, "dist", "index.js")
	if fi, err := os.Stat(dist); err == nil && !fi.IsDir() {
		c.Command, c.CommandSource = "node "+shellQuote(dist)+" --dangerous", SourceDist
		return nil
	}
	if _, err := env.LookPath("memo"); err == nil {
		c.Command, c.CommandSource = "memo --dangerous", SourceMemo
		return nil
	}
	c.Command, c.CommandSource = BuiltinCommand(env.Executable), SourceBuiltin
	c.Notes = append(c.Notes, "memo not found on PATH: using the built-in audit agent; set --command or MEMO_SUBAGENT_COMMAND to use another")
	return nil
}

// PodExecutable is the built-in agent's program with --runner kubernetes
// (SPEC §13): subdash on the PATH of --kube-image, as this host's binary is
// on this machine and not in the pods.
const PodExecutable = "subdash"

// inPods reports whether o runs the submissions in pods (SPEC §13).
func inPods(o Options) bool { return strings.TrimSpace(o.Runner) == runner.Kubernetes }

// resolveRunner checks --runner and the --kube-* flags (SPEC §13).
func resolveRunner(c *Config, o Options) error {
	name := strings.TrimSpace(o.Runner)
	if name == "" {
		name = runner.Local
	}
	c.RunnerName = name
	c.Kube = o.Kube
	switch name {
	case runner.Local:
		if o.Kube.Given() {
			return fmt.Errorf("--kube-* flags need --runner %s", runner.Kubernetes)
		}
		return nil
	case runner.Kubernetes:
		if o.AllowNested {
			// SPEC §14: a nested spawn reaches the host through its control
			// socket, a Unix socket on the host's machine.
			return fmt.Errorf("--allow-nested does not work with --runner %s: a submission in a pod cannot reach this host's control socket (a Unix socket on this machine), so its agent could not spawn or instruct agents; leave --allow-nested out", runner.Kubernetes)
		}
		if strings.TrimSpace(o.Kube.Image) == "" {
			return fmt.Errorf("--runner %s needs --kube-image IMAGE: the container image that holds the agent command and /bin/sh", runner.Kubernetes)
		}
		if o.Kube.StartTimeout < 0 {
			return fmt.Errorf("invalid --kube-start-timeout %s: must not be negative", o.Kube.StartTimeout)
		}
		if c.Kube.StartTimeout == 0 {
			c.Kube.StartTimeout = runner.DefaultKubeStartTimeout
		}
		for _, n := range o.Kube.Env {
			if n == "" || strings.ContainsAny(n, "= ") {
				return fmt.Errorf("invalid --kube-env %q: give the name of a variable of this environment, without =value", n)
			}
		}
		if c.CommandSource == SourceBuiltin || c.Preset != nil && c.Preset.Name == "builtin" {
			c.Notes = append(c.Notes, "--runner kubernetes: the built-in agent runs as `subdash agent` from the PATH of --kube-image (this host's binary is not in the pods): put a static subdash (CGO_ENABLED=0 go build) on the image's PATH, or give --command or --preset")
		}
		if _, ok := runner.Lookup(name); !ok {
			return fmt.Errorf("this subdash binary was built without the Kubernetes runner; build it with `go build -tags kube` (docs/kubernetes.md)")
		}
		return nil
	}
	return fmt.Errorf("unknown --runner %q: use %s or %s", name, runner.Local, runner.Kubernetes)
}
