package proto

import "github.com/subdash/subdash/supervisor/transcript"

// InnerAgent is a subagent an agent CLI started inside one of the agent's
// submissions (claude's Agent tool: a task_started frame of task_type
// local_agent or local_workflow; SPEC §8 "Inner agents"). subdash cannot
// send to it or close it: interrupting the agent ends it. List carries
// them per agent as inner_agents (FeatureInnerAgents), oldest first;
// records keep them across restarts.
type InnerAgent struct {
	// TaskID is the CLI's id of the inner agent; ParentTaskID is the
	// inner agent that started it (claude's nested Agent calls), omitted
	// for one the agent itself started.
	TaskID       string `json:"task_id"`
	ParentTaskID string `json:"parent_task_id,omitempty"`
	// SubmissionSeq is the agent's submission it ran in (1-based).
	SubmissionSeq int    `json:"submission_seq"`
	Description   string `json:"description"`
	TaskType      string `json:"task_type"` // the CLI's: local_agent, local_workflow
	// Status is in subdash's words: InnerRunning, InnerCompleted,
	// InnerInterrupted or InnerErrored. CLIStatus is the CLI's own last
	// word (claude: completed, stopped, killed), omitted while it said none.
	Status    string `json:"status"`
	CLIStatus string `json:"cli_status,omitempty"`
	// LastTool is the name of the last tool it called, ToolCount how many
	// it called, as the CLI reports them.
	LastTool  string `json:"last_tool,omitempty"`
	ToolCount int    `json:"tool_count"`
	// Tokens is the token count the CLI reports for it, omitted when none
	// is: claude reports the size (input + output) of its latest model
	// request, not a sum; its spend is inside the agent's own usage.
	Tokens int64 `json:"tokens,omitempty"`
	// ElapsedMS is how long it ran, in milliseconds, as the CLI last
	// reported it (0 until it does).
	ElapsedMS int64 `json:"elapsed_ms,omitempty"`
	// StartedAt is when subdash read its start; EndedAt when it read its
	// end (null while it runs).
	StartedAt Time `json:"started_at"`
	EndedAt   Time `json:"ended_at"`
	// Summary is the CLI's one-line summary of its end (claude's
	// task_notification summary), omitted before.
	Summary string `json:"summary,omitempty"`
}

// The statuses of an inner agent, in subdash's words (InnerAgent.Status).
const (
	InnerRunning     = transcript.InnerRunning
	InnerCompleted   = transcript.InnerCompleted
	InnerInterrupted = transcript.InnerInterrupted // stopped or killed, or its submission ended first
	InnerErrored     = transcript.InnerErrored     // the CLI said it failed
)

// InnerAgentOf returns the InnerAgent of what the parser read in
// submission seq.
func InnerAgentOf(a transcript.InnerAgent, seq int) InnerAgent {
	return InnerAgent{
		TaskID: a.TaskID, ParentTaskID: a.ParentTaskID, SubmissionSeq: seq, Description: a.Description,
		TaskType: a.TaskType, Status: a.Status, CLIStatus: a.CLIStatus, LastTool: a.LastTool,
		ToolCount: a.ToolCount, Tokens: a.Tokens, ElapsedMS: a.ElapsedMS,
		StartedAt: Time{Time: a.StartedAt}, EndedAt: Time{Time: a.EndedAt}, Summary: a.Summary,
	}
}

// MaxInnerAgents bounds the inner agents kept per agent: the newest are
// kept, and InnerAgent entries past it are dropped oldest first.
const MaxInnerAgents = 200

// AppendInner returns list with more appended, the oldest dropped past
// MaxInnerAgents; list is not changed when it is cut.
func AppendInner(list, more []InnerAgent) []InnerAgent {
	if len(more) == 0 {
		return list
	}
	list = append(list, more...)
	if over := len(list) - MaxInnerAgents; over > 0 {
		list = append([]InnerAgent(nil), list[over:]...)
	}
	return list
}
