// Package ctl is `subdash ctl` (SPEC §6): a client of the control socket
// on the command line. Its operations are a table of plain data (Ops:
// each one's name, arguments, flags, usage and call), from which the help
// (Usage) and the checks of a command line come. It imports no engine
// package: the client (package client), the contract (proto, wire) and
// the rule of trust (socket, and sshlink for --host).
package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/socket"
	"github.com/subdash/subdash/supervisor/sshlink"
	"github.com/subdash/subdash/supervisor/termtext"
)

// Exit statuses of Run.
const (
	ExitOK    = 0 // the operation succeeded
	ExitError = 1 // the operation failed: "<tool> failed: <message>" on stderr
	ExitUsage = 2 // the command line was not understood
)

// Globals are the flags of ctl itself, which name the host; they may come
// anywhere on the command line.
var Globals = []Flag{
	{Name: "dir", Value: "DIR", Usage: "use the socket of working directory DIR (default: current directory)"},
	{Name: "socket", Value: "PATH", Usage: "use this control socket (env SUBDASH_SOCKET)"},
	{Name: "host", Value: "ssh://[user@]host[:port]/abs/dir[?socket=/path][&subdash=/path]", Usage: `drive the host serving that folder there, over your own ssh
(SUBDASH_SSH_COMMAND replaces ssh, as GIT_SSH_COMMAND does;
SUBDASH_REMOTE_COMMAND names the subdash there); ssh runs with
BatchMode=yes: load a key with a passphrase into ssh-agent`},
}

// Usage is the help text of `subdash ctl`: Ops and Globals in words.
var Usage = usage()

func usage() string {
	var b strings.Builder
	b.WriteString(`usage: subdash ctl [--dir DIR | --socket PATH | --host ssh://…] <op> [args]

Drives the subdash (dashboard or subdash serve) that serves a directory,
here or on another machine over ssh.
Prints the JSON result of the operation on stdout; logs prints plain text.

ops:
`)
	for _, op := range Ops {
		entry(&b, 28, strings.TrimSpace(op.Name+" "+op.Args), op.Usage)
	}
	b.WriteString(`
A MSG of - is read from stdin (streamed to the host as it is read). A message is UTF-8 text (invalid bytes become
U+FFFD) of at most 64 MiB (put a longer task in a file). ID is an agent id, an
agent path (/root/review/tests), a path relative to the calling agent's or to
/root (review/tests), or a unique id prefix of at least 4 characters. Flags may come before or after the arguments; -- ends them (use
it before a message that starts with -).

`)
	for _, f := range Globals {
		entry(&b, 15, "--"+f.Name+" "+f.Value, f.Usage)
	}
	b.WriteString(`
Exit status: 0 success; 1 the operation failed, with "<tool> failed: <message>"
on stderr; 2 usage error.
`)
	return b.String()
}

// entry writes one entry of the help: its synopsis in a column of width,
// then the lines of its usage beside it, or under it when the synopsis
// is wider.
func entry(b *strings.Builder, width int, synopsis, usage string) {
	indent := strings.Repeat(" ", width+3)
	lines := strings.Split(usage, "\n")
	if len(synopsis) > width {
		fmt.Fprintf(b, "  %s\n", synopsis)
	} else {
		fmt.Fprintf(b, "  %-*s %s\n", width, synopsis, lines[0])
		lines = lines[1:]
	}
	for _, l := range lines {
		b.WriteString(indent + l + "\n")
	}
}

// usageLine is what a usage error ends with.
func usageLine() string {
	names := make([]string, len(Ops))
	for i, op := range Ops {
		names[i] = op.Name
	}
	return "usage: subdash ctl [--dir DIR | --socket PATH | --host ssh://host/dir] <op> [args]; ops: " + strings.Join(names, ", ") + " (subdash ctl help)"
}

