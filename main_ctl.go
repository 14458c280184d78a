package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/subdash/subdash/supervisor/control/ctl"
)

// `subdash ctl`: a command per operation, made from ctl's table (ctl.Ops),
// so that its help, flags, completions, man page and docs/cli.md come from
// the one place that declares the operation.

// groupOps is the group of ctl's operations in its help.
const groupOps = "ops"

// ctlCmd is `subdash ctl`: its commands are ctl's operations (ctlOps),
// its flags name the host (ctl.Globals), and a command line it cannot use
// is a *ctl.UsageError, said as ctl says them (printError).
func ctlCmd(c *cli) *cobra.Command {
	var t ctl.Target
	cmd := &cobra.Command{
		Use:   "ctl [command]",
		Short: "Drive a running dashboard or serve: spawn, send, list, wait, logs, …",
		Long: `subdash ctl drives the host (the dashboard or subdash serve) serving a folder: this one, --dir's or --socket's, or with --host one on another machine over ssh. Each operation prints its answer on stdout: indented JSON, or text for logs, diff and list --tree, JSON Lines for search. Flags may come before or after the arguments. ` + ctl.HostHelp + `

` + ctl.IDHelp + ` ` + ctl.MsgHelp + `

Exit status: 0 success; 1 the operation failed, with "<tool> failed: <message>" on stderr;
2 a usage error, with "subdash ctl: <what is wrong>" and a line "usage: subdash ctl …" on stderr.`,
		Example: `# start an agent named parser, wait until it is final, read its output
subdash ctl spawn 'audit the parser' --task-name parser
subdash ctl wait parser
subdash ctl logs parser
# a message from stdin, to the host serving another folder
git diff | subdash ctl send parser - --dir ~/src/app`,
		GroupID:                    groupClients,
		Args:                       cobra.ArbitraryArgs,
		ValidArgsFunction:          cobra.NoFileCompletions,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return ctl.Usagef("missing operation")
			}
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				return ctl.Usagef("unknown operation %q; did you mean %s?", args[0], strings.Join(s, " or "))
			}
			return ctl.Usagef("unknown operation %q", args[0])
		},
	}
	cmd.SetFlagErrorFunc(ctlFlagError)
	target := map[string]*string{"dir": &t.Dir, "socket": &t.Socket, "host": &t.Host}
	for _, f := range ctl.Globals {
		cmd.PersistentFlags().Var(wordValue{target[f.Name], f.Value}, f.Name, f.Usage)
	}
	cmd.AddGroup(&cobra.Group{ID: groupOps, Title: "operations"})
	ctlOps(cmd, c, &t)
	cmd.AddCommand(ctlHelpCmd())
	return cmd
}

// ctlOps adds a command to parent for each of ctl's operations (ctl.Ops):
// its use line, help, flags and their completions from the table, and a
// run of ctl.Run on the host t names.
func ctlOps(parent *cobra.Command, c *cli, t *ctl.Target) {
	for _, op := range ctl.Ops {
		cmd := opCmd(op, c, t)
		parent.AddCommand(cmd)
		// ctl's flags are the operation's from now, not only once its
		// command line is parsed: `subdash help ctl send` lists them too
		cmd.InheritedFlags()
	}
}

// opCmd is the command of one of ctl's operations.
func opCmd(op ctl.Op, c *cli, t *ctl.Target) *cobra.Command {
	values := map[string]*string{}
	lists := map[string]*[]string{}
	switches := map[string]*bool{}
	cmd := &cobra.Command{
		Use:     strings.TrimSpace(op.Name + " " + op.Args),
		Short:   op.Usage,
		Long:    opHelp(op),
		GroupID: groupOps,
		// the use line names the flags
		DisableFlagsInUseLine: true,
		// ctl.Run checks the count, as its usage errors say it
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			in := ctl.Input{Args: args, Flags: map[string]string{}, Lists: map[string][]string{}, Stdin: cmd.InOrStdin(), Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
			for name, v := range values {
				if cmd.Flags().Changed(name) {
					in.Flags[name] = *v
				}
			}
			for name, l := range lists {
				if len(*l) > 0 {
					in.Lists[name] = *l
				}
			}
			for name, on := range switches {
				if *on {
					in.Flags[name] = "true"
				}
			}
			code, err := ctl.Run(cmd.Context(), op, *t, in)
			c.code = code
			return err
		},
	}
	fs := cmd.Flags()
	for _, f := range op.Flags {
		if f.Value == "" {
			switches[f.Name] = fs.Bool(f.Name, false, f.Usage)
			continue
		}
		values[f.Name] = new(string)
		if f.Repeat {
			lists[f.Name] = new([]string)
			fs.Var(listValue{wordValue{values[f.Name], f.Value}, lists[f.Name]}, f.Name, f.Usage)
		} else {
			fs.Var(wordValue{values[f.Name], f.Value}, f.Name, f.Usage)
		}
		if f.Words != nil {
			_ = cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(f.Words, cobra.ShellCompDirectiveNoFileComp))
		}
	}
	return cmd
}

