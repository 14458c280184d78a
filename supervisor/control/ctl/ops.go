package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// Op is one operation of `subdash ctl`, as plain data: the command
// `subdash ctl <Name>` is made from it (its help, flags and completions),
// its command line is checked against it, and it makes its call on the
// host.
type Op struct {
	// Name is the word on the command line: "send".
	Name string
	// Tool is what a failure is named by ("<tool> failed: …"): the MCP
	// tool of the same operation ("send_input"), else Name.
	Tool string
	// Args is the synopsis after Name, flags included: "ID MSG
	// [--interrupt | --queue | --steer]".
	Args string
	// MinArgs and MaxArgs bound the positional arguments (MaxArgs -1:
	// no bound).
	MinArgs, MaxArgs int
	// Flags are the flags it takes, in the order of its help.
	Flags []Flag
	// Usage says what it does in one line, without a final period: the
	// line `subdash ctl --help` lists it by.
	Usage string
	// More is what its own help (`subdash ctl <Name> --help`) says after
	// Usage; "" when Usage says it all.
	More string
	// Call checks an invocation beyond its counts (an error is a usage
	// error: nothing is sent) and returns the call to make.
	Call func(in Input) (Call, error)
}

// Flag is a flag of an operation or of ctl itself.
type Flag struct {
	// Name is its long name, without dashes: "task-name".
	Name string
	// Value names its value in help ("NAME"); "" for a switch, which
	// takes no value or true/false.
	Value string
	// Usage says what it does, in one line.
	Usage string
	// Words are the values a shell completes for it; nil when any.
	Words []string
	// Repeat: the flag may be given more than once; Input.Lists holds
	// every value, Input.Flags the last.
	Repeat bool
}

