package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/internal/search"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
	"github.com/subdash/subdash/supervisor/sshlink"
	"github.com/subdash/subdash/supervisor/termtext"
)

// Exit statuses of Ctl.
const (
	ExitOK    = 0 // the operation succeeded
	ExitError = 1 // the operation failed: "<tool> failed: <message>" on stderr
	ExitUsage = 2 // the command line was not understood
)

// CtlUsage is the help text of `subdash ctl`.
const CtlUsage = `usage: subdash ctl [--dir DIR | --socket PATH | --host ssh://…] <op> [args]

Drives the subdash (dashboard or subdash serve) that serves a directory,
here or on another machine over ssh.
Prints the JSON result of the operation on stdout; logs prints plain text.

ops:
  spawn MSG [--task-name NAME] start a new agent working on MSG, named NAME in
                               the tree (letters, digits, _ and -)      (spawn_agent)
  send ID MSG [--interrupt | --queue | --steer]
                               start a new submission of agent ID; with
                               --interrupt a running one is cancelled first (send_input);
                               with --queue MSG starts when the running one ends;
                               with --steer MSG is written into the running one
                               (claude, codex, the built-in agent) and the receipt
                               follows in list's steered_messages
  cancel-queue ID              drop the message queued for agent ID
  seen ID                      mark agent ID as looked at: it no longer needs you
  interrupt ID                 terminate the running submission of agent ID
  close ID                     close agent ID and its descendants, terminating
                               their submissions                         (close_agent)
  close --all | --status S     close every agent not closed yet, or every agent
                               of status S (running, completed, errored), with
                               their descendants; every process group is
                               terminated at once, in one grace period
  resume ID                    reopen closed agent ID, and the descendants its
                               close closed                              (resume_agent)
  forget ID                    remove finished or closed agent ID and its
                               descendants for good, also after a restart; their
                               logs stay on disk
  wait ID... [--timeout-ms N]  wait until one of the agents is final; N defaults
                               to 30000 and is clamped to 10000..300000  (wait)
  list [--tree]                every agent's summary, oldest first      (list_agents);
                               --tree: the agent tree as indented text, for people
  info                         the host: pid, directory, agent command, where the
                               logs are and how much space they take
  approve ID [--request RID] [--always]
                               allow a pending tool permission request of agent ID
                               (--approvals; without --request: the oldest one);
                               --always allows its tool for the rest of the session
  deny ID [--request RID] [--message M]
                               deny it; M is the reason the agent reads
  logs ID [--submission SEQ] [--raw]
                               output of the latest (or SEQ-th) submission, as
                               plain text, or with --raw the log file's bytes
  diff ID [--submission SEQ]   what the latest (or SEQ-th) submission changed in
                               its git work tree, as a unified diff (coloured on
                               a terminal); list shows the counts (changes)
  search QUERY [--agent ID] [--regex] [--limit N]
                               every agent's output (agent ID and its
                               descendants with --agent), smart case; JSON Lines:
                               one hit a line (agent_id, agent_path, seq, line,
                               text), then {"hits", "truncated"}; N defaults to 1000

A MSG of - is read from stdin (streamed to the host as it is read). A message is UTF-8 text (invalid bytes become
U+FFFD) of at most 64 MiB (put a longer task in a file). ID is an agent id, an
agent path (/root/review/tests), a path relative to the calling agent's or to
/root (review/tests), or a unique id prefix of at least 4 characters. Flags may come before or after the arguments; -- ends them (use
it before a message that starts with -).

  --dir DIR       use the socket of working directory DIR (default: current directory)
  --socket PATH   use this control socket (env SUBDASH_SOCKET)
  --host ssh://[user@]host[:port]/abs/dir[?socket=/path][&subdash=/path]
                  drive the host serving that folder there, over your own ssh
                  (SUBDASH_SSH_COMMAND replaces ssh, as GIT_SSH_COMMAND does;
                  SUBDASH_REMOTE_COMMAND names the subdash there); ssh runs with
                  BatchMode=yes: load a key with a passphrase into ssh-agent

Exit status: 0 success; 1 the operation failed, with "<tool> failed: <message>"
on stderr; 2 usage error.
`

const ctlUsageLine = "usage: subdash ctl [--dir DIR | --socket PATH | --host ssh://host/dir] <op> [args]; ops: spawn, send, cancel-queue, seen, interrupt, close, resume, forget, wait, list, info, logs, diff, search, approve, deny (subdash ctl help)"

// ctlOp describes one operation of `subdash ctl`.
type ctlOp struct {
	tool  string // the MCP tool name, or the op name when there is none
	args  string // synopsis of its arguments, for messages
	flags []string
	check func(pos []string) string // "" when the positional arguments fit
}

