package proto

import (
	"encoding/json"
	"time"
)

// AgentInfo is a snapshot of one agent for display: its summary plus what a
// dashboard shows. It holds copies; the caller owns it. In JSON (a
// viewer's agent event, SPEC §9) it is one object, the summary's fields
// whole (no message cut) beside its own, under their tags.
type AgentInfo struct {
	Summary
	// LastOutput and LastError are the latest submission's last_output
	// (SPEC §4: the tail of stdout, then of stderr) and last_error, nil
	// when there is none.
	LastOutput  *string          `json:"last_output,omitempty"`
	LastError   *string          `json:"last_error,omitempty"`
	Stopping    bool             `json:"stopping,omitempty"` // a stop was requested and the process group is not gone yet
	Submissions []SubmissionInfo `json:"submissions"`        // oldest first
	Activity    string           `json:"activity,omitempty"` // what the agent CLI is doing now (presets), "" when unknown
	// Usage is the tokens and cost the agent CLI reported, summed over
	// all its submissions (presets): Summary.Usage's value, which the
	// JSON carries (under "usage") and UnmarshalJSON copies here.
	Usage Usage `json:"-"`
	// Preset names the preset the agent was spawned with (SPEC §8; a
	// restored agent keeps its own, whatever its host runs), "" for an
	// agent command. Structured is true when that preset's output is
	// structured: its submissions have transcripts (Transcript).
	Preset     string `json:"preset,omitempty"`
	Structured bool   `json:"structured,omitempty"`
	// Origin names who spawned the agent in this host: "mcp", "ctl",
	// "viewer", another program's name, or "" for the host's own dashboard.
	Origin string `json:"origin,omitempty"`
	// Host names the agent's host in a dashboard of several hosts (SPEC
	// §9, HostState.Name): the viewer's backend sets it, "" with one host.
	// It never crosses the wire: a host knows its agents as its own.
	Host string `json:"-"`
}

// Usage is what an agent CLI reported about its model use.
type Usage struct {
	// InputTokens and OutputTokens are token counts as the CLI reports
	// them; CostUSD is its cost estimate in US dollars (0 when it gives
	// none).
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Add adds v to u: the usage of one more submission, or of a running
// one so far.
func (u *Usage) Add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CostUSD += v.CostUSD
}

// SubmissionInfo is a snapshot of one submission.
type SubmissionInfo struct {
	ID        string    `json:"id"`                   // the submission id (a UUID), SUBDASH_SUBMISSION_ID
	Seq       int       `json:"seq"`                  // 1-based within its agent
	Message   string    `json:"message"`              // the whole message, not cut
	Command   string    `json:"command"`              // what ran: the agent command or the preset's command line
	Status    Status    `json:"status"`               // running, completed or errored
	StartedAt time.Time `json:"started_at"`           // RFC 3339
	EndedAt   time.Time `json:"ended_at,omitzero"`    // zero (left out) while running
	ExitCode  *int      `json:"exit_code,omitempty"`  // nil while running, when killed by a signal, or when it never started
	Signal    string    `json:"signal,omitempty"`     // e.g. "SIGKILL" when the main process died of a signal
	LastError *string   `json:"last_error,omitempty"` // why it errored (SPEC §3), nil when it did not
	Stopping  bool      `json:"stopping,omitempty"`   // a stop was requested and its process group is not gone yet
	LogPath   string    `json:"log_path,omitempty"`   // its output log file (SPEC §5), "" before it started
	// Output is how much output the submission has now, so that a
	// dashboard knows from the snapshot alone whether what it shows
	// changed (SPEC §9: events carry what changed).
	Output OutputCounts `json:"output"`
	// Changes is what it changed in its working tree (SPEC §15); nil
	// with --track-changes=false.
	Changes *Changes `json:"changes,omitempty"`
}

// OutputCounts says how many display lines and transcript entries a
// submission holds, as absolute numbers (Window's First and Total).
type OutputCounts struct {
	// FirstLine is the oldest display line held in memory, Lines one past
	// the newest; older lines remain in the log file.
	FirstLine int64 `json:"first_line"`
	Lines     int64 `json:"lines"`
	// Evicted is true when the display lines are not in memory (a finished
	// or restored submission whose scrollback was released): the counts
	// are then unknown until a window is read (Reader.Window reads them
	// back).
	Evicted bool `json:"evicted,omitempty"`
	// FirstEntry and Entries are the same for the transcript of a
	// structured submission (SPEC §8), text still streaming counting as one
	// more entry; both 0 when it has none or it is not read back yet.
	FirstEntry int64 `json:"first_entry,omitempty"`
	Entries    int64 `json:"entries,omitempty"`
}

// Running reports whether the agent has a submission whose process group
// may be alive.
func (a AgentInfo) Running() bool {
	n := len(a.Submissions)
	return n > 0 && a.Submissions[n-1].EndedAt.IsZero()
}

// agentInfoFields is AgentInfo without its methods, for decoding.
type agentInfoFields AgentInfo

// UnmarshalJSON decodes what json.Marshal encodes of an AgentInfo, and
// sets Usage from the summary's usage, which the JSON carries for both.
func (a *AgentInfo) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*agentInfoFields)(a)); err != nil {
		return err
	}
	a.Usage = Usage{}
	if a.Summary.Usage != nil {
		a.Usage = *a.Summary.Usage
	}
	return nil
}
