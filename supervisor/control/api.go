package control

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// OriginHeader names the kind of client in a request ("ctl", "mcp",
// "viewer"); a spawned agent keeps it (proto.AgentInfo.Origin).
const OriginHeader = "X-Subdash-Client"

// SessionHeader names the `subdash mcp --tools multi-agent` session that
// makes a request (proto.Caller.Session): the host keeps a root mailbox per
// session (SPEC §14).
const SessionHeader = "X-Subdash-Session"

// Protocol is the version of the control socket protocol this build
// speaks: its routes are under /v1. Changes within a version are additive
// (new fields, routes and events; a reader ignores what it does not know).
const Protocol = 1

// Names of the server-sent events of GET /v1/events. A client ignores
// names it does not know (the protocol grows additively within /v1).
const (
	// EventAgent carries one agent's snapshot (a proto.Summary's
	// fields and more); sent for every agent at first, then on each change.
	// Status "forgotten" says the agent is gone for good (SPEC §10).
	EventAgent = "agent"
	// EventSynced follows the first EventAgent of every agent: the client
	// now holds the whole table.
	EventSynced = "synced"
	// EventOutput carries {"agent_id", "seq", "output"} of an agent with
	// new output (display lines or transcript entries): the submission and
	// its proto.OutputCounts, so a viewer knows without asking whether
	// the window it shows changed, and fetches it again only then. At most
	// one per agent per proto.FrameInterval.
	EventOutput = "output"
	// EventOutputs carries {"outputs": [...]}, EventOutput's data of every
	// agent with new output in one batch, in the order the agents
	// changed: sent in place of EventOutput to a client that asked for
	// it (GET /v1/events?outputs=batch, feature word output-batch), so a
	// viewer of 1,000 agents decodes one event a frame, not one per
	// agent.
	EventOutputs = "outputs"
	// EventWarning carries {"text"}: a problem the host found while running
	// (a failing --notify-command, a journal it cannot write), each sent
	// once, to be shown as a note.
	EventWarning = "warning"
	// EventStream carries {"stream"}: the name of this event stream, the
	// first event of one opened with window=1 (feature word
	// follow-window), for PUT /v1/events/{stream}/follow.
	EventStream = "stream"
	// EventWindow carries {"agent_id", "submission", "n", "first",
	// "total", "lines"}: the last n display lines of the submission the
	// stream follows (PUT /v1/events/{stream}/follow), as GET
	// /v1/agents/{id}/window?from=-1 answers them. It is the first event
	// of a batch in which that submission's output changed, and it is
	// read after the batch's changes were taken: it holds at least what
	// the batch's output and agent events count.
	EventWindow = "window"
	// EventReconnected is never sent by a host: Client.SSE gives it to
	// its caller before the events of a stream it opened again (data:
	// Reconnected), which start with every agent's snapshot and
	// EventSynced, so the caller replaces what it holds.
	EventReconnected = "reconnected"
)

// outputEvent is the data of EventOutput.
type outputEvent struct {
	AgentID string             `json:"agent_id"`
	Seq     int                `json:"seq,omitempty"`
	Output  proto.OutputCounts `json:"output"`
	// Rate is the agent's output rate then (Summary.OutputRate), so a
	// viewer's activity column moves with the output as the host's does;
	// omitted when none.
	Rate *proto.OutputRate `json:"output_rate,omitempty"`
}

// outputsEvent is the data of EventOutputs.
type outputsEvent struct {
	Outputs []outputEvent `json:"outputs"`
}

// streamEvent is the data of EventStream.
type streamEvent struct {
	Stream string `json:"stream"`
}

// FollowRequest is the body of PUT /v1/events/{stream}/follow: the
// submission (1-based) of agent AgentID whose last N display lines
// (1 to proto.MaxWindowItems) the stream sends with each batch in which
// they changed. An empty AgentID stops it.
type FollowRequest struct {
	AgentID    string `json:"agent_id"`
	Submission int    `json:"submission"`
	N          int    `json:"n"`
}

// windowEvent is the data of EventWindow.
type windowEvent struct {
	FollowRequest
	WindowResult
}

// warningEvent is the data of EventWarning.
type warningEvent struct {
	Text string `json:"text"`
}

// HeartbeatInterval is how often the host writes a comment on an idle
// event stream, so that a client tells a quiet host from a stopped one
// within CallTimeout.
const HeartbeatInterval = 3 * time.Second

// Request bodies of the control socket.
type (
	spawnRequest struct {
		Message string `json:"message"`
		// TaskName names the agent in the tree (SPEC §14); a text/plain
		// spawn gives it as the query's task_name.
		TaskName string `json:"task_name,omitempty"`
	}
	sendRequest struct {
		Message   string `json:"message"`
		Interrupt bool   `json:"interrupt"`
		// Queue keeps the message to start after the running submission
		// (SPEC §11, supervisor.Queue); it excludes Interrupt.
		Queue bool `json:"queue,omitempty"`
		// Steer writes the message into the running submission of an
		// agent that takes messages while it runs (SPEC §11,
		// supervisor.Steer); it excludes Interrupt and Queue.
		Steer bool `json:"steer,omitempty"`
	}
	// resendRequest asks for the latest message again (FeatureResendFile).
	resendRequest struct {
		Interrupt bool `json:"interrupt"`
		Queue     bool `json:"queue,omitempty"`
	}
	// approveRequest and denyRequest answer a tool permission request
	// (SPEC §12); an empty request_id means the oldest pending one.
	approveRequest struct {
		RequestID string `json:"request_id"`
		Always    bool   `json:"always"`
	}
	denyRequest struct {
		RequestID string `json:"request_id"`
		Message   string `json:"message"`
	}
	waitRequest struct {
		IDs       []string   `json:"ids"`
		TimeoutMS *timeoutMS `json:"timeout_ms,omitempty"` // null: the default
	}
)

// timeoutMS is wait's timeout_ms as a request carries it: any integral JSON
// number (1e20 included; a value beyond int's range becomes the nearest
// int, which Wait clamps as SPEC §3 says), not a fraction.
type timeoutMS int

// UnmarshalJSON decodes an integral JSON number.
func (t *timeoutMS) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || f != math.Trunc(f) {
		return fmt.Errorf("timeout_ms must be a whole number of milliseconds, not %s", b)
	}
	*t = timeoutMS(proto.TimeoutMS(f))
	return nil
}

// errorBody is the body of every error response of the control socket.
type errorBody struct {
	Error string          `json:"error"` // the spec's message
	Code  proto.ErrorCode `json:"code"`
}

// httpStatus maps an operation's error code to the HTTP status of its
// response.
func httpStatus(code proto.ErrorCode) int {
	switch code {
	case proto.CodeInvalid:
		return http.StatusBadRequest
	case proto.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case proto.CodeNotFound:
		return http.StatusNotFound
	case proto.CodeLimit:
		return http.StatusTooManyRequests
	case proto.CodeBusy, proto.CodeClosed, proto.CodeNotRunning, proto.CodeNotPending, proto.CodeNoQueue, proto.CodeExists, proto.CodeBudget:
		return http.StatusConflict
	case proto.CodeShutdown:
		return http.StatusServiceUnavailable
	case codeForbidden, proto.CodeNested:
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// codeForbidden is the code of the response to a connection from another
// user; it is not an operation's error, so it is not in package supervisor.
const codeForbidden proto.ErrorCode = "forbidden"
