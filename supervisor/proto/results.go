package proto

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"
)

// Summary is an agent's summary as returned by list (SPEC §3): the spawn
// result's fields without submission_id. SessionID is the agent CLI's session
// or thread id for presets (SPEC §8), omitted when there is none.
type Summary struct {
	AgentID string `json:"agent_id"`
	// AgentPath is the agent's place in the tree (SPEC §14): its parent's
	// path (RootPath for an agent spawned from outside every submission),
	// a slash, and its TaskName or, without one, its short id; always
	// present. ParentID is the id of the agent whose submission spawned
	// it, omitted for a child of the root.
	AgentPath string `json:"agent_path"`
	TaskName  string `json:"task_name,omitempty"`
	ParentID  string `json:"parent_id,omitempty"`
	Status    Status `json:"status"`
	// CreatedAt is when the agent was spawned, UpdatedAt when it last
	// changed (a submission started or ended, a message was queued, it
	// was closed); RFC 3339 in UTC with milliseconds (Time).
	CreatedAt Time `json:"created_at"`
	UpdatedAt Time `json:"updated_at"`
	// LastMessage is the message of its latest submission, cut at
	// MaxJSONMessage characters in the JSON of list, spawn and wait (not
	// in a viewer's agent event, AgentInfo); LastSubmissionID that
	// submission's id.
	LastMessage      string `json:"last_message"`
	LastSubmissionID string `json:"last_submission_id"`
	// HasLastOutput and HasLastError say whether the latest submission
	// has a last_output (SPEC §4: the tail of its stdout, then of its
	// stderr) or a last_error, which wait gives (WaitDetail); list itself
	// carries neither.
	HasLastOutput bool   `json:"has_last_output"`
	HasLastError  bool   `json:"has_last_error"`
	SessionID     string `json:"session_id,omitempty"`
	// Restored is true for an agent restored from an earlier run of its
	// host (SPEC §10).
	Restored bool `json:"restored,omitempty"`
	// PendingApprovals are the tool permission requests that wait for an
	// answer, oldest first (--approvals, SPEC §12); omitted when none.
	PendingApprovals []PendingApproval `json:"pending_approvals,omitempty"`
	// PendingQuestions are the questions the agent asks and waits on,
	// oldest first (claude's AskUserQuestion, SPEC §12 "Questions");
	// omitted when none.
	PendingQuestions []PendingQuestion `json:"pending_questions,omitempty"`
	// NeedsYou says why the agent needs the user (SPEC §11); omitted when
	// it does not.
	NeedsYou *Attention `json:"needs_you,omitempty"`
	// QueuedMessage is the message queued to start when the running
	// submission ends (SPEC §11), cut as LastMessage in JSON; omitted when
	// none is queued.
	QueuedMessage string `json:"queued_message,omitempty"`
	// QueuedMessages are all the messages held for the agent's next
	// submission, oldest first (SPEC §11, §14), each cut as LastMessage
	// in JSON; QueuedMessage is the first. Omitted when none.
	QueuedMessages []string `json:"queued_messages,omitempty"`
	// PendingStart is true while a follow-up of the multi-agent family
	// waits for a slot of the concurrency limit to start the agent's next
	// submission (pending_init, SPEC §14); a mark, not a status.
	PendingStart bool `json:"pending_start,omitempty"`
	// SteeredMessages are the messages steered into the agent's
	// submissions, oldest first, each with its receipt (SPEC §11 steer):
	// those of its latest submission and the ones of earlier submissions
	// that were not delivered; omitted when none.
	SteeredMessages []SteeredMessage `json:"steered_messages,omitempty"`
	// Steerable is true when the agent takes messages while it runs
	// (the claude preset, the built-in agent) on a host that steers:
	// front-ends offer steer only then (SPEC §11).
	Steerable bool `json:"steerable,omitempty"`
	// Pod and Node say where the agent's latest submission runs with the
	// Kubernetes runner (SPEC §13); omitted for the local runner.
	Pod  string `json:"pod,omitempty"`
	Node string `json:"node,omitempty"`
	// Failure says in words, with the path, what subdash failed to do for
	// this agent: its latest submission's log file or the journal could
	// not be written (SPEC §5); omitted when nothing failed.
	Failure string `json:"failure,omitempty"`
	// LogDropped is how many bytes of the latest submission's output its
	// log files do not hold: dropped by --max-log-size, or not written
	// while free space was below the floor (SPEC §5); omitted when none.
	LogDropped int64 `json:"log_dropped,omitempty"`
	// InnerAgents are the subagents its agent CLI started inside its
	// submissions, oldest first, at most MaxInnerAgents (SPEC §8 "Inner
	// agents", FeatureInnerAgents); omitted when none.
	InnerAgents []InnerAgent `json:"inner_agents,omitempty"`
	// Changes is what the latest submission changed in its working tree
	// (SPEC §15); omitted with --track-changes=false.
	Changes *Changes `json:"changes,omitempty"`
	// StalledSince is when the agent's running submission turned stalled:
	// no output, no event and no CPU time used by its process group for
	// --stall-after (SPEC §11 "Stalled", FeatureStall); omitted when it
	// is not stalled. A mark, not a status.
	StalledSince *Time `json:"stalled_since,omitempty"`
	// Usage is the tokens and cost its agent CLI reported over all its
	// submissions, the running one so far (presets that report them:
	// SPEC §8); omitted when none was reported. AgentInfo's own Usage
	// (key "Usage") holds the same.
	Usage *Usage `json:"usage,omitempty"`
	// RunCostUSD is what the agent spent on this host since it started
	// (its restored record's cost excluded; the running submission's so
	// far included): the host's fleet spend is their sum, its forgotten
	// agents' too (SPEC §11 "Budgets"); omitted when 0.
	RunCostUSD float64 `json:"run_cost_usd,omitempty"`
	// BudgetReached says why the agent starts no new submission: it spent
	// its --max-budget-usd (the refusal's text); omitted while it may.
	BudgetReached string `json:"budget_reached,omitempty"`
	// OutputRate is how much output its latest submission read in each of
	// the last RateBuckets buckets (SPEC §7 the activity column,
	// FeatureOutputRate); omitted when it read none in that time.
	OutputRate *OutputRate `json:"output_rate,omitempty"`
	// Now says in one clean line (at most 200 characters) what the agent
	// is doing now, or how its latest submission ended (SPEC §7, the
	// table's NOW column, FeatureNow): while it runs, its agent CLI's
	// current tool and argument ("→ Bash npm test") or latest words,
	// else its newest output line; what an approval it waits for asks;
	// that a follow-up waits for a free slot; once ended, why it errored
	// (the CLI's own error, else the last line of stderr, else of stdout,
	// and how the process ended: "oops · exit 3") or the first line of
	// its answer (a preset) or last line of its output. Omitted when
	// there is nothing to say (no output yet).
	Now string `json:"now,omitempty"`
}