var ctlOps = map[string]ctlOp{
	"spawn":        {tool: "spawn_agent", args: "MSG [--task-name NAME]", flags: []string{"task-name"}, check: exactly(1)},
	"send":         {tool: "send_input", args: "ID MSG [--interrupt | --queue | --steer]", flags: []string{"interrupt", "queue", "steer"}, check: exactly(2)},
	"cancel-queue": {tool: "cancel-queue", args: "ID", check: exactly(1)},
	"seen":         {tool: "seen", args: "ID", check: exactly(1)},
	"interrupt":    {tool: "interrupt", args: "ID", check: exactly(1)},
	"close":        {tool: "close_agent", args: "ID | --all | --status S", flags: []string{"all", "status"}, check: atMost(1)},
	"resume":       {tool: "resume_agent", args: "ID", check: exactly(1)},
	"forget":       {tool: "forget", args: "ID", check: exactly(1)},
	"wait":         {tool: "wait", args: "ID... [--timeout-ms N]", flags: []string{"timeout-ms"}, check: atLeast(1)},
	"list":         {tool: "list_agents", args: "[--tree]", flags: []string{"tree"}, check: exactly(0)},
	"info":         {tool: "info", args: "", check: exactly(0)},
	"logs":         {tool: "logs", args: "ID [--submission SEQ] [--raw]", flags: []string{"submission", "raw"}, check: exactly(1)},
	"diff":         {tool: "diff", args: "ID [--submission SEQ]", flags: []string{"submission"}, check: exactly(1)},
	"search":       {tool: "search", args: "QUERY [--agent ID] [--regex] [--limit N]", flags: []string{"agent", "regex", "limit"}, check: exactly(1)},
	"approve":      {tool: "approve", args: "ID [--request RID] [--always]", flags: []string{"request", "always"}, check: exactly(1)},
	"deny":         {tool: "deny", args: "ID [--request RID] [--message M]", flags: []string{"request", "message"}, check: exactly(1)},
}

func atLeast(n int) func([]string) string {
	return func(pos []string) string {
		if len(pos) < n {
			return "missing argument"
		}
		return ""
	}
}

func atMost(n int) func([]string) string {
	return func(pos []string) string {
		if len(pos) > n {
			return fmt.Sprintf("unexpected argument %q", pos[n])
		}
		return ""
	}
}

func exactly(n int) func([]string) string {
	return func(pos []string) string {
		switch {
		case len(pos) < n:
			return "missing argument"
		case len(pos) > n:
			return fmt.Sprintf("unexpected argument %q (quote a message that has spaces)", pos[n])
		}
		return ""
	}
}

// ctlLine is a parsed `subdash ctl` command line.
type ctlLine struct {
	dir, socket string
	host        string            // an ssh:// target
	flags       map[string]string // op flags given: interrupt, timeout-ms, submission
	pos         []string          // the op and its arguments
	help        bool
}

// valueFlags take a value; boolFlags do not.
var (
	valueFlags = map[string]bool{"dir": true, "socket": true, "host": true, "timeout-ms": true, "submission": true, "request": true, "message": true, "task-name": true, "status": true, "agent": true, "limit": true}
	boolFlags  = map[string]bool{"interrupt": true, "raw": true, "help": true, "h": true, "always": true, "queue": true, "tree": true, "steer": true, "all": true, "regex": true}
)

// parseCtl parses args, accepting flags before, between and after the
// positional arguments ("-" alone is an argument: a message read from stdin).
func parseCtl(args []string) (ctlLine, error) {
	l := ctlLine{flags: map[string]string{}}
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
		switch {
		case valueFlags[name]:
			if !hasVal {
				if i+1 >= len(args) {
					return l, fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				val = args[i]
			}
		case boolFlags[name]:
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
		default:
			return l, fmt.Errorf("unknown flag %s", a)
		}
		switch name {
		case "dir":
			l.dir = val
		case "socket":
			l.socket = val
		case "host":
			l.host = val
		case "help", "h":
			l.help = true
		default:
			l.flags[name] = val
		}
	}
	return l, nil
}

// Ctl runs `subdash ctl` with args (the words after "ctl") and returns its
// exit status: ExitOK, ExitError when the operation failed (stderr
// "<tool> failed: <message>", <tool> being the MCP tool name where there is
// one), ExitUsage for an unknown op, a missing argument or a bad flag.
func Ctl(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return ctl(context.Background(), args, stdin, stdout, stderr, os.Getenv)
}