// opNamed returns the operation called name.
func opNamed(name string) (Op, bool) {
	i := slices.IndexFunc(Ops, func(op Op) bool { return op.Name == name })
	if i < 0 {
		return Op{}, false
	}
	return Ops[i], true
}

// flagNamed returns the flag called name of ctl or of any operation.
func flagNamed(name string) (Flag, bool) {
	if i := slices.IndexFunc(Globals, func(f Flag) bool { return f.Name == name }); i >= 0 {
		return Globals[i], true
	}
	for _, op := range Ops {
		if i := slices.IndexFunc(op.Flags, func(f Flag) bool { return f.Name == name }); i >= 0 {
			return op.Flags[i], true
		}
	}
	return Flag{}, false
}

// line is a parsed `subdash ctl` command line.
type line struct {
	dir, socket string
	host        string            // an ssh:// target
	flags       map[string]string // the operation's flags given
	pos         []string          // the operation and its arguments
	help        bool
}

// parse parses args, accepting flags before, between and after the
// positional arguments ("-" alone is an argument: a message read from
// stdin).
func parse(args []string) (line, error) {
	l := line{flags: map[string]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			l.pos = append(l.pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			l.pos = append(l.pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		f, ok := flagNamed(name)
		if name == "help" || name == "h" {
			f, ok = Flag{Name: name}, true
		}
		switch {
		case !ok:
			return l, fmt.Errorf("unknown flag %s", a)
		case f.Value != "":
			if !hasVal {
				if i+1 >= len(args) {
					return l, fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				val = args[i]
			}
		default:
			if hasVal {
				b, err := strconv.ParseBool(val)
				if err != nil {
					return l, fmt.Errorf("flag --%s takes no value or true/false, not %q", name, val)
				}
				if !b {
					continue
				}
			}
			val = "true"
		}
		switch name {
		case "help", "h":
			l.help = true
		case "dir":
			l.dir = val
		case "socket":
			l.socket = val
		case "host":
			l.host = val
		default:
			l.flags[name] = val
		}
	}
	return l, nil
}

// Run runs `subdash ctl` with args (the words after "ctl") and returns
// its exit status: ExitOK, ExitError when the operation failed (stderr
// "<tool> failed: <message>", <tool> being the MCP tool name where there
// is one), ExitUsage for an unknown op, a missing argument or a bad flag.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(context.Background(), args, stdin, stdout, stderr, os.Getenv)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	// A failed write to stderr is dropped: the exit status still says
	// what happened, and there is no other place to say it. What it says
	// may carry what the user typed (an id, a flag) or a host sent: it
	// goes out as one safe line (termtext.OneLine), so an escape sequence
	// or a bell in it cannot act on the terminal.
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "subdash ctl: %s\n%s\n", termtext.OneLine(fmt.Sprintf(format, a...), 0), usageLine()) //nolint:errcheck // see above
		return ExitUsage
	}
	failed := func(tool string, err error) int {
		fmt.Fprintf(stderr, "%s failed: %s\n", tool, termtext.OneLine(err.Error(), 0)) //nolint:errcheck // as usageErr's
		return ExitError
	}
	// The answer is what the caller asked for: a failed write of it to
	// stdout (a closed pipe, a full disk) is an error.
	answer := func(text string) int {
		if _, err := io.WriteString(stdout, text); err != nil {
			fmt.Fprintf(stderr, "subdash ctl: cannot write the answer: %s\n", termtext.OneLine(err.Error(), 0)) //nolint:errcheck // as usageErr's
			return ExitError
		}
		return ExitOK
	}
	l, err := parse(args)
	if err != nil {
		return usageErr("%v", err)
	}
	if l.help || (len(l.pos) > 0 && l.pos[0] == "help") {
		return answer(Usage)
	}
	if len(l.pos) == 0 {
		return usageErr("missing operation")
	}
	name, pos := l.pos[0], l.pos[1:]
	op, ok := opNamed(name)
	if !ok {
		return usageErr("unknown operation %q", name)
	}
	for f := range l.flags {
		if !slices.ContainsFunc(op.Flags, func(g Flag) bool { return g.Name == f }) {
			return usageErr("%s does not take --%s; usage: subdash ctl %s %s", name, f, name, op.Args)
		}
	}
	if problem := op.checkCount(pos); problem != "" {
		return usageErr("%s: %s; usage: subdash ctl %s %s", name, problem, name, op.Args)
	}
	call, err := op.Call(Input{Args: pos, Flags: l.flags, Stdin: stdin, Stdout: stdout, Stderr: stderr})
	if err != nil {
		return usageErr("%s: %v", name, err)
	}
	tool := op.Tool
	if tool == "" {
		tool = op.Name
	}
	c, done, err := clientOf(ctx, l, getenv)
	if err != nil {
		var usage usageProblem
		if errors.As(err, &usage) {
			return usageErr("%v", err)
		}
		return failed(tool, err)
	}
	defer done()
	out, err := call(ctx, c.WithOrigin("ctl"))
	if err != nil {
		return failed(tool, err)
	}
	if _, ok := out.(Streamed); ok {
		return ExitOK
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return answer(string(b) + "\n")
}

// checkCount says what is wrong with the count of positional arguments
// pos; "" when it fits.
func (op Op) checkCount(pos []string) string {
	switch {
	case len(pos) < op.MinArgs:
		return "missing argument"
	case op.MaxArgs >= 0 && len(pos) > op.MaxArgs && op.MinArgs == op.MaxArgs:
		return fmt.Sprintf("unexpected argument %q (quote a message that has spaces)", pos[op.MaxArgs])
	case op.MaxArgs >= 0 && len(pos) > op.MaxArgs:
		return fmt.Sprintf("unexpected argument %q", pos[op.MaxArgs])
	}
	return ""
}

// usageProblem is a command line ctl cannot use (exit ExitUsage).
type usageProblem struct{ error }

// clientOf returns the client of the host the command line names, and
// what to call when done: a local socket (socketOf), or with --host an
// ssh link made without prompts (BatchMode) and closed by done. Errors:
// usageProblem, or the link's (*sshlink.Error, naming the target).
func clientOf(ctx context.Context, l line, getenv func(string) string) (*client.Client, func(), error) {
	if l.host == "" {
		sock, dir, err := socketOf(l, getenv)
		if err != nil {
			return nil, nil, usageProblem{err}
		}
		return client.NewClient(sock, dir), func() {}, nil
	}
	if l.dir != "" || l.socket != "" {
		return nil, nil, usageProblem{errors.New("give --dir, --socket or --host, not more than one: the target names the folder there (ssh://host/abs/dir) and its socket (?socket=)")}
	}
	t, err := sshlink.ParseTarget(l.host)
	if err != nil {
		return nil, nil, usageProblem{err}
	}
	c, err := sshlink.Connect(ctx, t, sshlink.Options{Batch: true, Getenv: getenv, Protocol: wire.Protocol, Version: wire.Version()})
	if err != nil {
		return nil, nil, err
	}
	return client.NewClientVia(t.Name(), c.DialContext).WithHostInfo(c.Link().Info()), c.Close, nil
}

// socketOf picks the socket by SPEC §6's rule (socket.Resolve) for --dir
// or the current directory; dir is "" when the socket was named and no
// --dir given, so that messages name the socket, not the current folder.
func socketOf(l line, getenv func(string) string) (sock, dir string, err error) {
	// filepath.Abs("") is the current directory.
	if dir, err = filepath.Abs(strings.TrimSpace(l.dir)); err != nil {
		return "", "", fmt.Errorf("working directory: %v", err)
	}
	sock, named := socket.Resolve(l.socket, dir, getenv, os.Getuid())
	if named && strings.TrimSpace(l.dir) == "" {
		dir = ""
	}
	return sock, dir, nil
}