// SpawnResult is the result of Spawn (SPEC §3 spawn): the new agent's summary
// plus the id of its first submission.
type SpawnResult struct {
	Summary
	SubmissionID string `json:"submission_id"`
}

// MaxJSONMessage is the length, in characters, at which last_message is cut
// in JSON results (list, wait, spawn: ListResult, WaitDetail and
// SpawnResult encode so; a Summary alone is whole): a message may be megabytes (a diff
// sent with `ctl send ID -`), and an orchestrating model reads these results
// into its context. The cut keeps the head and ends with "...[truncated]".
// Go callers (the dashboard's resend) get the whole message.
const MaxJSONMessage = 2000

// summaryFields is Summary without its methods, for encoding.
type summaryFields Summary

// MarshalJSON encodes the spawn result with last_message cut at
// MaxJSONMessage.
func (r SpawnResult) MarshalJSON() ([]byte, error) {
	f := struct {
		summaryFields
		SubmissionID string `json:"submission_id"`
	}{summaryFields(r.Summary), r.SubmissionID}
	f.capMessages()
	return json.Marshal(f)
}

// writeJSON encodes the summary to enc with its messages cut at
// MaxJSONMessage, copying it only when one is cut; the summary is not
// changed.
func (s *Summary) writeJSON(enc *json.Encoder) error {
	f := (*summaryFields)(s)
	if f.long() {
		c := *f
		c.capMessages()
		f = &c
	}
	return enc.Encode(f)
}

