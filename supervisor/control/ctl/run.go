// Package ctl is `subdash ctl` (SPEC §6): a client of the control socket
// on the command line. Its operations are a table of plain data (Ops:
// each one's name, arguments, flags, usage and call), from which package
// main makes the commands `subdash ctl <op>` (their help, flags and
// completions); Run checks and runs one. It imports no engine package:
// the client (package client), the contract (proto, wire) and the rule of
// trust (socket, and sshlink for --host).
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
	"strings"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/socket"
	"github.com/subdash/subdash/supervisor/sshlink"
	"github.com/subdash/subdash/supervisor/termtext"
)

// Exit statuses of `subdash ctl`.
const (
	ExitOK    = 0 // the operation succeeded
	ExitError = 1 // the operation failed: "<tool> failed: <message>" on stderr
	ExitUsage = 2 // the command line was not understood: a *UsageError
)

// Globals are the flags of ctl itself, which name the host (Target); they
// may come anywhere on the command line. HostHelp says more of --host.
var Globals = []Flag{
	{Name: "dir", Value: "DIR", Usage: "use the socket of the host serving working directory DIR (default: the current directory)"},
	{Name: "socket", Value: "PATH", Usage: "use this control socket (env SUBDASH_SOCKET)"},
	{Name: "host", Value: "TARGET", Usage: "drive the host serving a folder on another machine, over your own ssh: ssh://[user@]host[:port]/abs/dir[?socket=/path][&subdash=/path]"},
}

// HostHelp is what ctl's help says of --host besides its line.
const HostHelp = "With --host, SUBDASH_SSH_COMMAND replaces ssh (as GIT_SSH_COMMAND does) and SUBDASH_REMOTE_COMMAND names the subdash there; ssh runs with BatchMode=yes, so load a key with a passphrase into ssh-agent."

// Target is the host a command line names: its --dir, --socket and
// --host ("" when not given).
type Target struct {
	Dir, Socket, Host string
}

// UsageError is a command line ctl cannot use (exit status ExitUsage):
// nothing was sent to the host.
type UsageError struct{ Err error }

// Usagef returns a *UsageError that says what is wrong, as fmt.Errorf.
func Usagef(format string, a ...any) *UsageError {
	return &UsageError{fmt.Errorf(format, a...)}
}

// Error returns what is wrong.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the error it wraps.
func (e *UsageError) Unwrap() error { return e.Err }

// Say writes e as ctl says a usage error: "subdash ctl: <what is wrong>"
// and the usage line, each one safe line (termtext.OneLine), since what
// is wrong may carry what the user typed. A failed write is dropped: the
// exit status still says what happened, and there is no other place to
// say it.
func (e *UsageError) Say(w io.Writer) {
	fmt.Fprintf(w, "subdash ctl: %s\n%s\n", termtext.OneLine(e.Error(), 0), usageLine()) //nolint:errcheck // see above
}

// usageLine is what a usage error ends with.
func usageLine() string {
	names := make([]string, len(Ops))
	for i, op := range Ops {
		names[i] = op.Name
	}
	return "usage: subdash ctl [--dir DIR | --socket PATH | --host ssh://host/dir] <op> [args]; ops: " + strings.Join(names, ", ") + " (subdash ctl help)"
}

// Named returns the operation called name.
func Named(name string) (Op, bool) {
	i := slices.IndexFunc(Ops, func(op Op) bool { return op.Name == name })
	if i < 0 {
		return Op{}, false
	}
	return Ops[i], true
}

// Run runs op on the host t names with the command line in, and returns
// its exit status: ExitOK once the answer is written on in.Stdout (the
// call's JSON, indented, or what it wrote itself), ExitError when the
// operation failed, said on in.Stderr as "<tool> failed: <message>"
// (<tool> being the MCP tool name where there is one). A command line
// it cannot use (a missing argument, a bad flag value, --host with
// --dir) is a *UsageError, returned with ExitUsage before anything is
// sent or written.
func Run(ctx context.Context, op Op, t Target, in Input) (int, error) {
	return run(ctx, op, t, in, os.Getenv)
}

func run(ctx context.Context, op Op, t Target, in Input, getenv func(string) string) (int, error) {
	// What a failure says may carry what the user typed (an id) or a
	// host sent: it goes out as one safe line (termtext.OneLine), so an
	// escape sequence or a bell in it cannot act on the terminal; a
	// failed write of it is dropped, as UsageError.Say's.
	failed := func(tool string, err error) int {
		fmt.Fprintf(in.Stderr, "%s failed: %s\n", tool, termtext.OneLine(err.Error(), 0)) //nolint:errcheck // see above
		return ExitError
	}
	if in.Flags == nil {
		in.Flags = map[string]string{}
	}
	if problem := op.checkCount(in.Args); problem != "" {
		return ExitUsage, Usagef("%s: %s; usage: subdash ctl %s %s", op.Name, problem, op.Name, op.Args)
	}
	call, err := op.Call(in)
	if err != nil {
		return ExitUsage, Usagef("%s: %w", op.Name, err)
	}
	tool := op.ToolName()
	c, done, err := clientOf(ctx, t, getenv)
	if err != nil {
		if u := (*UsageError)(nil); errors.As(err, &u) {
			return ExitUsage, u
		}
		return failed(tool, err), nil
	}
	defer done()
	out, err := call(ctx, c.WithOrigin("ctl"))
	if err != nil {
		return failed(tool, err), nil
	}
	if _, ok := out.(Streamed); ok {
		return ExitOK, nil
	}
	// The answer is what the caller asked for: a failed write of it to
	// stdout (a closed pipe, a full disk) is an error.
	b, _ := json.MarshalIndent(out, "", "  ")
	if _, err := in.Stdout.Write(append(b, '\n')); err != nil {
		fmt.Fprintf(in.Stderr, "subdash ctl: cannot write the answer: %s\n", termtext.OneLine(err.Error(), 0)) //nolint:errcheck // as failed's
		return ExitError, nil
	}
	return ExitOK, nil
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

// clientOf returns the client of the host t names, and what to call when
// done: a local socket (socketOf), or with --host an ssh link made
// without prompts (BatchMode) and closed by done. Errors: *UsageError,
// or the link's (*sshlink.Error, naming the target).
func clientOf(ctx context.Context, target Target, getenv func(string) string) (*client.Client, func(), error) {
	if target.Host == "" {
		sock, dir, err := socketOf(target, getenv)
		if err != nil {
			return nil, nil, &UsageError{err}
		}
		return client.NewClient(sock, dir), func() {}, nil
	}
	if target.Dir != "" || target.Socket != "" {
		return nil, nil, Usagef("give --dir, --socket or --host, not more than one: the target names the folder there (ssh://host/abs/dir) and its socket (?socket=)")
	}
	t, err := sshlink.ParseTarget(target.Host)
	if err != nil {
		return nil, nil, &UsageError{err}
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
func socketOf(t Target, getenv func(string) string) (sock, dir string, err error) {
	// filepath.Abs("") is the current directory.
	if dir, err = filepath.Abs(strings.TrimSpace(t.Dir)); err != nil {
		return "", "", fmt.Errorf("working directory: %v", err)
	}
	sock, named := socket.Resolve(t.Socket, dir, getenv, os.Getuid())
	if named && strings.TrimSpace(t.Dir) == "" {
		dir = ""
	}
	return sock, dir, nil
}
