package client

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// A viewer of several hosts (SPEC §9 "Several hosts"): Hosts composes one
// Remote per host behind the dashboard's one seam (ui.Backend), each with
// its own event stream, and tags every agent with its host
// (AgentInfo.Host). An operation goes to its agent's host; a spawn to the
// host proto.WithHost names. A host that ends, stops answering or whose
// link drops is lost: its agents stay as last seen, the others go on, and
// it is attached again every RetryEvery until it answers. The viewer ends
// when every host has been lost for AllLostFor.

// RetryEvery is how often a lost host is tried again (SPEC §9: every 2 s).
const RetryEvery = 2 * time.Second

// AllLostFor is how long every host may be lost before a viewer of
// several hosts ends (SPEC §9).
const AllLostFor = 30 * time.Second

// allLostFor is AllLostFor, shorter in the tests.
var allLostFor = AllLostFor

// HostTarget is one host of a viewer of several hosts.
type HostTarget struct {
	// Name names it on its row and before an ambiguous path
	// (proto.HostState.Name); unique among the targets.
	Name string
	// Target is the target as given (a folder, a socket, ssh://…), for
	// messages; Where names the machine of an ssh target by the target
	// (proto.HostConfig.Where), "" for this one.
	Target, Where string
	// ReadOnly: the viewer refuses every operation on this host.
	ReadOnly bool
	// Dial makes the client of the host: at the start and at each try
	// after it was lost. Over ssh it makes the link too, and returns it as
	// the Relinker of the host's event stream (nil for a host here) and
	// end, which ends it once the viewer lets go of the client (nil:
	// nothing to end).
	Dial func(ctx context.Context) (c *Client, relink Relinker, end func(), err error)
}

// Hosts is a viewer's backend of several hosts: the roles of ui.Backend
// and proto.HostSet over one Remote per host. Its methods are safe for
// concurrent use; Agents, HostConfig and Hosts answer from memory.
type Hosts struct {
	hosts []*hostConn
	cfg   proto.HostConfig
	feed  proto.Feed

	ctx    context.Context
	cancel context.CancelFunc
	ended  chan struct{}
	endErr error

	mu    sync.Mutex
	owner map[string]*hostConn // agent id → its host
}

// hostConn is one host of a Hosts. Hosts.mu guards remote, live, state
// and closer.
type hostConn struct {
	t      HostTarget
	remote *Remote // the Remote attached last; nil before one attached
	closer func()  // ends remote's link (Dial's close)
	live   uint64  // the generation of remote: changes of another are dropped
	state  proto.HostState
}

// AttachHosts attaches a viewer to each of targets at once (each within
// ctx), and returns the viewer of them all once every host answered or
// failed: a host that failed starts lost, and is tried again every
// RetryEvery. Errors: when no host could be attached, each host's error,
// joined.
func AttachHosts(ctx context.Context, targets []HostTarget) (*Hosts, error) {
	h := &Hosts{ended: make(chan struct{}), owner: map[string]*hostConn{}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.feed.Payload = h.payload
	for _, t := range targets {
		h.hosts = append(h.hosts, &hostConn{t: t, state: proto.HostState{Name: t.Name, Target: t.Target, Where: t.Where, ReadOnly: t.ReadOnly}})
	}
	errs := make([]error, len(h.hosts))
	var wg sync.WaitGroup
	for i, hc := range h.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.attach(ctx, hc, 1)
		}()
	}
	wg.Wait()
	if failed := joinHostErrs(h.hosts, errs); failed != nil && len(nonNil(errs)) == len(errs) {
		h.cancel()
		return nil, failed
	}
	h.cfg = h.config()
	for i, hc := range h.hosts {
		if errs[i] != nil {
			h.lose(hc, errs[i])
		}
		go h.keep(hc, errs[i] == nil)
	}
	go h.watchAllLost()
	return h, nil
}

