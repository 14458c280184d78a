// Package journal is a host's journal of its run (SPEC §5, §10): the
// lifecycle events of its agents and submissions, one JSON line each, in
// <state-dir>/runs/<run-id>/journal.jsonl, and the records of agents that a
// later host rebuilds from the journals of earlier runs.
//
// What lives here:
//
//   - Event, one line of a journal, with the JSON names it has on disk
//     (journals written by earlier releases must still restore; a test
//     replays journals written by the release before this package);
//   - Writer, which appends events, one write(2) each, and reports the
//     first write that fails (SPEC §5);
//   - the one reader of runs: ListRuns reads the first line of every run's
//     journal (its working directory, start and host pid), Read hands the
//     events of one journal to whoever needs them, tolerating damaged lines
//     and a last line cut by a host killed mid-write and reporting them,
//     and EndedCleanly reads only a journal's last line;
//   - AgentRecord and Load, which replays the runs of one working
//     directory into the records a restoring host turns into agents.
//
// Who imports it: the engine (package supervisor) only: it writes its
// run's journal, restores records at start, applies --log-retention and
// hands the orphan sweep its candidates (Unended). Front-ends never read
// journals.
package journal

import "github.com/subdash/subdash/supervisor/proto"

// Event is one line of a run's journal.jsonl (SPEC §5): a lifecycle event
// of the run, an agent or a submission. Fields that do not apply are
// omitted. The JSON names are the format on disk: never rename one.
type Event struct {
	Time         proto.Time `json:"time"`
	Event        string     `json:"event"` // run_started, spawned, submission_started, submission_ended, sent, interrupted, closed, resumed, record, records_restored, shutdown, run_ended, ...
	AgentID      string     `json:"agent_id,omitempty"`
	SubmissionID string     `json:"submission_id,omitempty"`
	Seq          int        `json:"seq,omitempty"`
	// Message is the message's head (MessageHead) when MessageBytes is
	// set, else the message cut at 64 KiB; the whole message is in the
	// submission's .msg file.
	Message string `json:"message,omitempty"`
	// MessageBytes is the whole message's length, when Message is its head.
	MessageBytes int          `json:"message_bytes,omitempty"`
	Command      string       `json:"command,omitempty"`
	PID          int          `json:"pid,omitempty"`
	ExitCode     *int         `json:"exit_code,omitempty"`
	Signal       string       `json:"signal,omitempty"`
	Status       proto.Status `json:"status,omitempty"`
	LastError    string       `json:"last_error,omitempty"`
	// LogDropped is how many bytes of the submission's output its log
	// files do not hold (submission_ended; SPEC §5).
	LogDropped int64  `json:"log_dropped,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	Log        string `json:"log,omitempty"`
	RequestID  string `json:"request_id,omitempty"` // approval events (SPEC §12)
	Tool       string `json:"tool,omitempty"`       // approval events
	Decision   string `json:"decision,omitempty"`   // approval_answered: allow, allow_always, deny
	Note       string `json:"note,omitempty"`
	// Questions are what a question_requested event asks (SPEC §12
	// "Questions"); Answers what its question_answered event answered,
	// question text to answer.
	Questions []proto.Question  `json:"questions,omitempty"`
	Answers   map[string]string `json:"answers,omitempty"`
	// Dir is the working directory of the run (run_started) (SPEC §10).
	Dir string `json:"dir,omitempty"`
	// LastOutput is the agent's last_output after the submission ended
	// (submission_ended), at most 2000 characters (SPEC §4).
	LastOutput *string `json:"last_output,omitempty"`
	// Usage is what the agent CLI reported for the submission
	// (submission_ended, presets).
	Usage *proto.Usage `json:"usage,omitempty"`
	// InnerAgents are the inner agents the submission's CLI started, as
	// they were when it ended (submission_ended; SPEC §8).
	InnerAgents []proto.InnerAgent `json:"inner_agents,omitempty"`
	// Preset and Runner say how the agent was spawned (spawned): a preset
	// (then Command is its description) or a plain agent command, run by
	// the runner named ("local").
	Preset *PresetRecord `json:"preset,omitempty"`
	Runner string        `json:"runner,omitempty"`
	// Builtin: Command is the built-in agent (spawned; AgentRecord.Builtin).
	Builtin bool `json:"builtin,omitempty"`
	// Record is an agent's whole record (event "record"), written at the
	// start of a run for every record it carries on (see Load).
	Record *AgentRecord `json:"record,omitempty"`

	// The agent tree (SPEC §14), in spawned: the task name, the path and
	// the parent's id; Session, in spawned and in the mailbox events, is
	// the MCP session whose root mailbox the agent's ends go to (or, with
	// no AgentID, whose mailbox the event is about).
	TaskName  string `json:"task_name,omitempty"`
	AgentPath string `json:"agent_path,omitempty"`
	ParentID  string `json:"parent_id,omitempty"`
	Session   string `json:"session,omitempty"`
	// ClosedBy, in closed, is the agent whose close closed this one too
	// (a close cascades to the descendants; resume of it reopens them).
	ClosedBy string `json:"closed_by,omitempty"`
	// Mail is the item put into a mailbox (event "mail"); Seqs are the
	// items taken out of one: by a submission (spawned, sent), by a
	// cancel or a close (mail_removed), by a wait (mail_taken).
	Mail *MailRecord `json:"mail,omitempty"`
	// Steered is a steered message of submission Seq with its receipt
	// (events steered and steer_receipt, SPEC §11).
	Steered *proto.SteeredMessage `json:"steered,omitempty"`
	// Changes is a submission's changes (event "changes", SPEC §15).
	Changes *ChangesRecord `json:"changes,omitempty"`
	Seqs    []uint64       `json:"seqs,omitempty"`
	// Mailbox is a session's root mailbox (event "mailbox"), written in the
	// checkpoint as records are.
	Mailbox *MailboxRecord `json:"mailbox,omitempty"`
}
