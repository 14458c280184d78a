package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/server"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/mcpserver"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/sshlink"
	"github.com/subdash/subdash/ui"
)

// The command tree: every command, its flags and its help, declared once;
// docs/cli.md, the completions and the man page are made from it.

// cli is one run of the command line: the exit status the command chose.
type cli struct{ code int }

// Groups of the root command's help.
const (
	groupHosts   = "hosts"
	groupClients = "clients"
	groupMore    = "more"
)

// newRoot returns the command tree: the root command is the dashboard.
func newRoot() (*cobra.Command, *cli) {
	c := &cli{}
	var hf hostFlags
	var df dashFlags
	root := &cobra.Command{
		Use:   "subdash",
		Short: "A terminal dashboard for supervising subagents",
		Long: `subdash supervises subagents: child runs of an agent CLI (memo, claude, codex, gemini, or the built-in audit agent), each on one scoped task, shown side by side with their live output. subdash alone opens the dashboard, or a viewer of the host already serving this folder (SPEC §9).

Settings come from the flags, then the environment (MEMO_*, SUBDASH_*), then the config file ($XDG_CONFIG_HOME/subdash/config.toml, else ~/.config/subdash/config.toml; subdash config shows them), then the defaults. Exit status: 0 success, 1 a failure at run time, 2 a usage error, 128+n ended by signal n.`,
		Example: `# the dashboard, with claude as the agent CLI
subdash --preset claude --max-agents 2
# a host without a screen, then a viewer of it, and its command line
subdash serve --allow-nested &
subdash attach
subdash ctl spawn 'audit the parser' --task-name parser`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.code = dashboard(cmd, &hf, &df)
			return nil
		},
	}
	root.SetVersionTemplate("subdash {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.AddGroup(
		&cobra.Group{ID: groupHosts, Title: "hosts and viewers"},
		&cobra.Group{ID: groupClients, Title: "clients of a host"},
		&cobra.Group{ID: groupMore, Title: "more"},
	)
	root.SetHelpCommandGroupID(groupMore)
	root.SetCompletionCommandGroupID(groupMore)
	fs := root.Flags()
	commonFlags(fs, &hf)
	dashboardFlags(fs, &df)
	root.AddCommand(serveCmd(c), attachCmd(c), mcpCmd(c), ctlCmd(c), agentCmd(c), configCmd(c), versionCmd(), bridgeCmd(c))
	completions(root)
	return root, c
}

// dashFlags are the dashboard's flags besides a host's.
type dashFlags struct {
	spawns   []string
	notify   string
	readOnly bool
	mouse    bool
}

// dashboardFlags declares the dashboard's own flags: --spawn, --notify,
// --read-only, --mouse.
func dashboardFlags(fs *pflag.FlagSet, d *dashFlags) {
	fs.StringArrayVar(&d.spawns, "spawn", nil, "spawn an agent with this message at start (repeatable)")
	fs.StringVar(&d.notify, "notify", "auto", "notifications in this terminal when an agent needs you: auto (BEL and a desktop notification, OSC 9 or 777), bell, osc, off")
	fs.BoolVar(&d.readOnly, "read-only", false, "as a viewer of a host already serving the directory: change nothing")
	fs.BoolVar(&d.mouse, "mouse", true, "the mouse selects agents, scrolls and drags the split; shift-drag selects text in most terminals (--mouse=false: off, a plain drag selects)")
}

// hostFlags are the settings of a host (SPEC §2): the dashboard's, serve's
// and mcp's.
type hostFlags struct {
	o            supervisor.Options
	trackChanges bool
}

// options returns the settings as supervisor.Resolve takes them.
func (h *hostFlags) options() supervisor.Options {
	o := h.o
	o.NoTrackChanges = !h.trackChanges
	return o
}

