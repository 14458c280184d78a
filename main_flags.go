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
// (ctl, agent, bridge), and single-letter shorthands stay as they are.
func longFlags(root *cobra.Command, args []string) []string {
	flags := map[string]*pflag.Flag{}
	own := map[string]bool{}
	var visit func(*cobra.Command)
	visit = func(c *cobra.Command) {
		if c.DisableFlagParsing {
			own[c.Name()] = true
		}
		c.Flags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = f })
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || own[a] {
			return append(out, args[i:]...)
		}
		if !strings.HasPrefix(a, "-") || len(a) < 3 {
			out = append(out, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f, known := flags[name]
		if !strings.HasPrefix(a, "--") && (known || name == "help" || name == "version") {
			a = "-" + a
		}
		out = append(out, a)
		if known && !hasValue && f.NoOptDefVal == "" && i+1 < len(args) {
			i++ // its value, whatever it looks like ("-1", "-help")
			out = append(out, args[i])
		}
	}
	return out
}
