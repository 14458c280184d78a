package wire

import (
	"fmt"
	"io"

	"github.com/subdash/subdash/supervisor/proto"
)

// Names of the server-sent events of Events (GET /v1/events). A client
// ignores names it does not know (the protocol grows additively).
const (
	// EventAgent carries one agent's snapshot (a proto.AgentInfo); sent
	// for every agent at first, then on each change. Status "forgotten"
	// says the agent is gone for good (SPEC §10).
	EventAgent = "agent"
	// EventSynced follows the first EventAgent of every agent: the client
	// now holds the whole table.
	EventSynced = "synced"
	// EventOutput carries an OutputEvent: an agent with new output
	// (display lines or transcript entries), so a viewer knows without
	// asking whether the window it shows changed, and fetches it again
	// only then. At most one per agent per proto.FrameInterval.
	EventOutput = "output"
	// EventOutputs carries an OutputsEvent, EventOutput's data of every
	// agent with new output in one batch, in the order the agents
	// changed: sent in place of EventOutput to a client that asked for it
	// (?outputs=batch), so a viewer of many agents decodes one event a
	// frame, not one per agent.
	EventOutputs = "outputs"
	// EventWarning carries a WarningEvent: a problem the host found while
	// running (a failing --notify-command, a journal it cannot write),
	// each sent once, to be shown as a note.
	EventWarning = "warning"
	// EventStream carries a StreamEvent: the name of this event stream,
	// the first event of one opened with ?window=1, for Follow.
	EventStream = "stream"
	// EventWindow carries a WindowEvent: the last n display lines of the
	// submission the stream follows (Follow), as Window answers them
	// with from=-1. It is the first event of a batch in which that
	// submission's output changed, and it is read after the batch's
	// changes were taken: it holds at least what the batch's output and
	// agent events count.
	EventWindow = "window"
)

// OutputEvent is the data of EventOutput: the agent, the submission that
// grew and its counts.
type OutputEvent struct {
	AgentID string             `json:"agent_id"`
	Seq     int                `json:"seq,omitempty"`
	Output  proto.OutputCounts `json:"output"`
	// Rate is the agent's output rate then (Summary.OutputRate), so a
	// viewer's activity column moves with the output as the host's does;
	// omitted when none.
	Rate *proto.OutputRate `json:"output_rate,omitempty"`
	// Now is the agent's Summary.Now then, so a viewer's NOW column moves
	// with the output as the host's does (SPEC §7, FeatureNow); omitted
	// when "".
	Now string `json:"now,omitempty"`
}

// OutputsEvent is the data of EventOutputs.
type OutputsEvent struct {
	Outputs []OutputEvent `json:"outputs"`
}

// StreamEvent is the data of EventStream.
type StreamEvent struct {
	Stream string `json:"stream"`
}

// WindowEvent is the data of EventWindow: what the stream follows and
// its window.
type WindowEvent struct {
	FollowRequest
	WindowResult
}

// WarningEvent is the data of EventWarning.
type WarningEvent struct {
	Text string `json:"text"`
}

// WriteEvent writes one server-sent event of Events: its name and v as
// its data (Marshal); its error is the write's.
func WriteEvent(w io.Writer, name string, v any) error {
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, Marshal(v))
	return err
}
