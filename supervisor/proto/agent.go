package proto

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// AgentInfo is a snapshot of one agent for display: its summary plus what a
// dashboard shows. It holds copies; the caller owns it.
type AgentInfo struct {
	Summary
	// LastOutput and LastError are the latest submission's last_output
	// (SPEC §4: the tail of stdout, then of stderr) and last_error, nil
	// when there is none.
	LastOutput  *string
	LastError   *string
	Stopping    bool             // a stop was requested and the process group is not gone yet
	Submissions []SubmissionInfo // oldest first
	Activity    string           // what the agent CLI is doing now (presets), "" when unknown
	Usage       Usage            // tokens and cost the agent CLI reported, summed over all its submissions (presets)
	// Preset names the preset the agent was spawned with (SPEC §8; a
	// restored agent keeps its own, whatever its host runs), "" for an
	// agent command. Structured is true when that preset's output is
	// structured: its submissions have transcripts (Transcript).
	Preset     string `json:"preset,omitempty"`
	Structured bool   `json:"structured,omitempty"`
	// Origin names who spawned the agent in this host: "mcp", "ctl",
	// "viewer", another program's name, or "" for the host's own dashboard.
	Origin string `json:"origin,omitempty"`
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
	ID        string // the submission id (a UUID), SUBDASH_SUBMISSION_ID
	Seq       int    // 1-based within its agent
	Message   string // the whole message, not cut
	Command   string // what ran: the agent command or the preset's command line
	Status    Status // running, completed or errored
	StartedAt time.Time
	EndedAt   time.Time // zero while running
	ExitCode  *int      // nil while running, when killed by a signal, or when it never started
	Signal    string    // e.g. "SIGKILL" when the main process died of a signal
	LastError *string   // why it errored (SPEC §3), nil when it did not
	Stopping  bool      // a stop was requested and its process group is not gone yet
	LogPath   string    // its output log file (SPEC §5), "" before it started
	// Output is how much output the submission has now, so that a
	// dashboard knows from the snapshot alone whether what it shows
	// changed (SPEC §9: events carry what changed).
	Output OutputCounts
	// Changes is what it changed in its working tree (SPEC §15); nil
	// with --track-changes=false.
	Changes *Changes `json:",omitempty"`
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

// MarshalJSON encodes the snapshot as one object: the summary's fields
// (SPEC §3, as list has them) and every other field of AgentInfo under its
// json tag, or its Go name when it has none. Fields added to AgentInfo
// travel to viewers (SPEC §9) without further code; a reader that does not
// know a field ignores it.
func (a AgentInfo) MarshalJSON() ([]byte, error) {
	sum, err := json.Marshal(summaryFields(a.Summary)) // the whole message, not cut
	if err != nil {
		return nil, err
	}
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal(sum, &obj); err != nil {
		return nil, err
	}
	v := reflect.ValueOf(a)
	for _, f := range reflect.VisibleFields(v.Type()) {
		if f.Anonymous || len(f.Index) != 1 || !f.IsExported() {
			continue
		}
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		b, err := json.Marshal(v.FieldByIndex(f.Index).Interface())
		if err != nil {
			return nil, err
		}
		obj[name] = b
	}
	return json.Marshal(obj)
}

// UnmarshalJSON decodes what MarshalJSON encodes; unknown fields are
// ignored.
func (a *AgentInfo) UnmarshalJSON(b []byte) error {
	var sum summaryFields
	if err := json.Unmarshal(b, &sum); err != nil {
		return err
	}
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	*a = AgentInfo{Summary: Summary(sum)}
	// "Usage" (AgentInfo's) also matches the summary's "usage" when
	// decoding, as keys match case-insensitively: the summary keeps its own
	a.Summary.Usage = nil
	if raw, ok := obj["usage"]; ok && string(raw) != "null" {
		a.Summary.Usage = new(Usage)
		if err := json.Unmarshal(raw, a.Summary.Usage); err != nil {
			return err
		}
	}
	v := reflect.ValueOf(a).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if f.Anonymous || len(f.Index) != 1 || !f.IsExported() {
			continue
		}
		name, ok := jsonName(f)
		raw, present := obj[name]
		if !ok || !present {
			continue
		}
		if err := json.Unmarshal(raw, v.FieldByIndex(f.Index).Addr().Interface()); err != nil {
			return err
		}
	}
	return nil
}

// jsonName is the key of field f: its json tag's name, else its Go name;
// ok is false for a field tagged "-".
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, true
	}
	return f.Name, true
}