// commonFlags declares the flags of SPEC §2 shared by the dashboard, serve
// and mcp.
func commonFlags(fs *pflag.FlagSet, h *hostFlags) {
	o := &h.o
	fs.StringVar(&o.Command, "command", "", "agent command run with /bin/sh -c for every submission (env MEMO_SUBAGENT_COMMAND)")
	fs.StringVar(&o.Preset, "preset", "", "agent CLI preset: "+strings.Join(supervisor.Presets, ", ")+" (env SUBDASH_PRESET)")
	fs.StringVar(&o.PresetArgs, "preset-args", "", "extra arguments appended to the preset's command (config file: [presets.NAME] args)")
	fs.IntVar(&o.MaxAgents, "max-agents", 0, "maximum running agents (env MEMO_SUBAGENT_MAX_AGENTS; default 4)")
	fs.StringVar(&o.Dir, "dir", "", "working directory of agents (default: current directory)")
	fs.StringVar(&o.StateDir, "state-dir", "", "state directory for logs and the journal (env SUBDASH_STATE_DIR)")
	fs.StringVar(&o.Socket, "socket", "", "control socket path (env SUBDASH_SOCKET)")
	fs.DurationVar(&o.Grace, "grace", supervisor.DefaultGrace, "grace period between SIGTERM and SIGKILL")
	fs.IntVar(&o.Scrollback, "scrollback", supervisor.DefaultScrollback, "display lines kept in memory per submission")
	fs.IntVar(&o.LineMemory, "line-memory", supervisor.DefaultLineMemory>>20, "display lines kept in memory by all submissions together, in MiB; finished ones give theirs back first (-1: no limit)")
	fs.BoolVar(&o.AllowNested, "allow-nested", false, "let subagents spawn subagents (keep MEMO_ENABLE_COLLAB_TOOLS)")
	fs.IntVar(&o.MaxDepth, "max-depth", 0, "with --allow-nested, how deep agent paths may go below /root (env MEMO_SUBAGENT_MAX_DEPTH; default 3)")
	fs.DurationVar(&o.Timeout, "timeout", 0, "end a submission that runs longer than this (0: no limit)")
	fs.StringVar(&o.Runner, "runner", runner.Local, "where submissions run: local or kubernetes (SPEC §13; kubernetes needs a binary built with -tags kube)")
	fs.StringVar(&o.Kube.Namespace, "kube-namespace", "", "Kubernetes namespace of the agents' pods (default: the kubeconfig's)")
	fs.StringVar(&o.Kube.Image, "kube-image", "", "container image of the agents' pods, with the agent command and /bin/sh (required with --runner kubernetes)")
	fs.StringVar(&o.Kube.Node, "kube-node", "", "run every agent's pod on this node")
	fs.StringArrayVar(&o.Kube.Env, "kube-env", nil, "copy this variable of the host's environment into the pods (repeatable)")
	fs.StringArrayVar(&o.Kube.Secrets, "kube-secret", nil, "mount this Secret's keys as environment variables of the pods (repeatable)")
	fs.DurationVar(&o.Kube.StartTimeout, "kube-start-timeout", runner.DefaultKubeStartTimeout, "an agent's pod that does not run within this makes its submission errored with the cluster's reason")
	fs.Var(durationFlag{&o.RestoreWindow, supervisor.DefaultRestoreWindow}, "restore-window", "restore the agents of earlier runs updated within this (7d, 36h; 0: none)")
	fs.Var(sizeFlag{&o.MaxLogSize, supervisor.DefaultMaxLogSize}, "max-log-size", "the bytes each submission's log files may hold: the first and the last half are kept, a marker says what was dropped (10MiB, 10M, 1GiB; 0: no cap)")
	fs.Var(durationFlag{&o.LogRetention, supervisor.DefaultLogRetention}, "log-retention", "at start, remove this directory's runs (logs, journal) older than this, never those of restored agents (30d; 0: keep all)")
	fs.BoolVar(&o.Approvals, "approvals", false, "relay the claude and codex presets' tool permission requests to you (answer with y/Y/d or subdash ctl approve/deny)")
	fs.BoolVar(&o.MCPAnswers, "mcp-answers", false, "let the answer_question MCP tool answer the questions agents ask (claude's AskUserQuestion); without it a person answers them (A in the dashboard, subdash ctl answer)")
	fs.BoolVar(&h.trackChanges, "track-changes", true, "count what each submission changes in its git work tree (SPEC §15; --track-changes=false: off)")
	fs.Float64Var(&o.MaxBudgetUSD, "max-budget-usd", 0, "at most this many US dollars spent by each agent over its life (--preset claude; claude gets what is left as its own --max-budget-usd); no new submission starts past it (0: none)")
	fs.Float64Var(&o.FleetBudgetUSD, "fleet-budget-usd", 0, "at most this many US dollars spent by this host's agents since it started (--preset claude); spawns and sends are refused past it, running submissions go on (0: none)")
	fs.Var(durationFlag{&o.StallAfter, supervisor.DefaultStallAfter}, "stall-after", "mark a running agent stalled (and needing you) after this long with no output, no event and no CPU time of its process group (0: never)")
	fs.StringVar(&o.NotifyCommand, "notify-command", "", "shell command the host runs once each time an agent needs you, with SUBDASH_AGENT_ID, SUBDASH_STATUS and SUBDASH_MESSAGE in its environment")
}

