package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

// Remote is a viewer's view of a host (SPEC §9): the dashboard's seam
// (ui.Supervisor and ui.Backend) over the control socket. The host pushes
// every change on its event stream; Remote keeps the agents' snapshots and
// the windows of output the dashboard draws, and republishes the changes
// to its subscribers, so the dashboard runs on it as on the in-process
// supervisor.
//
// Config, Agents and Storage answer from memory, never from the socket;
// Agents' snapshots carry the output counts the host pushes with every
// output event, so the dashboard knows what changed without asking. Every
// other method (Window and Transcript too: the dashboard fetches the window
// it draws in a command) is a call on the socket bounded by the Client's
// deadlines. With read-only, every operation is refused.
type Remote struct {
	c        *Client
	info     proto.Info
	cfg      supervisor.Config
	readOnly bool
	feed     proto.Feed

	ctx    context.Context
	cancel context.CancelFunc
	ended  chan struct{}
	endErr error

	mu     sync.Mutex
	agents []proto.AgentInfo
}

// IncompatibleError is returned by Attach when the host speaks another
// version of the control socket protocol.
type IncompatibleError struct {
	Socket     string
	PID        int
	HostProto  string // e.g. "v2", or "unknown" when the host answers no /v1/info
	OwnProto   string // "v1"
	HostDetail string
}

// Error names both versions and what to do.
func (e *IncompatibleError) Error() string {
	return fmt.Sprintf("the subdash serving %s (pid %d) speaks control protocol %s, this subdash speaks %s%s; attach with the subdash version that started it",
		e.Socket, e.PID, e.HostProto, e.OwnProto, e.HostDetail)
}

