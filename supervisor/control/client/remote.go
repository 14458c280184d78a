package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
)

// Remote is a viewer's backend (SPEC §9): the dashboard's seam
// (ui.Supervisor and ui.Backend) over the control socket. The host pushes
// every change on its event stream; Remote keeps the agents' snapshots and
// republishes the changes to its subscribers, so the dashboard runs on it
// as on the in-process supervisor.
//
// Agents and HostConfig (proto.Viewer) answer from memory, never from the
// socket; the snapshots carry the output counts the host pushes with every
// output event, so the dashboard knows what changed without asking. The
// reads (proto.Reader) and operations (proto.Operator) are its Client's
// calls on the socket, but for the windows it holds pushed
// (remote_follow.go); read-only, its client refuses every route that
// changes agents (proto.ErrReadOnly). Lifecycle is not a viewer's: Detach
// ends the event stream, and nothing on the host stops.
type Remote struct {
	*Client
	info     proto.Info
	settings wire.Settings
	preset   [3]string // the preset's name, args and format as /v1/config names them
	readOnly bool
	feed     proto.Feed
	relink   Relinker // nil: the stream's end is the viewer's
	where    string   // the target, for a host on another machine
	// out, when not nil, takes the changes instead of feed: the Hosts of
	// a viewer of several hosts, which republishes them.
	out func(proto.Change)

	ctx    context.Context
	cancel context.CancelFunc
	ended  chan struct{}
	endErr error

	mu     sync.Mutex
	agents []proto.AgentInfo
	at     map[string]int // agent id → index in agents (find)
	// resync holds the agents a reopened stream named so far, until its
	// wire.EventSynced; nil when not resyncing.
	resync map[string]bool
	push   pushed // the submission followed on the stream (remote_follow.go)
}

// Attach connects a viewer to the host serving socket (dir names the
// working directory in messages, "" when the socket was given): it checks
// the host's protocol, reads its configuration and waits for the first
// snapshot of every agent. Errors: *NotServingError, *NoAnswerError,
// *ProtocolError (also for a listener that does not answer as a subdash),
// or one naming the socket.
func Attach(ctx context.Context, socket, dir string, readOnly bool) (*Remote, error) {
	return attachWith(ctx, NewClient(socket, dir), readOnly, nil, "", nil)
}

// AttachVia connects a viewer to the host that c reaches on another
// machine (NewClientVia), named where (the ssh target), as Attach does.
// When the host's event stream ends, relink decides: the host stopped
// (the viewer ends, as Attach's), or the link failed and relink makes it
// anew while the viewer says so (proto.Change.Link); then the stream
// starts again and the agents are resynced: those gone meanwhile leave
// the table.
func AttachVia(ctx context.Context, c *Client, where string, readOnly bool, relink Relinker) (*Remote, error) {
	return attachWith(ctx, c, readOnly, relink, where, nil)
}

// Relinker makes a viewer's link to a host on another machine anew
// (sshlink.Carrier). Relink is called with why the event stream ended
// (cause; hostStopped when the host closed it itself) and returns true
// once a new link answers, false and nil when the host stopped (the
// viewer ends with cause), or false and why it gave up. It says what it
// does through say ("reconnecting to …"), which the dashboard shows.
type Relinker interface {
	Relink(ctx context.Context, cause error, hostStopped bool, say func(string)) (bool, error)
}

