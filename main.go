// Command subdash is a terminal dashboard for supervising subagents: child
// runs of an agent CLI, each on one scoped task, shown side by side with
// their live output, with key bindings and a control socket, a `ctl` command
// line and an MCP server to spawn, send to, interrupt, close and resume them.
//
// Usage (docs/cli.md has every command and flag, generated from this
// command tree; docs/configuration.md the config file):
//
//	subdash [flags]              the dashboard
//	subdash serve [flags]        the same supervisor without a screen
//	subdash attach [target]      a viewer of the host serving a folder
//	subdash ctl <op> [args]      a client of the control socket
//	subdash mcp [flags]          an MCP server on stdio
//	subdash agent [--pace D]     the built-in audit agent (reads its task on stdin)
//	subdash config [flags]       the settings in effect and where each came from
//	subdash completion bash|zsh|fish, subdash man
//	subdash bridge --print-socket --dir D
//	                             run over ssh by another machine's subdash: finds the host of D
//
// The commands are cobra's, styled by fang. This file holds the exit
// statuses and the error road; main_cli.go the command tree.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"charm.land/fang/v2"
	"github.com/spf13/cobra"

	"github.com/subdash/subdash/supervisor/control/ctl"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/host"
	"github.com/subdash/subdash/supervisor/termtext"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run runs the command line args and returns the exit status (SPEC §6).
// A command returns its status through cli.code and says its own errors,
// so that fang's error road (which asks the terminal for its background)
// carries only the mistakes cobra finds in the command line: usage errors.
func run(args []string) int {
	root, c := newRoot()
	return execute(root, c, args)
}

// execute runs args on root, the tree newRoot returned with c, and
// returns the exit status, as run says.
func execute(root *cobra.Command, c *cli, args []string) int {
	root.SetArgs(longFlags(root, args))
	err := fang.Execute(context.Background(), root,
		fang.WithVersion(wire.Version()),
		fang.WithErrorHandler(printError),
		fang.WithColorSchemeFunc(colorScheme),
	)
	if err != nil {
		return exitUsage
	}
	return c.code
}

// Exit statuses of every subdash command (SPEC §6): 0 on success, 1 for a
// failure at run time, 2 for a usage error, 128+n when ended by signal n
// (after the terminal was restored and every agent stopped).
const (
	exitFailure = 1
	exitUsage   = 2
)

// usageError is a mistake in the command line or the config file: exit
// status 2.
type usageError struct{ error }

// Unwrap returns the mistake itself, for errors.Is and errors.As.
func (e usageError) Unwrap() error { return e.error }

// printError is fang's error handler: a mistake cobra found in the command
// line, said as subdash says every error (say), or as ctl says its own
// (ctl.UsageError.Say).
func printError(w io.Writer, _ fang.Styles, err error) {
	if u := (*ctl.UsageError)(nil); errors.As(err, &u) {
		u.Say(w)
		return
	}
	say(w, err)
}

// failed prints err on stderr and returns its exit status: exitUsage for a
// usageError, 0 for -h, exitFailure for anything else.
func failed(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	say(os.Stderr, err)
	if errors.As(err, new(usageError)) {
		return exitUsage
	}
	return exitFailure
}

// say writes err on w, a line "subdash: <what>" for each of the errors
// joined in it (errors.Join: a host's Stop, a config file's problems).
func say(w io.Writer, err error) {
	for _, e := range each(err) {
		// an error may carry what the user typed (a flag, a path): one
		// safe line, no escape sequence reaches the terminal
		fmt.Fprintf(w, "subdash: %s\n", termtext.OneLine(e.Error(), 0))
	}
}

// each returns the errors joined in err (errors.Join, also inside a
// usageError), each joined one's own in turn.
func each(err error) []error {
	if u, ok := err.(usageError); ok {
		err = u.error
	}
	var out []error
	for _, e := range host.Each(err) {
		if _, joined := e.(interface{ Unwrap() []error }); joined {
			out = append(out, each(e)...)
			continue
		}
		out = append(out, e)
	}
	return out
}