// Attach connects a viewer to the host serving socket (dir names the
// working directory in messages, "" when the socket was given): it checks
// the host's protocol, reads its configuration and waits for the first
// snapshot of every agent. Errors: *NotServingError, *NoAnswerError,
// *IncompatibleError, or one naming the socket.
func Attach(ctx context.Context, socket, dir string, readOnly bool) (*Remote, error) {
	c := NewClient(socket, dir).WithOrigin("viewer")
	info, err := c.Info(ctx)
	if err != nil {
		var se *proto.Error
		if errors.As(err, &se) || isUnexpected(err) {
			return nil, &IncompatibleError{Socket: socket, PID: c.PID(), HostProto: "unknown", OwnProto: fmt.Sprintf("v%d", Protocol),
				HostDetail: fmt.Sprintf(" (GET /v1/info answered: %v)", err)}
		}
		return nil, err
	}
	if info.Protocol != Protocol {
		host := fmt.Sprintf("v%d", info.Protocol)
		detail := ""
		if info.Protocol == 0 {
			host, detail = "v1 without viewers", " (an older subdash: restart its host with this one)"
		}
		return nil, &IncompatibleError{Socket: socket, PID: info.PID, HostProto: host, OwnProto: fmt.Sprintf("v%d", Protocol), HostDetail: detail}
	}
	var cr ConfigResult
	if err := c.call(ctx, CallTimeout, http.MethodGet, "/v1/config", nil, &cr); err != nil {
		return nil, err
	}
	r := &Remote{c: c, info: info, cfg: cr.Config, readOnly: readOnly, ended: make(chan struct{})}
	if cr.PresetName != "" && r.cfg.Preset == nil {
		r.cfg.Preset = &supervisor.Preset{Name: cr.PresetName, Args: cr.PresetArgs, Format: cr.PresetFormat}
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	synced := make(chan struct{})
	go r.follow(synced)
	select {
	case <-synced:
		return r, nil
	case <-r.ended:
		return nil, r.endErr
	case <-ctx.Done():
		r.cancel()
		return nil, ctx.Err()
	}
}

// isUnexpected reports an answer that is not the protocol's (a 404 from a
// host without /v1, or any other listener's reply).
func isUnexpected(err error) bool {
	var ne *NotServingError
	var na *NoAnswerError
	return !errors.As(err, &ne) && !errors.As(err, &na) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// Info returns what the host said about itself when the viewer attached.
func (r *Remote) Info() proto.Info { return r.info }

// ReadOnly reports whether r was attached read-only: it refuses every
// operation.
func (r *Remote) ReadOnly() bool { return r.readOnly }

// Ended is closed when the host's event stream ended: the host quit, was
// killed, or stopped answering; Err then says which.
func (r *Remote) Ended() <-chan struct{} { return r.ended }

// Err returns why the event stream ended, nil while it runs.
func (r *Remote) Err() error {
	select {
	case <-r.ended:
		return r.endErr
	default:
		return nil
	}
}

// Detach ends the event stream; the host and its agents go on.
func (r *Remote) Detach() { r.cancel() }

// follow applies the host's events until the stream ends.
func (r *Remote) follow(synced chan struct{}) {
	once := sync.Once{}
	err := r.c.SSE(r.ctx, func(ev Event) error {
		switch ev.Name {
		case EventSynced:
			once.Do(func() { close(synced) })
		case EventAgent:
			var a proto.AgentInfo
			if err := json.Unmarshal(ev.Data, &a); err != nil {
				return fmt.Errorf("bad agent event from %s: %v", r.c.socket, err)
			}
			r.upsert(a)
			r.feed.Publish(proto.Change{AgentID: a.AgentID, Agent: true})
		case EventOutput:
			var o outputEvent
			if err := json.Unmarshal(ev.Data, &o); err != nil {
				return fmt.Errorf("bad output event from %s: %v", r.c.socket, err)
			}
			r.applyCounts(o)
			r.feed.Publish(proto.Change{AgentID: o.AgentID, Output: true})
		case EventWarning:
			var wv warningEvent
			if err := json.Unmarshal(ev.Data, &wv); err != nil {
				return fmt.Errorf("bad warning event from %s: %v", r.c.socket, err)
			}
			r.feed.Publish(proto.Change{Warnings: []string{wv.Text}})
		}
		return nil
	})
	if r.ctx.Err() != nil {
		err = nil // detached
	}
	r.endErr = err
	close(r.ended)
}

// upsert stores an agent's snapshot; status forgotten removes it.
func (r *Remote) upsert(a proto.AgentInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.agents {
		if r.agents[i].AgentID == a.AgentID {
			if a.Status == proto.StatusForgotten {
				r.agents = append(r.agents[:i:i], r.agents[i+1:]...)
			} else {
				r.agents[i] = a
			}
			return
		}
	}
	if a.Status != proto.StatusForgotten {
		r.agents = append(r.agents, a)
	}
}

// Config returns the host's configuration, with notes saying this is a
// viewer (and read-only when it is).
func (r *Remote) Config() supervisor.Config {
	cfg := r.cfg
	cfg.Notes = append([]string{r.attachedNote()}, cfg.Notes...)
	return cfg
}

// attachedNote is the line the dashboard shows about the attachment.
func (r *Remote) attachedNote() string {
	kind := r.info.Kind
	if kind == "" {
		kind = "host"
	}
	name := "subdash " + kind
	if kind == "dashboard" {
		name = "the subdash dashboard"
	}
	note := fmt.Sprintf("attached to %s, pid %d; q detaches, the agents go on", name, r.info.PID)
	if r.readOnly {
		note = fmt.Sprintf("read-only: attached to %s, pid %d; operations are refused", name, r.info.PID)
	}
	return note
}

// Agents returns the snapshots the host pushed, oldest first: never nil,
// so that an empty table (the last agent forgotten) is a snapshot too.
func (r *Remote) Agents() []proto.AgentInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]proto.AgentInfo, len(r.agents))
	copy(out, r.agents)
	return out
}

// Subscribe returns a subscription to the changes the host pushes.
func (r *Remote) Subscribe() *proto.Subscription { return r.feed.Subscribe() }

// refuse is the error of an operation on a read-only viewer.
func (r *Remote) refuse(op string) error {
	if !r.readOnly {
		return nil
	}
	return proto.ErrReadOnly(op)
}

// opCtx bounds an operation by the client's deadlines and the viewer's
// life.
func (r *Remote) opCtx() context.Context { return context.Background() }

// Spawn calls spawn on the host.
func (r *Remote) Spawn(message string) (proto.SpawnResult, error) {
	if err := r.refuse("spawn"); err != nil {
		return proto.SpawnResult{}, err
	}
	return r.c.Spawn(r.opCtx(), message)
}

// Send calls send on the host.
func (r *Remote) Send(id, message string, interrupt bool) (proto.SendResult, error) {
	if err := r.refuse("send"); err != nil {
		return proto.SendResult{}, err
	}
	return r.c.Send(r.opCtx(), id, message, interrupt)
}

// Interrupt calls interrupt on the host.
func (r *Remote) Interrupt(id string) (proto.StatusResult, error) {
	if err := r.refuse("interrupt"); err != nil {
		return proto.StatusResult{}, err
	}
	return r.c.Interrupt(r.opCtx(), id)
}