// attachWith is Attach over the client c, with AttachVia's relink and
// where for a host on another machine (nil and "" for a local one); out,
// when not nil, takes every change instead of the Remote's subscribers
// (a viewer of several hosts, Hosts).
func attachWith(ctx context.Context, c *Client, readOnly bool, relink Relinker, where string, out func(proto.Change)) (*Remote, error) {
	c = c.WithOrigin("viewer")
	socket := c.socket
	info, err := c.Info(ctx)
	var pe *ProtocolError
	switch {
	case errors.As(err, &pe):
		return nil, pe
	case err != nil && isUnexpected(err):
		return nil, &ProtocolError{Socket: socket, PID: c.hostPID(), Own: wire.Protocol, Answer: err.Error()}
	case err != nil:
		return nil, err
	case info.Protocol != wire.Protocol:
		return nil, &ProtocolError{Socket: socket, PID: info.PID, Host: info.Protocol, Own: wire.Protocol}
	}
	var cr wire.ConfigResult
	if err := c.do(ctx, wire.Config.At("", nil), nil, &cr); err != nil {
		return nil, err
	}
	if readOnly {
		c.refuse = refuseChanges
	}
	r := &Remote{Client: c, info: info, settings: cr.Config, preset: [3]string{cr.PresetName, cr.PresetArgs, cr.PresetFormat},
		readOnly: readOnly, ended: make(chan struct{}), relink: relink, where: where, out: out}
	// The changes republished carry the snapshot the host pushed, with the
	// counts of its output events (proto.Change.Info), as a supervisor's
	// carry its own.
	r.feed.Payload = func(c *proto.Change) {
		if a, ok := r.agent(c.AgentID); ok {
			c.Info = &a
		}
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	synced := make(chan struct{})
	go r.followHost(synced)
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

// isUnexpected reports an answer to GET /v1/info that is not a subdash
// host's (any other listener's reply, or an error of the route's); a
// socket the rule of trust refused gave no answer at all.
func isUnexpected(err error) bool {
	var ne *NotServingError
	var na *NoAnswerError
	var ue *socket.UntrustedError
	return !errors.As(err, &ne) && !errors.As(err, &na) && !errors.As(err, &ue) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
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

// followHost applies the host's events until the stream ends and, for a host
// on another machine, until relink gives up. After a reconnection
// (EventReconnected, or a new link) the host's snapshots replace the
// table at wire.EventSynced: an agent forgotten meanwhile leaves it, and the
// dashboard is told so and why.
func (r *Remote) followHost(synced chan struct{}) {
	err := r.applyStream(func() { close(synced) })
	for err != nil && r.ctx.Err() == nil && r.relink != nil {
		var stopped *StoppedError
		down := time.Now()
		again, rerr := r.relink.Relink(r.ctx, err, errors.As(err, &stopped), func(s string) {
			r.publish(proto.Change{Link: s})
		})
		if !again {
			if rerr != nil {
				err = rerr
			}
			break
		}
		r.mu.Lock()
		r.resync = map[string]bool{} // the new link's snapshots replace the table at wire.EventSynced
		r.mu.Unlock()
		err = r.applyStream(func() {
			r.publish(proto.Change{Link: fmt.Sprintf("reconnected to %s after %s", r.where, time.Since(down).Round(100*time.Millisecond)), LinkUp: true})
		})
	}
	if r.ctx.Err() != nil {
		err = nil // detached
	}
	r.endErr = err
	close(r.ended)
}

// applyStream applies the events of one event stream until it ends, calling
// onSynced at its first synced event (after the resync it ends).
func (r *Remote) applyStream(onSynced func()) error {
	var once sync.Once
	// batches at the viewer's interval
	query := url.Values{
		"frame":   {proto.ViewerFrameInterval.String()},
		"outputs": {"batch"},                             // one event a batch for the output of every agent
		"window":  {"1"},                                 // the followed log's lines with each batch (remote_follow.go)
		"counts":  {proto.ViewerCountsInterval.String()}, // the others' counts 4 times a second
	}
	return r.SSE(r.ctx, query, func(ev Event) error {
		switch ev.Name {
		case wire.EventSynced:
			r.endResync()
			once.Do(onSynced)
		case wire.EventStream:
			return r.onStream(ev.Data)
		case wire.EventWindow:
			return r.onWindow(ev.Data)
		case EventReconnected:
			r.mu.Lock()
			r.push = pushed{} // the new stream names itself
			r.mu.Unlock()
			var rc Reconnected
			_ = json.Unmarshal(ev.Data, &rc)
			r.startResync(rc)
		case wire.EventAgent:
			var a proto.AgentInfo
			if err := json.Unmarshal(ev.Data, &a); err != nil {
				return fmt.Errorf("bad agent event from %s: %v", r.socket, err)
			}
			r.upsert(a)
			r.publish(proto.Change{AgentID: a.AgentID, Agent: true, Forgotten: a.Status == proto.StatusForgotten})
		case wire.EventOutput:
			var o wire.OutputEvent
			if err := json.Unmarshal(ev.Data, &o); err != nil {
				return fmt.Errorf("bad output event from %s: %v", r.socket, err)
			}
			r.applyCounts(o)
			r.publish(proto.Change{AgentID: o.AgentID, Output: true})
		case wire.EventOutputs:
			var batch wire.OutputsEvent
			if err := json.Unmarshal(ev.Data, &batch); err != nil {
				return fmt.Errorf("bad outputs event from %s: %v", r.socket, err)
			}
			for _, o := range batch.Outputs {
				r.applyCounts(o)
				r.publish(proto.Change{AgentID: o.AgentID, Output: true})
			}
			r.endBatch()
		case wire.EventWarning:
			var wv wire.WarningEvent
			if err := json.Unmarshal(ev.Data, &wv); err != nil {
				return fmt.Errorf("bad warning event from %s: %v", r.socket, err)
			}
			r.publish(proto.Change{Warnings: []string{wv.Text}})
		}
		return nil
	})
}

// startResync begins taking a reopened stream's snapshots, and says on
// the dashboard that the viewer reconnected and why.
func (r *Remote) startResync(rc Reconnected) {
	r.mu.Lock()
	r.resync = map[string]bool{}
	r.mu.Unlock()
	r.publish(proto.Change{Warnings: []string{fmt.Sprintf("reconnected to the host at %s (%s); the table is the host's again",
		time.Now().Format("15:04:05"), rc.Reason)}})
}

// endResync drops, at a reopened stream's wire.EventSynced, the agents it did
// not name (forgotten while the viewer was away), and tells the dashboard
// that every agent and its output may have changed.
func (r *Remote) endResync() {
	r.mu.Lock()
	if r.resync == nil {
		r.mu.Unlock()
		return
	}
	kept := r.agents[:0:0]
	var changes []proto.Change
	for _, a := range r.agents {
		if r.resync[a.AgentID] {
			kept = append(kept, a)
		}
		changes = append(changes, proto.Change{AgentID: a.AgentID, Agent: true, Output: true, Forgotten: !r.resync[a.AgentID]})
	}
	r.agents, r.resync = kept, nil
	r.reindex()
	r.mu.Unlock()
	for _, c := range changes {
		r.publish(c)
	}
}

// upsert stores an agent's snapshot; status forgotten removes it.
func (r *Remote) upsert(a proto.AgentInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onChanged(a.AgentID)
	if r.resync != nil {
		r.resync[a.AgentID] = true
	}
	if i, ok := r.find(a.AgentID); ok {
		if a.Status == proto.StatusForgotten {
			r.agents = append(r.agents[:i:i], r.agents[i+1:]...)
			r.reindex()
		} else {
			r.agents[i] = a
		}
		return
	}
	if a.Status != proto.StatusForgotten {
		r.agents = append(r.agents, a)
		if r.at == nil {
			r.reindex()
		}
		r.at[a.AgentID] = len(r.agents) - 1
	}
}

// find returns the index of agent id in r.agents, through the index (a
// lookup costs the same with 1,000 agents as with one). r.mu is held.
func (r *Remote) find(id string) (int, bool) {
	if r.at == nil {
		r.reindex()
	}
	i, ok := r.at[id]
	return i, ok && i < len(r.agents) && r.agents[i].AgentID == id
}

// reindex makes the index of r.agents again, after agents left it. r.mu
// is held.
func (r *Remote) reindex() {
	r.at = make(map[string]int, len(r.agents))
	for i := range r.agents {
		r.at[r.agents[i].AgentID] = i
	}
}

// HostConfig returns what the dashboard shows of the host's settings
// (proto.Viewer), from GET /v1/info and /v1/config as they answered when
// the viewer attached: the notes start with one saying this is a viewer
// (and read-only when it is), and Features are protocol 2's and those the
// host lists beyond, so the dashboard hides what the host cannot do.
func (r *Remote) HostConfig() proto.HostConfig {
	st := r.settings
	h := proto.HostConfig{Command: st.Shown(), MaxAgents: st.MaxAgents, Dir: st.Dir,
		PresetName: r.preset[0], PresetArgs: r.preset[1], PresetFormat: r.preset[2],
		Warnings: append([]string(nil), st.Warnings...), Notes: append([]string{r.attachedNote()}, st.Notes...),
		Features: append(proto.Protocol2Features(), r.info.Features...), ReadOnly: r.readOnly, Where: r.where,
		MaxBudgetUSD: st.MaxBudgetUSD, FleetBudgetUSD: st.FleetBudgetUSD}
	if p := st.Preset; p != nil {
		h.Approvals = p.Approvals
	}
	return h
}

// Settings returns the host's settings as GET /v1/config answered when the
// viewer attached, for comparing the host flags a viewer was given (SPEC
// §9).
func (r *Remote) Settings() wire.Settings { return r.settings }

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
	pid := fmt.Sprintf("pid %d", r.info.PID)
	if r.where != "" {
		pid += " on " + r.where
	}
	note := fmt.Sprintf("attached to %s, %s; q detaches, the agents go on", name, pid)
	if r.readOnly {
		note = fmt.Sprintf("read-only: attached to %s, %s; operations are refused", name, pid)
	}
	return note
}

// agent returns the snapshot of agent id the host pushed last.
func (r *Remote) agent(id string) (proto.AgentInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.find(id); ok {
		return r.agents[i], true
	}
	return proto.AgentInfo{}, false
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

// publish hands a change to the dashboard: to out when set, else to the
// Remote's subscribers.
func (r *Remote) publish(c proto.Change) {
	if r.out != nil {
		r.out(c)
		return
	}
	r.feed.Publish(c)
}

// Subscribe returns a subscription to the changes the host pushes.
func (r *Remote) Subscribe() *proto.Subscription { return r.feed.Subscribe() }

// applyCounts records the output counts an output event carried in the
// snapshot of the agent, so that Agents answers with them. The snapshots
// Agents returned share their Submissions with r's, so the slice is copied,
// never written in place.
func (r *Remote) applyCounts(o wire.OutputEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onChanged(o.AgentID)
	i, ok := r.find(o.AgentID)
	if !ok {
		return
	}
	if a := &r.agents[i]; o.Seq >= 1 && o.Seq <= len(a.Submissions) {
		subs := append([]proto.SubmissionInfo(nil), a.Submissions...)
		subs[o.Seq-1].Output = o.Output
		a.Submissions = subs
		if o.Seq == len(subs) {
			a.OutputRate, a.Now = o.Rate, o.Now
		}
	}
}