// Input is an operation's command line: its positional arguments, the
// flags given (a switch given as "true") and the process's streams.
type Input struct {
	Args   []string
	Flags  map[string]string
	Lists  map[string][]string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Call is an operation's call on the host: its result is printed as
// indented JSON, or it wrote its output itself (Streamed).
type Call func(ctx context.Context, c *client.Client) (any, error)

// Streamed is the result of a call that wrote its output itself (logs).
type Streamed struct{}

// What the help of an operation says of its ID and MSG arguments.
const (
	IDHelp  = "ID is an agent id, an agent path (/root/review/tests), a path relative to the calling agent's or to /root (review/tests), or a unique id prefix of at least 4 characters."
	MsgHelp = "A MSG of - is read from stdin, streamed to the host as it is read. A message is UTF-8 text (invalid bytes become U+FFFD) of at most 64 MiB (put a longer task in a file); put -- before a message that starts with -."
)

// submissionFlag is --submission of logs and diff.
var submissionFlag = Flag{Name: "submission", Value: "SEQ", Usage: "the SEQ-th submission (1, 2, …) instead of the latest"}

// Ops are the operations of `subdash ctl`, in the order of its usage
// errors' list (its help lists them by name).
var Ops = []Op{
	{Name: "spawn", Tool: "spawn_agent", Args: "MSG [--task-name NAME]", MinArgs: 1, MaxArgs: 1,
		Flags: []Flag{{Name: "task-name", Value: "NAME", Usage: "name the agent NAME in the tree (letters, digits, _ and -): its path is /root/NAME, or NAME under the calling agent's"}},
		Usage: "start a new agent working on MSG",
		More:  "It prints the new agent: its id, path, status and submission.",
		Call:  spawnCall},
	{Name: "send", Tool: "send_input", Args: "ID MSG [--interrupt | --queue | --steer]", MinArgs: 2, MaxArgs: 2,
		Flags: []Flag{
			{Name: "interrupt", Usage: "cancel the running submission first"},
			{Name: "queue", Usage: "start MSG when the running submission ends (cancel-queue drops it)"},
			{Name: "steer", Usage: "write MSG into the running submission (claude, codex, the built-in agent); the receipt follows in list's steered_messages"},
		},
		Usage: "start a new submission of agent ID with MSG",
		More:  "While agent ID runs, a send fails (the agent is busy) unless a flag says what to do with the running submission: --interrupt, --queue or --steer, one at most.",
		Call:  sendCall},
	{Name: "cancel-queue", Args: "ID", MinArgs: 1, MaxArgs: 1,
		Usage: "drop the message queued for agent ID",
		Call:  onAgent((*client.Client).CancelQueue)},
	{Name: "seen", Args: "ID", MinArgs: 1, MaxArgs: 1,
		Usage: "mark agent ID as looked at: it no longer needs you",
		Call:  onAgent((*client.Client).MarkSeen)},
	{Name: "interrupt", Args: "ID", MinArgs: 1, MaxArgs: 1,
		Usage: "terminate the running submission of agent ID",
		Call:  onAgent((*client.Client).Interrupt)},
	{Name: "close", Tool: "close_agent", Args: "ID | --all | --status S", MinArgs: 0, MaxArgs: 1,
		Flags: []Flag{
			{Name: "all", Usage: "close every agent not closed yet"},
			{Name: "status", Value: "S", Usage: "close every agent of status S (running, completed, errored)",
				Words: []string{string(proto.StatusRunning), string(proto.StatusCompleted), string(proto.StatusErrored)}},
		},
		Usage: "close agent ID and its descendants, terminating their submissions",
		More:  "Give an agent ID, --all or --status S. Many agents close in one call: every process group is terminated at once, in one grace period, and the answer lists the agents closed.",
		Call:  closeCall},
	{Name: "resume", Tool: "resume_agent", Args: "ID", MinArgs: 1, MaxArgs: 1,
		Usage: "reopen closed agent ID, and the descendants its close closed",
		Call:  onAgent((*client.Client).Resume)},
	{Name: "forget", Args: "ID", MinArgs: 1, MaxArgs: 1,
		Usage: "remove finished or closed agent ID and its descendants for good",
		More:  "They stay forgotten after a restart; their logs stay on disk.",
		Call:  onAgent((*client.Client).Forget)},
	{Name: "wait", Args: "ID... [--timeout-ms N]", MinArgs: 1, MaxArgs: -1,
		Flags: []Flag{{Name: "timeout-ms", Value: "N", Usage: "give up after N milliseconds, clamped to 10000..300000 (default 30000); the answer says timed_out"}},
		Usage: "wait until one of the agents is final",
		More:  "It prints the status and details of the agents that are final; an unknown id is not_found.",
		Call:  waitCall},
	{Name: "list", Tool: "list_agents", Args: "[--tree]", MinArgs: 0, MaxArgs: 0,
		Flags: []Flag{{Name: "tree", Usage: "the agent tree as indented text, for people"}},
		Usage: "every agent's summary, oldest first",
		Call:  listCall},
	{Name: "info", MinArgs: 0, MaxArgs: 0,
		Usage: "the host: pid, directory, agent command, where the logs are and how much space they take",
		Call: func(Input) (Call, error) {
			return func(ctx context.Context, c *client.Client) (any, error) { return c.Info(ctx) }, nil
		}},
	{Name: "approve", Args: "ID [--request RID] [--always]", MinArgs: 1, MaxArgs: 1,
		Flags: []Flag{
			{Name: "request", Value: "RID", Usage: "the request to allow (default: the oldest pending one)"},
			{Name: "always", Usage: "allow its tool for the rest of the session"},
		},
		Usage: "allow a pending tool permission request of agent ID",
		More:  "Requests are relayed by a host started with --approvals (the claude and codex presets).",
		Call: func(in Input) (Call, error) {
			id, rid, always := in.Args[0], in.Flags["request"], in.Flags["always"] == "true"
			return func(ctx context.Context, c *client.Client) (any, error) { return c.Approve(ctx, id, rid, always) }, nil
		}},
	{Name: "deny", Args: "ID [--request RID] [--message M]", MinArgs: 1, MaxArgs: 1,
		Flags: []Flag{
			{Name: "request", Value: "RID", Usage: "the request to deny (default: the oldest pending one)"},
			{Name: "message", Value: "M", Usage: "the reason the agent reads"},
		},
		Usage: "deny a pending tool permission request of agent ID",
		More:  "Requests are relayed by a host started with --approvals (the claude and codex presets).",
		Call: func(in Input) (Call, error) {
			id, rid, msg := in.Args[0], in.Flags["request"], in.Flags["message"]
			return func(ctx context.Context, c *client.Client) (any, error) { return c.Deny(ctx, id, rid, msg) }, nil
		}},
	{Name: "answer", Args: "ID (--answer Q=LABELS | --answers JSON | --option LABEL) [--request RID]", MinArgs: 1, MaxArgs: 1,
		Flags: []Flag{
			{Name: "request", Value: "RID", Usage: "the question's request id (pending_questions); without it the oldest one"},
			{Name: "answer", Value: "Q=LABEL", Repeat: true, Usage: "a question (its text or header) and its labels or other text, once per question"},
			{Name: "answers", Value: "JSON", Usage: `every answer as JSON: '{"Q":["LABEL"]}'`},
			{Name: "option", Value: "LABEL", Repeat: true, Usage: "a label, when it asks one question"},
		},
		Usage: "answer a question agent ID asks (pending_questions)",
		Call:  answerCall},
	{Name: "logs", Args: "ID [--submission SEQ] [--raw]", MinArgs: 1, MaxArgs: 1,
		Flags: []Flag{submissionFlag, {Name: "raw", Usage: "the log file's bytes; where output is missing in them is said on stderr"}},
		Usage: "the output of agent ID's latest submission, as plain text",
		Call:  logsCall},
	{Name: "diff", Args: "ID [--submission SEQ]", MinArgs: 1, MaxArgs: 1,
		Flags: []Flag{submissionFlag},
		Usage: "what agent ID's latest submission changed in its git work tree, as a unified diff",
		More:  "Coloured on a terminal; list shows the counts (changes).",
		Call:  diffCall},
	{Name: "search", Args: "QUERY [--agent ID] [--regex] [--limit N]", MinArgs: 1, MaxArgs: 1,
		Flags: []Flag{
			{Name: "agent", Value: "ID", Usage: "search agent ID and its descendants only"},
			{Name: "regex", Usage: "take QUERY as a regular expression (Go's RE2 syntax); a bad one is a usage error"},
			{Name: "limit", Value: "N", Usage: "stop after N hits (default 1000); the last line says truncated"},
		},
		Usage: "search every agent's output for QUERY, smart case, as JSON Lines",
		More:  `One hit a line ({"agent_id", "agent_path", "seq", "line", "text"}), then {"hits", "truncated"}.`,
		Call:  searchCall},
}

// ToolName is what a failure of op is named by: Tool, else Name.
func (op Op) ToolName() string {
	if op.Tool == "" {
		return op.Name
	}
	return op.Tool
}

// onAgent is the call of an operation on the agent its one argument
// names.
func onAgent(op func(*client.Client, context.Context, string) (proto.StatusResult, error)) func(Input) (Call, error) {
	return func(in Input) (Call, error) {
		id := in.Args[0]
		return func(ctx context.Context, c *client.Client) (any, error) { return op(c, ctx, id) }, nil
	}
}

// message returns argument i as a message: "-" is stdin, streamed to the
// host as it is read (Client.SpawnFrom), so a long one is never whole in
// ctl's memory or the host's.
func (in Input) message(i int) io.Reader {
	if in.Args[i] != "-" {
		return strings.NewReader(in.Args[i])
	}
	return stdinMessage{in.Stdin}
}

// intFlag returns flag f as a whole number, nil when not given. A number
// too large for an int is the nearest int: the host clamps it (SPEC §3)
// as it would the number.
func (in Input) intFlag(f string) (*int, error) {
	v, ok := in.Flags[f]
	if !ok {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if errors.Is(err, strconv.ErrRange) {
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

// submission returns --submission (0, the latest, when not given).
func (in Input) submission() (int, error) {
	seq, err := in.intFlag("submission")
	if err != nil || seq == nil {
		return 0, err
	}
	if *seq < 1 {
		return 0, fmt.Errorf("--submission needs a sequence number (1, 2, …), not %d", *seq)
	}
	return *seq, nil
}

func spawnCall(in Input) (Call, error) {
	name, named := in.Flags["task-name"]
	if named {
		if _, err := proto.CheckTaskName(name); err != nil {
			return nil, err
		}
	}
	msg, name := in.message(0), strings.TrimSpace(name)
	return func(ctx context.Context, c *client.Client) (any, error) { return c.SpawnFrom(ctx, msg, name) }, nil
}

func sendCall(in Input) (Call, error) {
	interrupt, queue, steer := in.Flags["interrupt"] == "true", in.Flags["queue"] == "true", in.Flags["steer"] == "true"
	switch {
	case interrupt && queue:
		return nil, fmt.Errorf("--interrupt and --queue exclude each other: --queue waits for the running submission, --interrupt cancels it")
	case steer && (interrupt || queue):
		return nil, fmt.Errorf("--steer excludes --interrupt and --queue: --steer writes the message into the running submission")
	}
	id, msg := in.Args[0], in.message(1)
	if steer {
		return func(ctx context.Context, c *client.Client) (any, error) { return c.SteerFrom(ctx, id, msg) }, nil
	}
	return func(ctx context.Context, c *client.Client) (any, error) {
		return c.SendFrom(ctx, id, msg, interrupt, queue)
	}, nil
}

// closeCall is one agent (ID), or many (--all, --status S) in one call.
func closeCall(in Input) (Call, error) {
	status, byStatus := in.Flags["status"]
	all := in.Flags["all"] == "true"
	switch {
	case len(in.Args) == 1 && !all && !byStatus:
		return onAgent((*client.Client).Close)(in)
	case len(in.Args) == 1:
		return nil, fmt.Errorf("give an agent ID or --all or --status, not both")
	case all && byStatus:
		return nil, fmt.Errorf("--all and --status exclude each other: --all closes every agent not closed yet")
	case !all && !byStatus:
		return nil, fmt.Errorf("missing argument: an agent ID, --all or --status S")
	}
	req := proto.CloseManyRequest{All: all, Status: proto.Status(status)}
	if err := req.Check(); err != nil {
		return nil, err
	}
	return func(ctx context.Context, c *client.Client) (any, error) { return c.CloseMany(ctx, req) }, nil
}

func waitCall(in Input) (Call, error) {
	ms, err := in.intFlag("timeout-ms")
	if err == nil && ms != nil && *ms <= 0 {
		err = fmt.Errorf("--timeout-ms must be greater than zero, not %s (it is clamped to 10000..300000)", in.Flags["timeout-ms"])
	}
	ids := in.Args
	return func(ctx context.Context, c *client.Client) (any, error) { return c.Wait(ctx, ids, ms) }, err
}

func listCall(in Input) (Call, error) {
	if in.Flags["tree"] != "true" {
		return func(ctx context.Context, c *client.Client) (any, error) { return c.List(ctx) }, nil
	}
	return func(ctx context.Context, c *client.Client) (any, error) {
		res, err := c.List(ctx)
		if err == nil {
			err = writeTree(in.Stdout, res)
		}
		return Streamed{}, err
	}, nil
}

func logsCall(in Input) (Call, error) {
	seq, err := in.submission()
	if err != nil {
		return nil, err
	}
	id, raw := in.Args[0], in.Flags["raw"] == "true"
	return func(ctx context.Context, c *client.Client) (any, error) {
		if !raw {
			return Streamed{}, c.WriteLogs(ctx, in.Stdout, id, seq, false)
		}
		// the bytes on stdout stay the child's; where output is missing
		// in them is said on stderr (SPEC §5)
		gaps, err := c.WriteRawLog(ctx, in.Stdout, id, seq)
		for _, g := range gaps {
			fmt.Fprintf(in.Stderr, "%s, after byte %d of this output\n", g.Marker(), g.At) //nolint:errcheck // stderr: nowhere else to say it
		}
		return Streamed{}, err
	}, nil
}

// diffCall is coloured as git colours it when stdout is a terminal.
func diffCall(in Input) (Call, error) {
	seq, err := in.submission()
	if err != nil {
		return nil, err
	}
	id, color := in.Args[0], isTerminal(in.Stdout)
	return func(ctx context.Context, c *client.Client) (any, error) {
		return Streamed{}, c.WriteChanges(ctx, in.Stdout, id, seq, color)
	}, nil
}

// searchCall checks the query here: a bad regular expression is a usage
// error.
func searchCall(in Input) (Call, error) {
	limit, err := in.intFlag("limit")
	if err != nil {
		return nil, err
	}
	if limit != nil && *limit < 1 {
		return nil, fmt.Errorf("--limit must be at least 1, not %d", *limit)
	}
	req := proto.SearchRequest{Query: in.Args[0], Agent: in.Flags["agent"], Regex: in.Flags["regex"] == "true"}
	if limit != nil {
		req.Limit = *limit
	}
	if err := req.Check(); err != nil {
		return nil, err
	}
	return func(ctx context.Context, c *client.Client) (any, error) {
		return Streamed{}, writeSearch(ctx, c, in.Stdout, req)
	}, nil
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

// answerCall is `ctl answer`: the answers from --answer (repeatable,
// QUESTION=LABEL[,LABEL]), --answers (a JSON object of question to label
// or labels) or --option (repeatable, the only question's labels); one
// form at a time.
func answerCall(in Input) (Call, error) {
	answers := map[string][]string{}
	forms := 0
	if raw, ok := in.Flags["answers"]; ok {
		forms++
		var v map[string]any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf(`--answers takes a JSON object of question to label or labels, e.g. '{"Which DB?":"SQLite"}': %v`, err)
		}
		for q, a := range v {
			switch a := a.(type) {
			case string:
				answers[q] = []string{a}
			case []any:
				for _, l := range a {
					s, ok := l.(string)
					if !ok {
						return nil, fmt.Errorf("--answers: the labels of %q must be strings", q)
					}
					answers[q] = append(answers[q], s)
				}
			default:
				return nil, fmt.Errorf("--answers: the answer to %q must be a label or a list of labels", q)
			}
		}
	}
	if list := in.Lists["answer"]; len(list) > 0 {
		forms++
		for _, a := range list {
			q, labels, ok := strings.Cut(a, "=")
			if !ok || strings.TrimSpace(q) == "" {
				return nil, fmt.Errorf("--answer %q: write QUESTION=LABEL (the question's text or header, then its label or labels, comma-separated)", a)
			}
			answers[q] = append(answers[q], strings.Split(labels, ",")...)
		}
	}
	if list := in.Lists["option"]; len(list) > 0 {
		forms++
		answers[""] = list
	}
	if forms != 1 {
		return nil, errors.New("give the answer once: --answer QUESTION=LABEL (repeatable), --answers JSON or --option LABEL")
	}
	id, rid := in.Args[0], in.Flags["request"]
	return func(ctx context.Context, c *client.Client) (any, error) { return c.Answer(ctx, id, rid, answers) }, nil
}