func nonNil(errs []error) []error {
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// joinHostErrs names each host's error; nil when none failed.
func joinHostErrs(hosts []*hostConn, errs []error) error {
	var out hostErrors
	for i, e := range errs {
		if e != nil {
			out = append(out, fmt.Errorf("%s (%s): %w", hosts[i].t.Name, hosts[i].t.Target, e))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// hostErrors are the errors of several hosts, each naming its host; the
// text is theirs joined by "; ", on one line.
type hostErrors []error

// Error joins the hosts' errors' texts with "; ".
func (e hostErrors) Error() string {
	texts := make([]string, len(e))
	for i, err := range e {
		texts[i] = err.Error()
	}
	return strings.Join(texts, "; ")
}

// Unwrap returns each host's error, for errors.Is and errors.As.
func (e hostErrors) Unwrap() []error { return e }

// attach dials hc and attaches a Remote of generation gen to it; on
// success it becomes hc's (swap). Errors: Dial's, attaching's.
func (h *Hosts) attach(ctx context.Context, hc *hostConn, gen uint64) error {
	c, relink, closer, err := hc.t.Dial(ctx)
	if err != nil {
		return err
	}
	out := func(c proto.Change) { h.take(hc, gen, c) }
	r, err := attachWith(ctx, c, hc.t.ReadOnly, relink, hc.t.Where, out)
	if err != nil {
		if closer != nil {
			closer()
		}
		return err
	}
	h.swap(hc, gen, r, closer)
	return nil
}

// swap makes r (of generation gen) hc's Remote: the agents of the one it
// replaces that r does not have leave the table, r's come in, and the
// host is no longer lost.
func (h *Hosts) swap(hc *hostConn, gen uint64, r *Remote, closer func()) {
	info := r.Info()
	cfg := r.HostConfig()
	h.mu.Lock()
	if h.ctx.Err() != nil { // detached meanwhile (Detach cancels, then takes the lock)
		h.mu.Unlock()
		r.Detach()
		if closer != nil {
			closer()
		}
		return
	}
	old, oldClose := hc.remote, hc.closer
	hc.remote, hc.closer, hc.live = r, closer, gen
	wasLost := hc.state.Lost
	hc.state.Dir, hc.state.PID, hc.state.Kind, hc.state.Socket = info.Dir, info.PID, info.Kind, info.Socket
	hc.state.MaxAgents, hc.state.Command = cfg.MaxAgents, cfg.Command
	hc.state.Lost, hc.state.LostAt = "", time.Time{}
	now := r.Agents()
	var changes []proto.Change
	seen := make(map[string]bool, len(now))
	for _, a := range now {
		seen[a.AgentID] = true
		h.owner[a.AgentID] = hc
		changes = append(changes, proto.Change{AgentID: a.AgentID, Agent: true, Output: true})
	}
	if old != nil {
		for _, a := range old.Agents() {
			if !seen[a.AgentID] && h.owner[a.AgentID] == hc {
				delete(h.owner, a.AgentID)
				changes = append(changes, proto.Change{AgentID: a.AgentID, Forgotten: true})
			}
		}
	}
	states := h.statesLocked()
	h.mu.Unlock()
	if old != nil {
		old.Detach()
	}
	if oldClose != nil {
		oldClose()
	}
	for _, c := range changes {
		h.feed.Publish(c)
	}
	if old != nil || wasLost != "" {
		h.feed.Publish(proto.Change{Hosts: states, Link: fmt.Sprintf("host %s is back (%s, pid %d)", hc.t.Name, hc.t.Target, info.PID), LinkUp: true})
	}
}

// take republishes a change of hc's Remote of generation gen: an agent's
// (whose host it records), a warning (named with the host), news of its
// link (the host lost while it reconnects, back once it did). A change of
// a Remote that is not, or no longer, hc's is dropped: swap publishes
// what that Remote has when it becomes hc's.
func (h *Hosts) take(hc *hostConn, gen uint64, c proto.Change) {
	h.mu.Lock()
	if hc.live != gen {
		h.mu.Unlock()
		return
	}
	switch {
	case c.AgentID != "" && c.Forgotten:
		if h.owner[c.AgentID] == hc {
			delete(h.owner, c.AgentID)
		}
	case c.AgentID != "" && c.Agent:
		h.owner[c.AgentID] = hc
	}
	var states []proto.HostState
	if c.Link != "" {
		if c.LinkUp {
			hc.state.Lost, hc.state.LostAt = "", time.Time{}
			c.Link = hc.t.Name + ": " + c.Link
		} else {
			if hc.state.Lost == "" {
				hc.state.LostAt = time.Now()
			}
			// "reconnecting to ssh://… (why)": the row names the host
			hc.state.Lost = strings.Replace(c.Link, " to "+hc.t.Where, "", 1)
			c.Link = ""
		}
		states = h.statesLocked()
	}
	h.mu.Unlock()
	for i, w := range c.Warnings {
		c.Warnings[i] = hc.t.Name + ": " + w
	}
	c.Hosts = states
	if c.AgentID != "" || len(c.Warnings) > 0 || c.Link != "" || c.Hosts != nil {
		h.feed.Publish(c)
	}
}

// keep attaches hc again whenever it is lost, until the viewer detaches:
// up says it is attached now.
func (h *Hosts) keep(hc *hostConn, up bool) {
	gen := uint64(1)
	for {
		if up {
			h.mu.Lock()
			r := hc.remote
			h.mu.Unlock()
			select {
			case <-r.Ended():
			case <-h.ctx.Done():
				return
			}
			if h.ctx.Err() != nil {
				return
			}
			h.lose(hc, r.Err())
		}
		select {
		case <-time.After(RetryEvery):
		case <-h.ctx.Done():
			return
		}
		gen++
		ctx, cancel := context.WithTimeout(h.ctx, 2*CallTimeout)
		err := h.attach(ctx, hc, gen)
		cancel()
		if h.ctx.Err() != nil {
			return
		}
		up = err == nil
		if err != nil {
			h.mu.Lock()
			hc.state.Lost = lostReason(err)
			states := h.statesLocked()
			h.mu.Unlock()
			h.feed.Publish(proto.Change{Hosts: states})
		}
	}
}

// lose marks hc lost for err: its agents stay as last seen.
func (h *Hosts) lose(hc *hostConn, err error) {
	h.mu.Lock()
	if hc.state.Lost == "" {
		hc.state.LostAt = time.Now()
	}
	hc.state.Lost = lostReason(err)
	states := h.statesLocked()
	h.mu.Unlock()
	h.feed.Publish(proto.Change{Hosts: states})
}

// lostReason is the reason a host's row gives, one line.
func lostReason(err error) string {
	if err == nil {
		return "its event stream ended"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// watchAllLost ends the viewer once every host has been lost for
// AllLostFor.
func (h *Hosts) watchAllLost() {
	t := time.NewTicker(time.Second / 4)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			h.end(nil)
			return
		case <-t.C:
		}
		h.mu.Lock()
		var reasons []string
		all := true
		for _, hc := range h.hosts {
			if hc.state.Lost == "" || time.Since(hc.state.LostAt) < allLostFor {
				all = false
				break
			}
			reasons = append(reasons, hc.t.Name+": "+hc.state.Lost)
		}
		h.mu.Unlock()
		if all {
			h.end(fmt.Errorf("every host was lost for %s (%s)", allLostFor, strings.Join(reasons, "; ")))
			h.cancel()
			return
		}
	}
}

// end ends the viewer with err (nil: detached).
func (h *Hosts) end(err error) {
	select {
	case <-h.ended:
	default:
		h.endErr = err
		close(h.ended)
	}
}

// Ended is closed when the viewer ended: detached, or every host lost for
// AllLostFor; Err then says why.
func (h *Hosts) Ended() <-chan struct{} { return h.ended }

// Err returns why the viewer ended: nil while it runs and once detached.
func (h *Hosts) Err() error {
	select {
	case <-h.ended:
		return h.endErr
	default:
		return nil
	}
}

// Detach ends every host's event stream and link; the hosts and their
// agents go on.
func (h *Hosts) Detach() {
	h.cancel()
	h.mu.Lock()
	var closers []func()
	for _, hc := range h.hosts {
		if hc.remote != nil {
			hc.remote.Detach()
		}
		if hc.closer != nil {
			closers = append(closers, hc.closer)
			hc.closer = nil
		}
	}
	h.mu.Unlock()
	for _, c := range closers {
		c()
	}
}

// statesLocked copies every host's state. h.mu is held.
func (h *Hosts) statesLocked() []proto.HostState {
	out := make([]proto.HostState, len(h.hosts))
	for i, hc := range h.hosts {
		out[i] = hc.state
	}
	return out
}

// Hosts returns each host's state, in the order given (proto.HostSet).
func (h *Hosts) Hosts() []proto.HostState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.statesLocked()
}

// Subscribe returns a subscription to every host's changes, each agent's
// snapshot tagged with its host.
func (h *Hosts) Subscribe() *proto.Subscription { return h.feed.Subscribe() }

// payload fills in a change's snapshot from its host's Remote.
func (h *Hosts) payload(c *proto.Change) {
	h.mu.Lock()
	hc := h.owner[c.AgentID]
	var r *Remote
	if hc != nil {
		r = hc.remote
	}
	h.mu.Unlock()
	if r == nil {
		return
	}
	if a, ok := r.agent(c.AgentID); ok {
		a.Host = hc.t.Name
		c.Info = &a
	}
}

// Agents returns every host's agents as last seen, host by host in the
// order given, each oldest first, tagged with its host (proto.Viewer).
func (h *Hosts) Agents() []proto.AgentInfo {
	h.mu.Lock()
	rs := make([]*Remote, len(h.hosts))
	for i, hc := range h.hosts {
		rs[i] = hc.remote
	}
	h.mu.Unlock()
	out := []proto.AgentInfo{}
	for i, r := range rs {
		if r == nil {
			continue
		}
		for _, a := range r.Agents() {
			a.Host = h.hosts[i].t.Name
			out = append(out, a)
		}
	}
	return out
}

// HostConfig returns what the dashboard shows of the hosts together, as
// they answered when the viewer attached (proto.Viewer): the features
// every one of them has, their limits summed, their warnings named with
// the host, one note saying what the viewer is attached to; ReadOnly
// when every host is read-only. The hosts' own settings are Hosts'.
func (h *Hosts) HostConfig() proto.HostConfig { return h.cfg }

// config makes HostConfig's answer from the hosts attached.
func (h *Hosts) config() proto.HostConfig {
	h.mu.Lock()
	defer h.mu.Unlock()
	cfg := proto.HostConfig{ReadOnly: true}
	var names []string
	first := true
	for _, hc := range h.hosts {
		cfg.ReadOnly = cfg.ReadOnly && hc.t.ReadOnly
		name := hc.t.Name // its pid and state are its row's: they change when it is lost and back
		if hc.t.ReadOnly {
			name += " (read-only)"
		}
		names = append(names, name)
		if hc.remote == nil {
			continue
		}
		c := hc.remote.HostConfig()
		cfg.MaxAgents += c.MaxAgents
		cfg.Approvals = cfg.Approvals || c.Approvals
		if c.PresetFormat != "" {
			cfg.PresetFormat = c.PresetFormat
		}
		for _, w := range c.Warnings {
			cfg.Warnings = append(cfg.Warnings, hc.t.Name+": "+w)
		}
		if first {
			cfg.Features, first = c.Features, false
			continue
		}
		cfg.Features = intersect(cfg.Features, c.Features)
	}
	cfg.Notes = []string{fmt.Sprintf("attached to %d hosts: %s; q detaches, the agents go on", len(h.hosts), strings.Join(names, ", "))}
	return cfg
}

// intersect returns the words of a that b has too, in a's order.
func intersect(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, w := range b {
		in[w] = true
	}
	var out []string
	for _, w := range a {
		if in[w] {
			out = append(out, w)
		}
	}
	return out
}

// LostError is the error of an operation on an agent of a host that is
// lost: the operation is not sent.
type LostError struct {
	Host, Reason string
}

// Error says which host is lost, why, and that its agents are shown as
// last seen.
func (e *LostError) Error() string {
	return fmt.Sprintf("host %s is lost (%s): its agents are shown as last seen until it answers again", e.Host, e.Reason)
}

// of returns the Remote of agent id's host. Errors: *LostError for a
// host that is lost; CodeNotFound for an agent of no host.
func (h *Hosts) of(id string) (*Remote, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hc := h.owner[id]
	if hc == nil {
		return nil, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("agent %s not found on any host", id)}
	}
	return h.liveLocked(hc)
}

// named returns the Remote of host name. Errors: *LostError, or one
// naming the hosts there are.
func (h *Hosts) named(name string) (*Remote, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var names []string
	for _, hc := range h.hosts {
		if hc.t.Name == name {
			return h.liveLocked(hc)
		}
		names = append(names, hc.t.Name)
	}
	return nil, &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("no host %q: the hosts are %s", name, strings.Join(names, ", "))}
}

// liveLocked returns hc's Remote unless hc is lost. h.mu is held.
func (h *Hosts) liveLocked(hc *hostConn) (*Remote, error) {
	if hc.state.Lost != "" || hc.remote == nil {
		return nil, &LostError{Host: hc.t.Name, Reason: hc.state.Lost}
	}
	return hc.remote, nil
}