// long reports whether capMessages would cut one of f's messages.
func (f *summaryFields) long() bool {
	over := func(m string) bool { return len(m) > MaxJSONMessage && utf8.RuneCountInString(m) > MaxJSONMessage }
	if over(f.LastMessage) || over(f.QueuedMessage) {
		return true
	}
	for _, m := range f.QueuedMessages {
		if over(m) {
			return true
		}
	}
	return false
}

// capMessages cuts the messages of f at MaxJSONMessage, in a copy of
// QueuedMessages (the caller's summary keeps its own).
func (f *summaryFields) capMessages() {
	f.LastMessage = capMessage(f.LastMessage)
	f.QueuedMessage = capMessage(f.QueuedMessage)
	if len(f.QueuedMessages) > 0 {
		q := make([]string, len(f.QueuedMessages))
		for i, m := range f.QueuedMessages {
			q[i] = capMessage(m)
		}
		f.QueuedMessages = q
	}
}

// capMessage cuts s to MaxJSONMessage characters, marking the cut.
func capMessage(s string) string {
	if utf8.RuneCountInString(s) <= MaxJSONMessage {
		return s
	}
	const marker = "...[truncated]"
	n := MaxJSONMessage - len(marker)
	for i := range s {
		if n == 0 {
			return s[:i] + marker
		}
		n--
	}
	return s
}

// SendResult is the result of Send (SPEC §3 send), Queue and Steer. Queued
// is true when Queue kept the message to start after the running
// submission (SubmissionID is then ""); DroppedQueued is set when a send
// with interrupt dropped a queued message (SPEC §11). A steer into a
// running submission sets MessageID (the steered message's id) and
// Receipt (ReceiptPending, or ReceiptNotDelivered when the submission's
// stdin had closed and the message was queued instead); SubmissionID is
// then the running submission's.
type SendResult struct {
	AgentID       string `json:"agent_id"`
	Status        Status `json:"status"`
	SubmissionID  string `json:"submission_id"`
	Queued        bool   `json:"queued,omitempty"`
	DroppedQueued bool   `json:"dropped_queued_message,omitempty"`
	MessageID     string `json:"message_id,omitempty"`
	Receipt       string `json:"receipt,omitempty"`
	Note          string `json:"note,omitempty"`
}

// StatusResult is the result of Interrupt, Close, Resume and CancelQueue:
// the agent's id and its status after the operation. DroppedQueued is set
// when the operation dropped (or, for CancelQueue, cancelled) a queued
// message (SPEC §11).
type StatusResult struct {
	AgentID       string `json:"agent_id"`
	Status        Status `json:"status"`
	DroppedQueued bool   `json:"dropped_queued_message,omitempty"`
	// Descendants are the ids of the agent's descendants that the
	// operation closed, reopened or forgot with it (SPEC §14), deepest
	// first; omitted when none.
	Descendants []string `json:"descendants,omitempty"`
}

