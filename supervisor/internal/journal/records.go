package journal

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/proto"
)

// MaxMessageHead is how much of a message is kept in memory and in the
// records, in bytes; the whole message is in its .msg file (SPEC §10).
const MaxMessageHead = 4 << 10

// PresetRecord is the preset an agent was spawned with, as the journal
// keeps it (SPEC §8, §10).
type PresetRecord struct {
	Name       string `json:"name"`
	Args       string `json:"args,omitempty"`
	Executable string `json:"executable,omitempty"` // this binary, for the builtin preset
	Approvals  bool   `json:"approvals,omitempty"`  // --approvals (SPEC §12)
	// Home is the agent's own home of the CLI: memo's MEMO_HOME on the
	// local runner (SPEC §8), kept so a restored agent continues there.
	Home string `json:"home,omitempty"`
}

// AgentRecord is an agent's record as the journal keeps it (SPEC §10): what
// a later host needs to show the agent and continue it. Messages are heads
// of at most MaxMessageHead bytes; the whole message of each submission is
// in its MessageFile.
type AgentRecord struct {
	AgentID     string        `json:"agent_id"`
	Dir         string        `json:"dir"`
	Status      proto.Status  `json:"status"`
	BeforeClose proto.Status  `json:"before_close,omitempty"` // a closed agent's status before its close, which resume gives back
	CreatedAt   proto.Time    `json:"created_at"`
	UpdatedAt   proto.Time    `json:"updated_at"`
	LastMessage string        `json:"last_message"`
	LastOutput  *string       `json:"last_output,omitempty"`
	LastError   *string       `json:"last_error,omitempty"`
	SessionID   string        `json:"session_id,omitempty"`
	Command     string        `json:"command,omitempty"`
	Preset      *PresetRecord `json:"preset,omitempty"`
	// Runner names the runner the agent was spawned on (runner.Local for
	// an agent whose spawned line was lost); "" in the records of an older
	// subdash, which a host takes as its local runner.
	Runner string `json:"runner,omitempty"`
	// Builtin: Command is the built-in agent of the binary that spawned
	// it; a restoring host runs its own binary's (as for the builtin
	// preset), since the path of the one that wrote the record may be gone.
	Builtin     bool               `json:"builtin,omitempty"`
	Usage       proto.Usage        `json:"usage"`
	Submissions []SubmissionRecord `json:"submissions"`
	// The agent tree (SPEC §14): task name, path, parent, the MCP session
	// of its root mailbox, and the agent whose close closed it too.
	TaskName  string `json:"task_name,omitempty"`
	AgentPath string `json:"agent_path,omitempty"`
	ParentID  string `json:"parent_id,omitempty"`
	Session   string `json:"session,omitempty"`
	ClosedBy  string `json:"closed_by,omitempty"`
	// AlwaysAllowed are the tools a person allowed for the rest of the
	// agent's session (SPEC §12, allow always), sorted: the CLI session
	// goes on after a restart, and so does the answer.
	AlwaysAllowed []string `json:"always_allowed,omitempty"`
	// Mailbox holds the items of its mailbox not taken yet, oldest first
	// (SPEC §11, §14).
	Mailbox []MailRecord `json:"mailbox,omitempty"`
	// InnerAgents are the inner agents of its ended submissions, oldest
	// first (SPEC §8), at most proto.MaxInnerAgents.
	InnerAgents []proto.InnerAgent `json:"inner_agents,omitempty"`

	// src is where its JSON is in the journal it was read from, while it
	// is what that JSON says (see Carry): every change replay makes to a
	// record drops it (changed).
	src *source
}

// MailRecord is one item of a mailbox as the journal keeps it (SPEC §11,
// §14): a message held or queued for an agent's next submission, whose
// whole text is in MessageFile, or the end of a child (EndOf set), whose
// text Message holds.
type MailRecord struct {
	Seq          uint64     `json:"seq"`
	Queued       bool       `json:"trigger,omitempty"` // a queued message: starts the next submission
	From         string     `json:"from,omitempty"`    // the sender's agent path
	At           proto.Time `json:"at"`
	Message      string     `json:"message"` // the head (MessageHead)
	MessageBytes int        `json:"message_bytes"`
	MessageFile  string     `json:"message_file,omitempty"`
	EndOf        string     `json:"end_of,omitempty"` // the child's id
	EndPath      string     `json:"end_path,omitempty"`
	EndStatus    string     `json:"end_status,omitempty"` // the multi-agent family's status word
	Detail       string     `json:"detail,omitempty"`     // its last answer or error
}

