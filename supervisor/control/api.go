package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

// Operations are the operations of SPEC §3 as a program calls them: on the
// supervisor of this process (Local) or on the one behind a control socket
// (*Client). Results and errors are the supervisor's own: every failure of
// an operation is a *proto.Error carrying the spec's message, so every
// caller prints the same text. ctx bounds the call; Wait stops waiting as
// soon as ctx ends.
type Operations interface {
	Spawn(ctx context.Context, message string) (proto.SpawnResult, error)
	Send(ctx context.Context, id, message string, interrupt bool) (proto.SendResult, error)
	Interrupt(ctx context.Context, id string) (proto.StatusResult, error)
	Close(ctx context.Context, id string) (proto.StatusResult, error)
	Resume(ctx context.Context, id string) (proto.StatusResult, error)
	Wait(ctx context.Context, ids []string, timeoutMS *int) (proto.WaitResult, error)
	List(ctx context.Context) (proto.ListResult, error)
	// Logs writes the output of submission seq (1-based; 0 = the latest)
	// of agent id to w as it is read: plain text, or with raw the log
	// file's bytes unchanged. An error found before anything was written
	// is the operation's (unknown agent or submission).
	Logs(ctx context.Context, id string, seq int, raw bool, w io.Writer) error
}

// OriginHeader names the kind of client in a request ("ctl", "mcp",
// "viewer"); a spawned agent keeps it (proto.AgentInfo.Origin).
const OriginHeader = "X-Subdash-Client"

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
	// one per agent per EventFrame.
	EventOutput = "output"
	// EventWarning carries {"text"}: a problem the host found while running
	// (a failing --notify-command, a journal it cannot write), each sent
	// once, to be shown as a note.
	EventWarning = "warning"
)

// EventFrame is the shortest time between two batches of events on one
// stream: a flood of output costs a viewer at most one redraw a frame.
const EventFrame = time.Second / 60

// outputEvent is the data of EventOutput.
type outputEvent struct {
	AgentID string             `json:"agent_id"`
	Seq     int                `json:"seq,omitempty"`
	Output  proto.OutputCounts `json:"output"`
}

// warningEvent is the data of EventWarning.
type warningEvent struct {
	Text string `json:"text"`
}

// HeartbeatInterval is how often the host writes a comment on an idle
// event stream, so that a client tells a quiet host from a stopped one
// within CallTimeout.
const HeartbeatInterval = 3 * time.Second

// Local returns the Operations of s, a supervisor in this process.
func Local(s *supervisor.Supervisor) Operations { return local{s: s} }

// local is Operations on a supervisor of this process; only Wait uses ctx,
// the other operations return as soon as the supervisor is done.
type local struct {
	s      *supervisor.Supervisor
	origin string
}

// LocalAs is Local whose spawns name origin (supervisor.SpawnBy), for
// `subdash mcp` hosting its own supervisor.
func LocalAs(s *supervisor.Supervisor, origin string) Operations { return local{s, origin} }

// Spawn calls Supervisor.SpawnBy with the origin of l.
func (l local) Spawn(_ context.Context, message string) (proto.SpawnResult, error) {
	return l.s.SpawnBy(l.origin, message)
}

// Send calls Supervisor.Send.
func (l local) Send(_ context.Context, id, message string, interrupt bool) (proto.SendResult, error) {
	return l.s.Send(id, message, interrupt)
}

// Interrupt calls Supervisor.Interrupt.
func (l local) Interrupt(_ context.Context, id string) (proto.StatusResult, error) {
	return l.s.Interrupt(id)
}

// Close calls Supervisor.Close.
func (l local) Close(_ context.Context, id string) (proto.StatusResult, error) {
	return l.s.Close(id)
}

// Resume calls Supervisor.Resume.
func (l local) Resume(_ context.Context, id string) (proto.StatusResult, error) {
	return l.s.Resume(id)
}

// Wait calls Supervisor.Wait, which stops when ctx ends.
func (l local) Wait(ctx context.Context, ids []string, timeoutMS *int) (proto.WaitResult, error) {
	return l.s.Wait(ctx, ids, timeoutMS)
}

// List calls Supervisor.List.
func (l local) List(context.Context) (proto.ListResult, error) {
	return proto.ListResult{Agents: l.s.List(), Failure: l.s.Failure()}, nil
}

// Logs calls Supervisor.WriteLogs.
func (l local) Logs(_ context.Context, id string, seq int, raw bool, w io.Writer) error {
	return l.s.WriteLogs(w, id, seq, raw)
}

// Request bodies of the control socket.
type (
	spawnRequest struct {
		Message string `json:"message"`
	}
	sendRequest struct {
		Message   string `json:"message"`
		Interrupt bool   `json:"interrupt"`
		// Queue keeps the message to start after the running submission
		// (SPEC §11, supervisor.Queue); it excludes Interrupt.
		Queue bool `json:"queue,omitempty"`
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
	case proto.CodeNotFound:
		return http.StatusNotFound
	case proto.CodeLimit:
		return http.StatusTooManyRequests
	case proto.CodeBusy, proto.CodeClosed, proto.CodeNotRunning, proto.CodeNotPending, proto.CodeNoQueue:
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