// mcpFlags are `subdash mcp`'s own flags.
type mcpFlags struct{ tools, host string }

// declareMCP declares --tools and --host on fs.
func declareMCP(fs *pflag.FlagSet, m *mcpFlags) {
	fs.StringVar(&m.tools, "tools", "", "the tool family: seed (spawn_agent, send_input, resume_agent, wait, close_agent, list_agents) or multi-agent (Memo 0.9's spawn_agent, send_message, followup_task, wait_agent, interrupt_agent, list_agents) (env SUBDASH_MCP_TOOLS; default seed)")
	fs.StringVar(&m.host, "host", "", "drive the host serving a folder on another machine, over ssh: ssh://[user@]host[:port]/abs/dir[?socket=/path][&subdash=/path] (SUBDASH_SSH_COMMAND, SUBDASH_REMOTE_COMMAND)")
}

func serveCmd(c *cli) *cobra.Command {
	var hf hostFlags
	cmd := &cobra.Command{
		Use:     "serve",
		Short:   "Run the supervisor and its control socket without a screen",
		Long:    "subdash serve hosts the agents of a folder as the dashboard does, without a screen: attach a viewer (subdash attach), drive it with subdash ctl or subdash mcp. It runs until SIGINT or SIGTERM, then stops every agent.",
		GroupID: groupHosts,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.code = serve(cmd, &hf)
			return nil
		},
	}
	commonFlags(cmd.Flags(), &hf)
	return cmd
}

func mcpCmd(c *cli) *cobra.Command {
	var hf hostFlags
	var mf mcpFlags
	cmd := &cobra.Command{
		Use:     "mcp",
		Short:   "An MCP server on stdio (spawn_agent, send_input, wait, …)",
		Long:    `subdash mcp serves MCP on stdio: it drives the host serving its folder, or hosts the agents itself when none does (they end with it). With --host ssh://host/D it drives the host serving D on that machine.`,
		GroupID: groupClients,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.code = mcp(cmd, &hf, &mf)
			return nil
		},
	}
	commonFlags(cmd.Flags(), &hf)
	declareMCP(cmd.Flags(), &mf)
	return cmd
}

// attachFlags are `subdash attach`'s flags.
type attachFlags struct {
	dirs, sockets []string
	notify        string
	readOnly      bool
	mouse         bool
	spawns        []string
}

func attachCmd(c *cli) *cobra.Command {
	var af attachFlags
	cmd := &cobra.Command{
		Use:     "attach [ssh://[user@]host[:port]/abs/dir | @NAME | @all]...",
		Short:   "A viewer of the subdash serving a folder, here or over ssh",
		Long:    `subdash attach shows the dashboard of the host serving a folder (--dir, default the current one; --socket), or over your own ssh the host serving a folder on another machine. Given several hosts (--dir, --socket and ssh:// targets, each repeatable; @NAME or @all of the config file's [[hosts]]) it shows them all in one table, a row per host; ?read-only after one makes that host read-only. Quitting a viewer only detaches; it is never a host itself (subdash alone attaches too, or hosts when none serves).`,
		GroupID: groupHosts,
		Args: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if !sshlink.IsTarget(a) && !strings.HasPrefix(a, "@") {
					return usageError{fmt.Errorf("unexpected argument %q: give an ssh://[user@]host[:port]/abs/dir target, @NAME of the config file's [[hosts]] (or @all), or --dir or --socket", a)}
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c.code = attach(cmd, &af, args)
			return nil
		},
	}
	cmd.SetFlagErrorFunc(attachFlagError)
	fs := cmd.Flags()
	fs.StringArrayVar(&af.dirs, "dir", nil, "attach to the host of this working directory (default: current directory); repeatable, ?read-only after one makes it read-only")
	fs.StringArrayVar(&af.sockets, "socket", nil, "attach to the host serving this control socket (env SUBDASH_SOCKET); repeatable, as --dir")
	fs.BoolVar(&af.readOnly, "read-only", false, "show everything, change nothing: every operation is refused")
	fs.StringArrayVar(&af.spawns, "spawn", nil, "spawn an agent on the host with this message (repeatable)")
	fs.StringVar(&af.notify, "notify", "auto", "notifications in this terminal when an agent needs you: auto (BEL and a desktop notification, OSC 9 or 777), bell, osc, off")
	fs.BoolVar(&af.mouse, "mouse", true, "the mouse selects agents, scrolls and drags the split; shift-drag selects text in most terminals (--mouse=false: off, a plain drag selects)")
	return cmd
}

func agentCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:                "agent [--pace D]",
		Short:              "The built-in audit agent: reads its task on stdin",
		Long:               "subdash agent is the built-in audit agent, the agent command of last resort (SPEC §2) and --preset builtin: it reads its task on stdin and writes what it does on stdout. SIGINT or SIGTERM stops it (exit 128+n).",
		GroupID:            groupMore,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			c.code = agent(args)
			return nil
		},
	}
}

func bridgeCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:                "bridge --print-socket --dir D",
		Short:              "Run over ssh by another machine's subdash: finds the host of folder D",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			c.code = server.Bridge(args, os.Stdout, os.Stderr, os.Getenv)
			return nil
		},
	}
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version (devel and its commit for a local build)",
		GroupID: groupMore,
		Args:    noArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "subdash", wire.Version())
		},
	}
}

func configCmd(c *cli) *cobra.Command {
	var hf hostFlags
	var df dashFlags
	cmd := &cobra.Command{
		Use:     "config [flags]",
		Short:   "Print the settings in effect and where each came from",
		Long:    `subdash config prints the settings the dashboard would run with here, given the same flags, and where each came from: a flag, the environment, a line of the config file, or the default; then the config file's keys, theme and hosts. It starts nothing. A bad config file is an error naming its line (exit 2). docs/configuration.md describes the file.`,
		GroupID: groupMore,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.code = showConfig(cmd, &hf, &df)
			return nil
		},
	}
	commonFlags(cmd.Flags(), &hf)
	dashboardFlags(cmd.Flags(), &df)
	return cmd
}

// noArgs refuses positional arguments as a usage error; a word close to a
// command's name is said to be that.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		return usageError{fmt.Errorf("unknown command %q; did you mean %s? (see %s --help)", args[0], strings.Join(s, " or "), cmd.CommandPath())}
	}
	if !cmd.HasParent() {
		return usageError{fmt.Errorf("unexpected argument %q; messages are given with --spawn, and the commands are listed by subdash --help", args[0])}
	}
	return usageError{fmt.Errorf("unexpected argument %q; see %s --help", args[0], cmd.CommandPath())}
}

// flagError makes a flag that cobra could not parse a usage error that
// says where to read more.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if _, word, ok := strings.Cut(msg, "' in -"); ok && strings.HasPrefix(msg, "unknown shorthand flag: ") && len(word) > 1 {
		msg = "unknown flag: -" + word // a long flag no command has, not a cluster of letters
	}
	return usageError{fmt.Errorf("%s; see %s --help", msg, cmd.CommandPath())}
}

// attachFlagError is flagError for `subdash attach`, which says that a
// host's setting is not a viewer's.
func attachFlagError(cmd *cobra.Command, err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		if _, host := hostSettings[name]; host {
			return usageError{fmt.Errorf("--%s is a host setting, and subdash attach takes the host as it is: leave it out, or run `subdash --%s …` in the folder, which attaches only to a host whose --%s agrees", name, name, name)}
		}
	}
	return flagError(cmd, err)
}

// completions registers the values the shells complete for the flags
// that take one of a few words, on every command that has them (ctl's
// operations register their own, from ctl's table).
func completions(root *cobra.Command) {
	words := map[string][]string{
		"preset": supervisor.Presets,
		"runner": {runner.Local, runner.Kubernetes},
		"notify": ui.NotifyModes,
		"tools":  {string(mcpserver.FamilySeed), string(mcpserver.FamilyMultiAgent)},
	}
	var visit func(*cobra.Command)
	visit = func(cmd *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.PersistentFlags()} {
			for name, ws := range words {
				if fs.Lookup(name) != nil {
					_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(ws, cobra.ShellCompDirectiveNoFileComp))
				}
			}
			for _, name := range []string{"dir", "state-dir"} {
				if fs.Lookup(name) != nil {
					_ = cobra.MarkFlagDirname(fs, name)
				}
			}
		}
		for _, sub := range cmd.Commands() {
			visit(sub)
		}
	}
	visit(root)
}
