package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

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

// Type names the value in help and in the config file's errors.
func (durationFlag) Type() string { return "duration" }

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

// Type names the value in help and in the config file's errors.
func (sizeFlag) Type() string { return "size" }

// longFlags returns args with each single-dash long flag written as GNU's
// double-dash one ("-max-agents 2" as "--max-agents 2", "-version",
// "-help"): Go's flag package, which subdash used before, took both, and
// scripts call subdash with them. A word is rewritten when it names a long
// flag of any command of root (or help, version); never a flag's value,
// nothing after "--", nor the arguments of a command that parses its own
// (agent, bridge), and single-letter shorthands stay as they are.
//
// Flags met before a command's name go after it (`subdash ctl --interrupt
// send ID MSG` as `subdash ctl send --interrupt ID MSG`): ctl took an
// operation's flags anywhere, and cobra, which finds the command before
// it knows its flags, would take the name for the value of a switch it
// does not know. The command parses them as it would have.
func longFlags(root *cobra.Command, args []string) []string {
	flags := map[string]*pflag.Flag{}
	var visit func(*cobra.Command)
	visit = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = f })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = f })
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
	out := make([]string, 0, len(args))
	var held []string // flags met before the next word
	cmd, positional := root, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(append(out, held...), args[i:]...)
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			sub := subcommand(cmd, a)
			if positional || sub == nil {
				out = append(append(out, held...), a)
				held, positional = nil, true
				continue
			}
			out = append(append(out, a), held...)
			held, cmd = nil, sub
			if sub.DisableFlagParsing {
				return append(out, args[i+1:]...)
			}
			continue
		}
		if len(a) >= 3 {
			name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
			f, known := flags[name]
			if !strings.HasPrefix(a, "--") && (known || name == "help" || name == "version") {
				a = "-" + a
			}
			if known && !hasValue && f.NoOptDefVal == "" && i+1 < len(args) {
				i++ // its value, whatever it looks like ("-1", "-help")
				held = append(held, a, args[i])
				continue
			}
		}
		held = append(held, a)
	}
	return append(out, held...)
}

// subcommand returns c's command called name (or by an alias), nil when
// it has none.
func subcommand(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}