func ctl(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	// A failed write to stderr is dropped: the exit status still says
	// what happened, and there is no other place to say it. What it says
	// may carry what the user typed (an id, a flag) or a host sent: it
	// goes out as one safe line (termtext.OneLine), so an escape sequence
	// or a bell in it cannot act on the terminal.
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "subdash ctl: %s\n%s\n", termtext.OneLine(fmt.Sprintf(format, a...), 0), ctlUsageLine) //nolint:errcheck // see above
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
	l, err := parseCtl(args)
	if err != nil {
		return usageErr("%v", err)
	}
	if l.help || (len(l.pos) > 0 && l.pos[0] == "help") {
		return answer(CtlUsage)
	}
	if len(l.pos) == 0 {
		return usageErr("missing operation")
	}
	name, pos := l.pos[0], l.pos[1:]
	op, ok := ctlOps[name]
	if !ok {
		return usageErr("unknown operation %q", name)
	}
	for f := range l.flags {
		if !slices.Contains(op.flags, f) {
			return usageErr("%s does not take --%s; usage: subdash ctl %s %s", name, f, name, op.args)
		}
	}
	if problem := op.check(pos); problem != "" {
		return usageErr("%s: %s; usage: subdash ctl %s %s", name, problem, name, op.args)
	}
	req, err := ctlRequest(name, pos, l.flags, stdin, stdout, stderr)
	if err != nil {
		return usageErr("%s: %v", name, err)
	}
	cl, done, err := ctlClient(ctx, l, getenv)
	if err != nil {
		var usage usageProblem
		if errors.As(err, &usage) {
			return usageErr("%v", err)
		}
		return failed(op.tool, err)
	}
	defer done()
	out, err := req(ctx, cl.WithOrigin("ctl"))
	if err != nil {
		return failed(op.tool, err)
	}
	if _, ok := out.(streamed); ok {
		return ExitOK
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return answer(string(b) + "\n")
}

