package proto

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// The agent tree (SPEC §14): every agent has a path, its parent's path, a
// slash and its task name (or, without one, its short id), under the root
// RootPath. Names and rules follow Memo 0.9's agent registry
// (packages/core/src/agent/registry.ts).

// RootPath is the path of the tree's root: the caller outside every
// submission (a person, `subdash ctl`, an MCP session). It is no agent.
const RootPath = "/root"

// DefaultMaxDepth is how deep the tree may grow when nesting is allowed
// (--max-depth, MEMO_SUBAGENT_MAX_DEPTH; Memo's default): /root/a is at
// depth 1, /root/a/b at 2.
const DefaultMaxDepth = 3

// taskNameRule is Memo's rule for a task name, case-insensitive.
var taskNameRule = regexp.MustCompile(`(?i)^[a-z0-9][a-z0-9_-]*$`)

// MaxTaskNameBytes is the longest task name, in bytes (SPEC §14): a name
// ends every path below it, which the table, list and the journal carry.
const MaxTaskNameBytes = 256

// CheckTaskName returns name trimmed when it is a task name by Memo's rule
// (`^[a-z0-9][a-z0-9_-]*$`, letters of either case) of at most
// MaxTaskNameBytes bytes, else Memo's error "task_name must contain only
// letters, numbers, underscores, or hyphens", or "task_name is N bytes,
// longer than the limit of 256; use a shorter name" (CodeInvalid).
func CheckTaskName(name string) (string, error) {
	n := strings.TrimSpace(name)
	if len(n) > MaxTaskNameBytes {
		return "", &Error{CodeInvalid, fmt.Sprintf("task_name is %d bytes, longer than the limit of %d; use a shorter name", len(n), MaxTaskNameBytes)}
	}
	if !taskNameRule.MatchString(n) {
		return "", &Error{CodeInvalid, "task_name must contain only letters, numbers, underscores, or hyphens"}
	}
	return n, nil
}

// JoinPath returns the path of a child named name under parent.
func JoinPath(parent, name string) string { return parent + "/" + name }

// PathDepth returns how deep path is below RootPath: 0 for RootPath
// itself, 1 for /root/a.
func PathDepth(path string) int {
	if path == RootPath {
		return 0
	}
	n := 0
	for _, part := range strings.Split(path, "/") {
		if part != "" {
			n++
		}
	}
	return n - 1
}

// ParentPath returns the path of path's parent ("/root/a" for
// "/root/a/b"); RootPath for a child of the root and for RootPath itself.
func ParentPath(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 || path == RootPath {
		return RootPath
	}
	return path[:i]
}