// MailboxRecord is the root mailbox of one MCP session (SPEC §14): the
// ends of the agents it spawned and the messages they sent to /root, not
// taken by a wait yet.
type MailboxRecord struct {
	Session string       `json:"session"`
	Dir     string       `json:"dir"`
	Items   []MailRecord `json:"items"`
}

// SubmissionRecord is one submission of an AgentRecord.
type SubmissionRecord struct {
	ID           string       `json:"id"`
	Seq          int          `json:"seq"`
	Message      string       `json:"message"`                // the head, at most MaxMessageHead bytes
	MessageBytes int          `json:"message_bytes"`          // the whole message's length in bytes
	MessageFile  string       `json:"message_file,omitempty"` // the whole message: <seq>-<submission id>.msg beside the log
	Command      string       `json:"command,omitempty"`
	Log          string       `json:"log,omitempty"` // the output log file (SPEC §5)
	StartedAt    proto.Time   `json:"started_at"`
	EndedAt      proto.Time   `json:"ended_at"` // null when the record was written while it ran
	Status       proto.Status `json:"status"`
	ExitCode     *int         `json:"exit_code,omitempty"`
	Signal       string       `json:"signal,omitempty"`
	LastError    *string      `json:"last_error,omitempty"`
	// LogDropped is how many bytes of its output the log files do not
	// hold (SPEC §5).
	LogDropped int64 `json:"log_dropped,omitempty"`
	// Steered are the messages steered into it with their receipts
	// (SPEC §11), oldest first.
	Steered []proto.SteeredMessage `json:"steered,omitempty"`
	// Changes is what it changed in its work tree (SPEC §15), from the
	// changes events.
	Changes *ChangesRecord `json:"changes,omitempty"`
	// Questions are the question requests it made, pending and ended,
	// oldest first (SPEC §12 "Questions").
	Questions []QuestionRecord `json:"questions,omitempty"`
}

// ChangesRecord is a submission's changes to its git work tree (event
// "changes", SPEC §15): the work tree's top, the snapshot trees at its
// start (From) and end (To) and the object store holding them (Objects,
// in the run's folder; "" for the repository's, where an earlier release
// put them), whether they hold the tracked files only (NoUntracked), the
// counts once Counted, whether other submissions ran there meanwhile, and
// why they are not tracked.
type ChangesRecord struct {
	Root        string `json:"root,omitempty"`
	From        string `json:"from,omitempty"`
	To          string `json:"to,omitempty"`
	Objects     string `json:"objects,omitempty"`
	NoUntracked bool   `json:"no_untracked,omitempty"`
	NotTracked  string `json:"not_tracked,omitempty"`
	Note        string `json:"note,omitempty"`
	Files       int    `json:"files,omitempty"`
	Added       int    `json:"added,omitempty"`
	Removed     int    `json:"removed,omitempty"`
	Shared      bool   `json:"shared,omitempty"`
	Counted     bool   `json:"counted,omitempty"`
}

// MessageHead returns the head of msg that memory and the records keep:
// msg itself up to MaxMessageHead bytes, else its first bytes (whole
// characters) and a marker giving the whole length.
func MessageHead(msg string) string {
	return HeadOf(msg[:min(len(msg), MaxMessageHead+1)], len(msg))
}

// HeadOf returns the head of a message of size bytes that starts with
// prefix (at least MaxMessageHead+1 bytes of it, or all of it), as
// MessageHead does: for a message read from a stream, whose rest is not
// in memory.
func HeadOf(prefix string, size int) string {
	return proto.MessageHead(prefix, size, MaxMessageHead)
}

// LogPath returns the log file of submission seq (its id subID) of agent
// agentID in the run folder runDir: <runDir>/<agent id>/<seq>-<id>.log.
func LogPath(runDir, agentID string, seq int, subID string) string {
	return filepath.Join(runDir, agentID, strconv.Itoa(seq)+"-"+subID+".log")
}

// MessagePath returns the message file beside a submission's log file:
// <seq>-<id>.msg for <seq>-<id>.log.
func MessagePath(logPath string) string {
	return strings.TrimSuffix(logPath, ".log") + ".msg"
}