// Close calls close on the host.
func (r *Remote) Close(id string) (proto.StatusResult, error) {
	if err := r.refuse("close"); err != nil {
		return proto.StatusResult{}, err
	}
	return r.c.Close(r.opCtx(), id)
}

// Resume calls resume on the host.
func (r *Remote) Resume(id string) (proto.StatusResult, error) {
	if err := r.refuse("resume"); err != nil {
		return proto.StatusResult{}, err
	}
	return r.c.Resume(r.opCtx(), id)
}

// Forget calls forget on the host.
func (r *Remote) Forget(id string) (proto.StatusResult, error) {
	if err := r.refuse("forget"); err != nil {
		return proto.StatusResult{}, err
	}
	return r.c.Forget(r.opCtx(), id)
}

// Approve answers a pending tool permission request on the host (SPEC
// §12).
func (r *Remote) Approve(id, requestID string, always bool) (proto.ApprovalResult, error) {
	if err := r.refuse("approve"); err != nil {
		return proto.ApprovalResult{}, err
	}
	return r.c.Approve(r.opCtx(), id, requestID, always)
}

// Deny refuses a pending tool permission request on the host (SPEC §12).
func (r *Remote) Deny(id, requestID, message string) (proto.ApprovalResult, error) {
	if err := r.refuse("deny"); err != nil {
		return proto.ApprovalResult{}, err
	}
	return r.c.Deny(r.opCtx(), id, requestID, message)
}

// Queue queues a message on the host for a running agent (SPEC §11).
func (r *Remote) Queue(id, message string) (proto.SendResult, error) {
	if err := r.refuse("queue"); err != nil {
		return proto.SendResult{}, err
	}
	return r.c.Queue(r.opCtx(), id, message)
}

// CancelQueue drops an agent's queued message on the host (SPEC §11).
func (r *Remote) CancelQueue(id string) (proto.StatusResult, error) {
	if err := r.refuse("cancel queue"); err != nil {
		return proto.StatusResult{}, err
	}
	return r.c.CancelQueue(r.opCtx(), id)
}

// MarkSeen tells the host that this viewer looked at agent id (SPEC §11:
// selected in any viewer). It changes no agent, so a read-only viewer does
// it too.
func (r *Remote) MarkSeen(id string) error {
	_, err := r.c.MarkSeen(r.opCtx(), id)
	return err
}

// Message returns a submission's whole message from the host.
func (r *Remote) Message(id string, seq int) (string, error) {
	return r.c.Message(r.opCtx(), id, seq)
}

// Storage returns where the host's logs were when the viewer attached.
func (r *Remote) Storage() proto.Storage { return r.info.Logs }

// LoadOutput does nothing: the host reads evicted output back itself when
// a window of it is asked for.
func (r *Remote) LoadOutput(string, int) error { return nil }

// Shutdown detaches the viewer: nothing stops on the host (SPEC §9).
func (r *Remote) Shutdown(context.Context) error {
	r.cancel()
	return nil
}

// SkipGrace does nothing: a viewer stops nothing.
func (r *Remote) SkipGrace() {}

// WriteLines streams a submission's display lines from the host (the
// pager's feed).
func (r *Remote) WriteLines(w io.Writer, id string, seq int, keepSGR bool) error {
	q := url.Values{}
	if seq != 0 {
		q.Set("submission", strconv.Itoa(seq))
	}
	if keepSGR {
		q.Set("sgr", "1")
	}
	return r.c.stream(r.opCtx(), agentPath(id, "lines")+"?"+q.Encode(), func(body io.Reader, progress func()) error {
		_, err := io.Copy(w, progressReader{body, progress})
		return err
	})
}

// progressReader calls progress after every read that returned bytes.
type progressReader struct {
	r        io.Reader
	progress func()
}

// Read reads from the wrapped reader and reports progress after each read.
func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

// Search asks the host for the matches of query.
func (r *Remote) Search(id string, seq int, transcript bool, query string, from int64) (proto.SearchResult, error) {
	q := url.Values{"q": {query}, "from": {strconv.FormatInt(from, 10)}}
	if seq != 0 {
		q.Set("submission", strconv.Itoa(seq))
	}
	if transcript {
		q.Set("transcript", "1")
	}
	var res proto.SearchResult
	return res, r.c.call(r.opCtx(), CallTimeout, http.MethodGet, agentPath(id, "search")+"?"+q.Encode(), nil, &res)
}