// Within reports whether path is prefix or below it (Memo's list filter:
// the path itself, or a path that starts with prefix and a slash).
func Within(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// SpawnRequest is what a spawn takes (SPEC §3, §14): the message, and the
// task name that ends the new agent's path ("" for its short id).
type SpawnRequest struct {
	Message  string `json:"message"`
	TaskName string `json:"task_name,omitempty"`
}

// Caller says who makes an operation, for the tree (SPEC §14): the agent
// whose running submission made the call (its parent for a spawn, and the
// start of a relative target), and the MCP session of the multi-agent
// family, whose root mailbox holds the ends of the agents it spawned. The
// control socket fills AgentID from the calling process (its peer
// credentials, as SPEC §6 nesting finds it); a front-end of the host's
// own process leaves it empty.
type Caller struct {
	// AgentID is the agent whose running submission made the call, ""
	// for a caller outside every submission (the root).
	AgentID string
	// Session names the `subdash mcp --tools multi-agent` session that
	// made the call (its root mailbox), "" for every other caller.
	Session string
	// Exact resolves targets as Memo's registry does (id, absolute path,
	// relative paths) without `subdash ctl`'s id prefixes.
	Exact bool
}

// callerKey is the context key of WithCaller.
type callerKey struct{}

// WithCaller returns ctx naming c as the caller of an operation.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the caller WithCaller put in ctx; the zero Caller (the
// root, a person) when none.
func CallerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// ErrPathExists is spawn's error for a path another agent holds (SPEC
// §14): Memo's "agent path already exists: <path>", then who holds it
// (holder, in words) and, for a holder that may be forgotten, how to free
// the path. Its code is CodeExists.
func ErrPathExists(path, holder string, forgettable bool) *Error {
	msg := "agent path already exists: " + path
	if holder != "" {
		msg += " (" + holder
		if forgettable {
			msg += "; free the path with: subdash ctl forget " + path
		}
		msg += ")"
	}
	return &Error{CodeExists, msg}
}

// ErrDepth is spawn's error below the depth limit (SPEC §14): Memo's
// "subagent depth limit reached (<max>)".
func ErrDepth(limit int) *Error {
	return &Error{CodeInvalid, fmt.Sprintf("subagent depth limit reached (%d)", limit)}
}

// ErrAmbiguous is the error of a target that names more than one agent
// (SPEC §14); matches name them ("/root/a/review (1a2b3c4d)").
func ErrAmbiguous(target string, matches []string) *Error {
	return &Error{CodeInvalid, fmt.Sprintf("target %s matches more than one agent: %s; give an absolute path or the agent id",
		target, strings.Join(matches, " and "))}
}

// The statuses of the multi-agent family (SPEC §14), Memo's words; the
// other doors keep SPEC §1's four.
const (
	TreePendingInit = "pending_init" // a submission waits for a slot of the concurrency limit
	TreeRunning     = "running"      // its latest submission runs
	TreeInterrupted = "interrupted"  // its latest submission was interrupted; not final
	TreeCompleted   = "completed"    // its latest submission exited 0
	TreeErrored     = "errored"      // its latest submission failed or could not start
	TreeShutdown    = "shutdown"     // closed
)

// FormatEnd is the text of a mailbox item that says a child ended (SPEC
// §14), as Memo hands it to its model:
// <agent_completion path="…" status="…">, the detail, the closing tag.
func FormatEnd(path, status, detail string) string {
	return `<agent_completion path="` + path + `" status="` + status + "\">\n" + detail + "\n</agent_completion>"
}

// FormatMessage is the text of a mailbox item that holds a message from
// agent (or person) author to recipient (SPEC §14), as Memo hands it to
// its model: <agent_message author="…" recipient="…">, the message, the
// closing tag; the attributes escaped as Memo escapes them.
func FormatMessage(author, recipient, content string) string {
	return `<agent_message author="` + escapeAttr(author) + `" recipient="` + escapeAttr(recipient) + "\">\n" +
		content + "\n</agent_message>"
}

var attrEscaper = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;")

func escapeAttr(v string) string { return attrEscaper.Replace(v) }

// TreeAgent is an agent as the multi-agent family shows it (SPEC §14,
// Memo's compactAgent): its id, path, task name (the path's last part),
// the family's status word (TreeRunning, …), its last answer and its
// error (null when none; the error only when errored).
type TreeAgent struct {
	AgentID     string  `json:"agent_id"`
	AgentPath   string  `json:"agent_path"`
	TaskName    string  `json:"task_name"`
	Status      string  `json:"status"`
	LastMessage *string `json:"last_message"`
	Error       *string `json:"error"`
	// PendingQuestions are what the agent asks and waits on (SPEC §12
	// "Questions"), beyond Memo's fields; omitted when none.
	PendingQuestions []PendingQuestion `json:"pending_questions,omitempty"`
}

// TreeList is the answer of the multi-agent family's list_agents.
type TreeList struct {
	Agents []TreeAgent `json:"agents"`
}

// MailItem is one item a wait on a mailbox hands over (SPEC §14): Seq
// numbers it (a later wait acknowledges it by number), Text is what Memo
// hands its model (FormatEnd, FormatMessage); for the end of a child,
// EndOf, Path and Status say which and how.
type MailItem struct {
	Seq    uint64 `json:"seq"`
	Text   string `json:"text"`
	From   string `json:"from,omitempty"`
	EndOf  string `json:"end_of,omitempty"`
	Path   string `json:"path,omitempty"`
	Status string `json:"status,omitempty"`
}

// The activities that end a wait on a mailbox (Memo's InputQueueActivity).
const (
	ActivityMailbox = "mailbox" // items are there
	ActivityTimeout = "timeout" // the wait's timeout passed with nothing there
	ActivityClosed  = "closed"  // the caller's agent was closed, or its host ends
)

// MailboxResult is what a wait on the caller's mailbox answers: why it
// returned and the items not acknowledged yet, oldest first.
type MailboxResult struct {
	Activity string     `json:"activity"`
	TimedOut bool       `json:"timed_out"`
	Items    []MailItem `json:"items"`
}

// MultiAgent is the role behind the multi-agent MCP family (SPEC §14,
// Memo 0.9's six tools): each call acts for proto.CallerOf(ctx), whose
// Session names its root mailbox. Errors are Memo's texts (its tools put
// "<tool> failed: " before them).
type MultiAgent interface {
	// SpawnTree creates an agent under the caller named taskName and
	// starts its first submission; its answer shows the new agent.
	SpawnTree(ctx context.Context, message, taskName string) (TreeAgent, error)
	// MessageAgent puts message into target's mailbox: held for its next
	// submission, or with trigger a follow-up that starts one now when it
	// is idle (waiting for a slot at the limit), else queued for the end
	// of the running one. Target RootPath is the caller's root mailbox
	// (not with trigger). It answers the receiver.
	MessageAgent(ctx context.Context, target, message string, trigger bool) (TreeAgent, error)
	// InterruptAgent interrupts target's running submission, if any, and
	// answers the agent with its status before.
	InterruptAgent(ctx context.Context, target string) (TreeAgent, error)
	// WaitMailbox waits until the caller's mailbox holds an item, or
	// timeoutMS (nil: DefaultWaitTimeoutMS), and answers its items; those
	// numbered up to ack were handed over before and are taken out first.
	WaitMailbox(ctx context.Context, timeoutMS *int, ack uint64) (MailboxResult, error)
	// ListTree answers the agents at or below pathPrefix (absolute, or
	// relative to the caller's path; "" for the caller's), by path.
	ListTree(ctx context.Context, pathPrefix string) (TreeList, error)
}
