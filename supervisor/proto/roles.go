package proto

import (
	"context"
	"io"
)

// The role interfaces: what a front-end asks of a host, split by how the
// answer comes. The engine (*supervisor.Supervisor) implements every one
// for the agents of its own process; the control socket's client
// (*client.Client) implements Reader, Operator, Waiter and Lister over
// the socket, and a viewer's backend (*client.Remote) adds Viewer from
// what the host pushed. A front-end composes the roles it needs: the
// dashboard Viewer, Reader and Operator (ui.Supervisor), the MCP tools
// Operator, Waiter and Lister. Starting and stopping a host is not a role
// here: a viewer never stops anything (SPEC §9).
//
// Every failure of an operation is an *Error carrying SPEC §3's text;
// clients add their own errors (the host is not serving, does not
// answer). ctx bounds each call of the blocking roles: a client gives up
// when it ends, and Wait stops waiting.

// Viewer answers from memory and never blocks, so a dashboard may call it
// in its forwarding goroutine and in commands (never in Update, which gets
// copies by messages).
type Viewer interface {
	// Agents returns a snapshot of every agent, oldest first, each
	// submission with its output counts; the caller owns the slice.
	Agents() []AgentInfo
	// HostConfig returns what a dashboard shows of the host's settings.
	HostConfig() HostConfig
}

// Reader is what a dashboard reads that may block (the log files, the
// socket): call it in commands. Positions are absolute line (entry)
// numbers; seq is a submission's number, 1-based, 0 the latest.
type Reader interface {
	// Window returns up to n display lines of submission seq of agent id
	// from line from; from < 0 asks for the last n (the bottom of the
	// log, follow mode). A submission whose lines were released from
	// memory is read back from its log file first, so the Window holds
	// them (Evicted stays false). Errors: unknown agent or submission.
	Window(ctx context.Context, id string, seq int, from int64, n int) (Window, error)
	// Transcript is Window for the transcript entries of a structured
	// submission (SPEC §8); ok is false when it has none.
	Transcript(ctx context.Context, id string, seq int, from int64, n int) (w TranscriptWindow, ok bool, err error)
	// Search finds the items (display lines or, with transcript, the
	// transcript entries) from item from on whose plain text holds query
	// (case ignored when query has no upper-case letter, as less does).
	Search(ctx context.Context, id string, seq int, transcript bool, query string, from int64) (SearchResult, error)
	// Message returns the whole message of submission seq: snapshots hold
	// only its head (SPEC §10, MessageCut).
	Message(ctx context.Context, id string, seq int) (string, error)
	// WriteLines writes every display line of submission seq to w, read
	// from its log file (SGR kept when keepSGR): the pager's feed. An
	// error found before the first write is the operation's (unknown
	// agent or submission); a failure after it says so, never a short
	// success.
	WriteLines(ctx context.Context, w io.Writer, id string, seq int, keepSGR bool) error
	// Storage says where the host's logs are and how much space they take
	// (SPEC §10); measuring walks the state directory.
	Storage(ctx context.Context) (Storage, error)
}