// WaitDetail is what Wait reports for one final id (SPEC §3 wait). For an
// unknown id every field but Status is null.
type WaitDetail struct {
	Status Status `json:"status"`
	// LastMessage (cut at MaxJSONMessage in JSON), LastOutput (SPEC §4:
	// the tail of stdout, then of stderr, at most 2000 characters),
	// LastError (why it errored),
	// LastSubmissionID and UpdatedAt are the latest submission's, as in
	// Summary; each null for an unknown id or when there is none.
	LastMessage      *string `json:"last_message"`
	LastOutput       *string `json:"last_output"`
	LastError        *string `json:"last_error"`
	LastSubmissionID *string `json:"last_submission_id"`
	UpdatedAt        *Time   `json:"updated_at"`
	SessionID        string  `json:"session_id,omitempty"`
	// Failure is Summary.Failure (SPEC §5).
	Failure string `json:"failure,omitempty"`
	// TaskName, AgentPath and ParentID place the agent in the tree as
	// its Summary does (SPEC §14); omitted for an unknown id.
	TaskName  string `json:"task_name,omitempty"`
	AgentPath string `json:"agent_path,omitempty"`
	ParentID  string `json:"parent_id,omitempty"`
	// PendingQuestions is Summary.PendingQuestions: what a running agent
	// asks and waits on (SPEC §12 "Questions"); omitted when none.
	PendingQuestions []PendingQuestion `json:"pending_questions,omitempty"`
}

// waitDetailFields is WaitDetail without its methods, for encoding.
type waitDetailFields WaitDetail

// MarshalJSON encodes the detail with last_message cut at MaxJSONMessage.
func (d WaitDetail) MarshalJSON() ([]byte, error) {
	f := waitDetailFields(d)
	if f.LastMessage != nil {
		m := capMessage(*f.LastMessage)
		f.LastMessage = &m
	}
	return json.Marshal(f)
}

// WaitResult is the result of Wait. Status and Details hold only the final
// ids; on timeout both are empty (never null) and TimedOut is true.
type WaitResult struct {
	Status   map[string]Status     `json:"status"`
	Details  map[string]WaitDetail `json:"details"`
	TimedOut bool                  `json:"timed_out"`
}

// Wait timeouts of SPEC §3 wait, in milliseconds.
const (
	DefaultWaitTimeoutMS = 30000
	MinWaitTimeoutMS     = 10000
	MaxWaitTimeoutMS     = 300000
)

// TimeoutMS converts wait's timeout_ms as a JSON number arrives (a float64,
// possibly 1e20) to an int: the fraction dropped, a value beyond int's
// range at its nearest end. Wait then clamps it to [MinWaitTimeoutMS,
// MaxWaitTimeoutMS] or refuses it when not positive (SPEC §3).
func TimeoutMS(f float64) int {
	switch f = math.Trunc(f); {
	case f >= math.MaxInt:
		return math.MaxInt
	case f <= math.MinInt:
		return math.MinInt
	}
	return int(f)
}

// CloseManyRequest selects the agents of CloseMany (SPEC §3 close, POST
// /v1/close): exactly one of All (every agent not closed yet), Status
// (every agent of that status: running, completed or errored) and
// AgentIDs (those agents, by id or path as Close takes them). Check
// says what is wrong with a request.
type CloseManyRequest struct {
	All      bool     `json:"all,omitempty"`
	Status   Status   `json:"status,omitempty"`
	AgentIDs []string `json:"agent_ids,omitempty"`
}

// Check returns a CodeInvalid error when req selects in none or more than
// one way, or by a status that is not running, completed or errored.
func (req CloseManyRequest) Check() error {
	ways := 0
	for _, set := range []bool{req.All, req.Status != "", len(req.AgentIDs) > 0} {
		if set {
			ways++
		}
	}
	switch {
	case ways != 1:
		return &Error{CodeInvalid, "close many: give exactly one of all, status (running, completed or errored) and agent_ids"}
	case req.Status == StatusClosed:
		return &Error{CodeInvalid, "close many: agents of status closed are closed already; give running, completed or errored"}
	case req.Status != "" && req.Status != StatusRunning && req.Status != StatusCompleted && req.Status != StatusErrored:
		return &Error{CodeInvalid, fmt.Sprintf("close many: no status %q; give running, completed or errored", string(req.Status))}
	}
	return nil
}

// CloseManyResult is the result of CloseMany: the ids of the agents the
// call closed (the selected ones and their descendants, each subtree
// deepest first), and DroppedQueued when any of them had a queued
// message, which the close dropped (SPEC §11).
type CloseManyResult struct {
	Closed        []string `json:"closed"`
	DroppedQueued bool     `json:"dropped_queued_message,omitempty"`
}