// ctlRequest turns an op's arguments into the call to make. A message of
// "-" is stdin, streamed to the host as it is read (Client.SpawnFrom), so
// a long one is never whole in ctl's memory or the host's.
func ctlRequest(name string, pos []string, flags map[string]string, stdin io.Reader, stdout, stderr io.Writer) (func(context.Context, *client.Client) (any, error), error) {
	message := func(i int) (io.Reader, error) {
		if pos[i] != "-" {
			return strings.NewReader(pos[i]), nil
		}
		return stdinMessage{stdin}, nil
	}
	intFlag := func(f string) (*int, error) {
		v, ok := flags[f]
		if !ok {
			return nil, nil
		}
		n, err := strconv.Atoi(v)
		if errors.Is(err, strconv.ErrRange) {
			// A whole number too large for an int: the supervisor clamps
			// it (SPEC §3), so the nearest int does the same.
			n, err = math.MaxInt, nil
			if strings.HasPrefix(v, "-") {
				n = math.MinInt
			}
		}
		if err != nil {
			return nil, fmt.Errorf("--%s needs a whole number, not %q", f, v)
		}
		return &n, nil
	}
	switch name {
	case "spawn":
		msg, err := message(0)
		name, named := flags["task-name"]
		if named && err == nil {
			_, err = proto.CheckTaskName(name)
		}
		return func(ctx context.Context, c *client.Client) (any, error) {
			return c.SpawnFrom(ctx, msg, strings.TrimSpace(name))
		}, err
	case "send":
		msg, err := message(1)
		interrupt, queue, steer := flags["interrupt"] == "true", flags["queue"] == "true", flags["steer"] == "true"
		if interrupt && queue && err == nil {
			err = fmt.Errorf("--interrupt and --queue exclude each other: --queue waits for the running submission, --interrupt cancels it")
		}
		if steer && (interrupt || queue) && err == nil {
			err = fmt.Errorf("--steer excludes --interrupt and --queue: --steer writes the message into the running submission")
		}
		if steer {
			return func(ctx context.Context, c *client.Client) (any, error) { return c.SteerFrom(ctx, pos[0], msg) }, err
		}
		return func(ctx context.Context, c *client.Client) (any, error) {
			return c.SendFrom(ctx, pos[0], msg, interrupt, queue)
		}, err
	case "cancel-queue":
		return func(ctx context.Context, c *client.Client) (any, error) { return c.CancelQueue(ctx, pos[0]) }, nil
	case "seen":
		return func(ctx context.Context, c *client.Client) (any, error) { return c.MarkSeen(ctx, pos[0]) }, nil
	case "interrupt":
		return func(ctx context.Context, c *client.Client) (any, error) { return c.Interrupt(ctx, pos[0]) }, nil
	case "close":
		return closeRequest(pos, flags)
	case "resume":
		return func(ctx context.Context, c *client.Client) (any, error) { return c.Resume(ctx, pos[0]) }, nil
	case "forget":
		return func(ctx context.Context, c *client.Client) (any, error) { return c.Forget(ctx, pos[0]) }, nil
	case "wait":
		ms, err := intFlag("timeout-ms")
		if err == nil && ms != nil && *ms <= 0 {
			err = fmt.Errorf("--timeout-ms must be greater than zero, not %s (it is clamped to 10000..300000)", flags["timeout-ms"])
		}
		return func(ctx context.Context, c *client.Client) (any, error) { return c.Wait(ctx, pos, ms) }, err
	case "list":
		if flags["tree"] == "true" {
			return func(ctx context.Context, c *client.Client) (any, error) {
				res, err := c.List(ctx)
				if err == nil {
					err = writeTree(stdout, res)
				}
				return streamed{}, err
			}, nil
		}
		return func(ctx context.Context, c *client.Client) (any, error) { return c.List(ctx) }, nil
	case "info":
		return func(ctx context.Context, c *client.Client) (any, error) { return c.Info(ctx) }, nil
	case "approve":
		rid, always := flags["request"], flags["always"] == "true"
		return func(ctx context.Context, c *client.Client) (any, error) { return c.Approve(ctx, pos[0], rid, always) }, nil
	case "deny":
		rid, msg := flags["request"], flags["message"]
		return func(ctx context.Context, c *client.Client) (any, error) { return c.Deny(ctx, pos[0], rid, msg) }, nil
	case "diff":
		seq, err := intFlag("submission")
		if err != nil {
			return nil, err
		}
		return diffRequest(pos[0], seq, stdout)
	case "search":
		limit, err := intFlag("limit")
		if err == nil && limit != nil && *limit < 1 {
			err = fmt.Errorf("--limit must be at least 1, not %d", *limit)
		}
		req := proto.SearchRequest{Query: pos[0], Agent: flags["agent"], Regex: flags["regex"] == "true"}
		if limit != nil {
			req.Limit = *limit
		}
		if err == nil {
			_, err = search.Compile(req.Query, req.Regex) // a bad regular expression is a usage error
		}
		return func(ctx context.Context, c *client.Client) (any, error) {
			return streamed{}, writeSearch(ctx, c, stdout, req)
		}, err
	case "logs":
		seq, err := intFlag("submission")
		if err == nil && seq != nil && *seq < 1 {
			err = fmt.Errorf("--submission needs a sequence number (1, 2, …), not %d", *seq)
		}
		n := 0
		if seq != nil {
			n = *seq
		}
		raw := flags["raw"] == "true"
		return func(ctx context.Context, c *client.Client) (any, error) {
			if !raw {
				return streamed{}, c.WriteLogs(ctx, stdout, pos[0], n, false)
			}
			// the bytes on stdout stay the child's; where output is
			// missing in them is said on stderr (SPEC §5)
			gaps, err := c.WriteRawLog(ctx, stdout, pos[0], n)
			for _, g := range gaps {
				fmt.Fprintf(stderr, "%s, after byte %d of this output\n", g.Marker(), g.At)
			}
			return streamed{}, err
		}, err
	}
	return nil, fmt.Errorf("unknown operation %q", name)
}

// streamed is the result of an op that wrote its output itself (logs).
type streamed struct{}

// usageProblem is a command line ctl cannot use (exit ExitUsage).
type usageProblem struct{ error }

// ctlClient returns the client of the host the command line names, and
// what to call when done: a local socket (ctlSocket), or with --host an
// ssh link made without prompts (BatchMode) and closed by done. Errors:
// usageProblem, or the link's (*sshlink.Error, naming the target).
func ctlClient(ctx context.Context, l ctlLine, getenv func(string) string) (*client.Client, func(), error) {
	if l.host == "" {
		socket, dir, err := ctlSocket(l, getenv)
		if err != nil {
			return nil, nil, usageProblem{err}
		}
		return client.NewClient(socket, dir), func() {}, nil
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

// ctlSocket picks the socket by SPEC §6's rule (socket.Resolve) for --dir
// or the current directory; dir is "" when the socket was named and no
// --dir given, so that messages name the socket, not the current folder.
func ctlSocket(l ctlLine, getenv func(string) string) (sock, dir string, err error) {
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

// stdinMessage is a message read from stdin: its read errors say so.
type stdinMessage struct{ r io.Reader }

// Read is io.Reader's: an error of stdin other than EOF is wrapped to say
// it came from stdin.
func (s stdinMessage) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("from stdin: %w", err)
	}
	return n, err
}