// Operator holds the operations that change agents (SPEC §3, §10-§12).
// Results are the operation's own; the agents' new snapshots follow on
// the event path (Change).
type Operator interface {
	// Spawn creates an agent and starts its first submission with
	// message; the agent keeps OriginOf(ctx) as who spawned it.
	Spawn(ctx context.Context, message string) (SpawnResult, error)
	// SpawnAgent is Spawn with a task name that names the agent in the
	// tree (SPEC §14); the agent's parent is the agent whose submission
	// made the call (CallerOf(ctx)), else the root.
	SpawnAgent(ctx context.Context, req SpawnRequest) (SpawnResult, error)
	// Send starts the next submission of agent id; a running agent is
	// refused (ErrBusy) unless interrupt is set.
	Send(ctx context.Context, id, message string, interrupt bool) (SendResult, error)
	// Queue keeps message to start when the running submission ends by
	// itself, or sends it at once when nothing runs (SPEC §11).
	Queue(ctx context.Context, id, message string) (SendResult, error)
	// Steer writes message into the running submission of agent id when
	// the agent takes messages while it runs, answering at once with the
	// message's id and receipt pending; an idle agent gets a plain send;
	// one that reads its message once is refused (ErrCannotSteer; SPEC
	// §11).
	Steer(ctx context.Context, id, message string) (SendResult, error)
	// CancelQueue drops the queued message (ErrNoQueue when none).
	CancelQueue(ctx context.Context, id string) (StatusResult, error)
	// Interrupt terminates the running submission (ErrNotRunning when
	// none) and returns once its process group is gone.
	Interrupt(ctx context.Context, id string) (StatusResult, error)
	// Close closes the agent, terminating its running submission first.
	Close(ctx context.Context, id string) (StatusResult, error)
	// CloseMany closes the agents req selects, each with its
	// descendants, terminating every running submission among them at
	// once; it returns once their process groups are gone.
	CloseMany(ctx context.Context, req CloseManyRequest) (CloseManyResult, error)
	// Resume reopens a closed agent; it starts nothing.
	Resume(ctx context.Context, id string) (StatusResult, error)
	// Forget removes a finished or closed agent for good (SPEC §10).
	Forget(ctx context.Context, id string) (StatusResult, error)
	// Approve allows the pending tool permission request requestID (""
	// = the oldest) of agent id, with always for the rest of its session
	// (SPEC §12); Deny refuses it with message ("" = the default reason).
	Approve(ctx context.Context, id, requestID string, always bool) (ApprovalResult, error)
	Deny(ctx context.Context, id, requestID, message string) (ApprovalResult, error)
	// MarkSeen records that a dashboard shows agent id: it no longer
	// needs you, in every dashboard of the host (SPEC §11).
	MarkSeen(ctx context.Context, id string) (StatusResult, error)
}

// MessageFiles are the operations on a message that may be too long to
// hold whole (up to MaxMessageBytes, SPEC §10): it goes from file to
// stream to file, never into one string. The engine implements them on
// the kept .msg files; a viewer's backend over the socket, streaming
// (FeatureResendFile, FeatureTextMessage).
type MessageFiles interface {
	// WriteMessage writes the whole message of submission seq (0 = the
	// latest) of agent id to w as it is read. Errors: those of Message;
	// a failure after the first write says so.
	WriteMessage(ctx context.Context, w io.Writer, id string, seq int) error
	// SendFrom is Send, or with queue Queue, of the message read from r
	// to its end (SPEC §3's rules: trimmed, at most MaxMessageBytes).
	SendFrom(ctx context.Context, id string, r io.Reader, interrupt, queue bool) (SendResult, error)
	// Resend sends again (queue: queues) the whole message of agent
	// id's latest submission, which the host reads from its kept file.
	// Errors: no message to resend; those of Send and Queue.
	Resend(ctx context.Context, id string, interrupt, queue bool) (SendResult, error)
}

// Waiter waits for agents (SPEC §3 wait): until one of ids is final, or
// the timeout (timeoutMS nil: DefaultWaitTimeoutMS; clamped to
// MinWaitTimeoutMS-MaxWaitTimeoutMS), or ctx ends, whose error it then
// returns.
type Waiter interface {
	Wait(ctx context.Context, ids []string, timeoutMS *int) (WaitResult, error)
}

// Lister is what a program reads of a host (SPEC §3 list and logs): `subdash
// ctl` and the MCP tools.
type Lister interface {
	// List returns every agent's summary, oldest first, and the host's
	// own failure.
	List(ctx context.Context) (ListResult, error)
	// WriteLogs writes the output of submission seq of agent id to w as
	// it is read: plain text, or with raw the log file's bytes unchanged.
	// An error found before anything was written is the operation's.
	WriteLogs(ctx context.Context, w io.Writer, id string, seq int, raw bool) error
}

// originKey is the context key of WithOrigin.
type originKey struct{}

// WithOrigin returns ctx naming who asks for an operation ("mcp", "ctl",
// "viewer", a program's name): a spawned agent keeps it
// (AgentInfo.Origin). The host's own dashboard names no one.
func WithOrigin(ctx context.Context, origin string) context.Context {
	return context.WithValue(ctx, originKey{}, origin)
}

// OriginOf returns the origin WithOrigin put in ctx, "" when none.
func OriginOf(ctx context.Context) string {
	o, _ := ctx.Value(originKey{}).(string)
	return o
}