// opHelp is what an operation's own help says: what it does, what its
// ID and MSG are, and how a failure is said.
func opHelp(op ctl.Op) string {
	r, n := utf8.DecodeRuneInString(op.Usage)
	parts := []string{string(unicode.ToUpper(r)) + op.Usage[n:] + "."}
	if op.More != "" {
		parts[0] += " " + op.More
	}
	var args []string
	if strings.Contains(op.Args, "ID") {
		args = append(args, ctl.IDHelp)
	}
	if strings.Contains(op.Args, "MSG") {
		args = append(args, ctl.MsgHelp)
	}
	if len(args) > 0 {
		parts = append(parts, strings.Join(args, " "))
	}
	parts = append(parts, fmt.Sprintf(`A failure is said on stderr as "%s failed: <message>" (exit status 1).`, op.ToolName()))
	return strings.Join(parts, "\n\n")
}

// ctlHelpCmd is `subdash ctl help [op]`, the help of ctl or of one of its
// operations, which scripts have asked for so since before `--help`.
func ctlHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "help [op]",
		Short:  "Help about ctl or one of its operations",
		Hidden: true,
		Args:   cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			of := cmd.Parent()
			if len(args) > 0 {
				op, _, err := of.Find(args[:1])
				if err != nil || op == of || op == cmd {
					return ctl.Usagef("no operation %q to help with", args[0])
				}
				of = op
			}
			return of.Help()
		},
	}
}

// ctlFlagError is flagError for `subdash ctl` and its operations: every
// mistake is a *ctl.UsageError, and a flag that another operation takes
// is said to be not this one's.
func ctlFlagError(cmd *cobra.Command, err error) error {
	var unknown *pflag.NotExistError
	var noValue *pflag.ValueRequiredError
	var bad *pflag.InvalidValueError
	switch {
	case errors.As(err, &unknown) && unknown.GetSpecifiedShortnames() != "":
		return ctl.Usagef("unknown flag -%s", unknown.GetSpecifiedShortnames())
	case errors.As(err, &unknown):
		name := unknown.GetSpecifiedName()
		if op, ok := ctl.Named(cmd.Name()); ok && anOpTakes(name) {
			return ctl.Usagef("%s does not take --%s; usage: subdash ctl %s %s", op.Name, name, op.Name, op.Args)
		}
		return ctl.Usagef("unknown flag --%s", name)
	case errors.As(err, &noValue):
		return ctl.Usagef("flag --%s needs a value", noValue.GetSpecifiedName())
	case errors.As(err, &bad) && bad.GetFlag().Value.Type() == "bool":
		return ctl.Usagef("flag --%s takes no value or true/false, not %q", bad.GetFlag().Name, bad.GetValue())
	}
	return &ctl.UsageError{Err: err}
}

// anOpTakes reports whether one of ctl's operations takes flag name.
func anOpTakes(name string) bool {
	return slices.ContainsFunc(ctl.Ops, func(op ctl.Op) bool {
		return slices.ContainsFunc(op.Flags, func(f ctl.Flag) bool { return f.Name == name })
	})
}

// wordValue is a flag's value kept as typed, for its command to check
// (ctl's operations check theirs, as their usage errors say), and named
// in help by its word for it: "--task-name NAME".
type wordValue struct {
	p    *string
	name string
}

// String returns the value.
func (v wordValue) String() string { return *v.p }

// Set keeps s.
func (v wordValue) Set(s string) error {
	*v.p = s
	return nil
}

// Type is the value's name in help ("NAME", "N").
func (v wordValue) Type() string { return v.name }

// listValue is the value of a flag that may be given more than once
// (ctl.Flag.Repeat): every value in order, and the last as wordValue's.
type listValue struct {
	wordValue
	all *[]string
}

// Set keeps s after the values given before.
func (v listValue) Set(s string) error {
	*v.all = append(*v.all, s)
	return v.wordValue.Set(s)
}
