package proto

import (
	"context"
	"sync"
	"time"
)

// FrameInterval is the shortest time between two batches of changes that
// a front-end acts on: the host dashboard redraws at most once a frame
// (ui.Forward), and the control socket's event stream sends at most one
// batch a frame (GET /v1/events), so a flood of output costs each at most
// 60 redraws or batches a second. A viewer batches at its own, slower
// interval (ViewerFrameInterval: each batch may cost its host a window
// request).
const FrameInterval = time.Second / 60

// ViewerFrameInterval is a viewer's batching interval (SPEC §9), in place
// of FrameInterval (60 Hz), which the host dashboard and the host's event
// stream share: each batch that changes the followed log costs the host a
// window request over the socket, so a viewer batches at 30 Hz, and asks
// the host's event stream for batches at that interval too (GET
// /v1/events?frame=: half the wake-ups of a viewer of many agents). Keys
// are answered at once, as on the host. BENCHMARKS.md ("What a viewer
// costs") has what it saves the host and the viewer.
const ViewerFrameInterval = time.Second / 30

// ViewerCountsInterval is how often a viewer takes the output counts of
// the agents it does not follow (SPEC §9, FeatureCountsInterval): 4 times
// a second, the rate at which the dashboard draws a running agent's row
// again anyway (its spinner and elapsed time). The followed agent's
// output, and every change of status or summary, still come at
// ViewerFrameInterval. With many agents each printing now and then
// nearly every one of a viewer's batches would carry counts of agents off
// its screen, and each batch would wake the viewer.
const ViewerCountsInterval = time.Second / 4

// Change says what changed about one agent since a subscriber last drained
// its changes, and carries what it changed to (Info), so that a subscriber
// need not ask the supervisor again.
type Change struct {
	AgentID string
	// Agent is true when the agent was created or its summary, status or
	// submissions changed.
	Agent bool
	// Output is true when new display lines or transcript entries arrived.
	Output bool
	// Forgotten is true when the agent was forgotten (SPEC §10): it is no
	// longer in the table, list or snapshots.
	Forgotten bool
	// Warnings are problems the host found while running (a failing
	// --notify-command), each delivered once; AgentID is "" for them.
	Warnings []string
	// Link is news of a viewer's link to a host on another machine (SPEC
	// §9), AgentID "" : a one-line text, "reconnecting to ssh://…
	// (why)" while it is down (LinkUp false), "reconnected to ssh://…
	// after 2.1s" once it is back (LinkUp true); "" for none. Of
	// coalesced changes the latest is kept.
	Link   string
	LinkUp bool
	// Hosts is news of the hosts of a dashboard of several hosts (SPEC
	// §9), AgentID "": every host's state, in order, when one changed
	// (lost, back, reconnecting); nil for none. Of coalesced changes the
	// latest is kept.
	Hosts []HostState
	// Info is the agent's snapshot, taken when the change was drained
	// (so the latest of the coalesced changes), with each submission's
	// output counts: set for a change of the agent or of its output when
	// the Feed has a Payload and the agent still exists; nil for a
	// forgotten agent, a warning, and on a summaries subscription. The
	// subscriber owns it.
	Info *AgentInfo
}

// LatestOutput returns the number of Info's latest submission and its
// output counts; ok is false without Info or a submission.
func (c Change) LatestOutput() (seq int, counts OutputCounts, ok bool) {
	if c.Info == nil || len(c.Info.Submissions) == 0 {
		return 0, OutputCounts{}, false
	}
	last := c.Info.Submissions[len(c.Info.Submissions)-1]
	return last.Seq, last.Output, true
}

// Subscription receives changes of agents. Changes are coalesced per agent
// while the subscriber is busy, so a slow subscriber costs memory bounded by
// the number of agents and never blocks the goroutines reading a child's
// pipes. Close it when done.
type Subscription struct {
	feed    *Feed
	ready   chan struct{} // holds a token while changes are pending
	mu      sync.Mutex
	pending map[string]*Change
	order   []string
	// summaries: only changes of summaries, forgets and warnings are
	// taken; a change of output alone (every read of a flood) neither
	// wakes nor waits in the subscription.
	summaries bool
}

// Ready returns a channel that receives a value when changes are pending;
// call Drain to take them.
func (sub *Subscription) Ready() <-chan struct{} { return sub.ready }

// Drain returns the pending changes, one per agent in the order the agents
// first changed, and clears them; each change of an agent carries its
// snapshot taken now (Change.Info, from the Feed's Payload, called outside
// every lock). The caller owns the slice.
func (sub *Subscription) Drain() []Change {
	out, _ := sub.DrainHolding(nil)
	return out
}

// DrainHolding is Drain that leaves pending the changes hold (nil: none)
// reports true for, in their order: each goes on coalescing with its
// agent's later changes and takes its snapshot when it is drained. They do
// not make Ready fire again; held is how many stay. hold is called with
// the subscription's lock held and must not call back into it.
func (sub *Subscription) DrainHolding(hold func(Change) bool) (out []Change, held int) {
	sub.mu.Lock()
	if len(sub.order) == 0 {
		sub.mu.Unlock()
		return nil, 0
	}
	out = make([]Change, 0, len(sub.order))
	kept := sub.order[:0]
	for _, id := range sub.order {
		if c := sub.pending[id]; hold != nil && hold(*c) {
			kept = append(kept, id)
		} else {
			out = append(out, *c)
			delete(sub.pending, id)
		}
	}
	sub.order = kept
	held = len(kept)
	sub.mu.Unlock()
	if fill := sub.feed.Payload; fill != nil && !sub.summaries {
		for i := range out {
			if c := &out[i]; c.AgentID != "" && !c.Forgotten && (c.Agent || c.Output) {
				fill(c)
			}
		}
	}
	return out, held
}

// Next blocks until changes are pending or ctx is done, then drains them.
// It returns ctx's error when ctx ends first.
func (sub *Subscription) Next(ctx context.Context) ([]Change, error) {
	for {
		if c := sub.Drain(); len(c) > 0 {
			return c, nil
		}
		select {
		case <-sub.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close stops the subscription; pending changes are dropped.
func (sub *Subscription) Close() { sub.feed.remove(sub) }

func (sub *Subscription) add(c Change) {
	if sub.summaries && !c.Agent && !c.Forgotten && len(c.Warnings) == 0 && c.Link == "" && c.Hosts == nil {
		return
	}
	sub.mu.Lock()
	p := sub.pending[c.AgentID]
	if p == nil {
		p = &Change{AgentID: c.AgentID}
		sub.pending[c.AgentID] = p
		sub.order = append(sub.order, c.AgentID)
	}
	p.Agent = p.Agent || c.Agent
	p.Output = p.Output || c.Output
	p.Forgotten = p.Forgotten || c.Forgotten
	p.Warnings = append(p.Warnings, c.Warnings...)
	if c.Link != "" {
		p.Link, p.LinkUp = c.Link, c.LinkUp
	}
	if c.Hosts != nil {
		p.Hosts = c.Hosts
	}
	sub.mu.Unlock()
	select {
	case sub.ready <- struct{}{}:
	default:
	}
}

// Feed fans changes out to subscriptions: a supervisor publishes its own
// agents' changes through one, and a viewer's client (SPEC §9) republishes
// what its host pushes through another, so a dashboard subscribes to a
// viewer as to a host. The zero Feed is ready to use; its methods are safe
// for concurrent use.
type Feed struct {
	// Payload, when set before the first Subscribe, fills in c.Info for
	// each change of an agent a subscriber drains: the supervisor's takes
	// the agent's snapshot, a viewer's client copies the one its host
	// pushed. It is called in the subscriber's goroutine, outside the
	// feed's locks, and leaves Info nil for an agent that is gone.
	Payload func(c *Change)

	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// Subscribe returns a new subscription to every change of the feed.
func (f *Feed) Subscribe() *Subscription { return f.subscribe(false) }

// SubscribeSummaries returns a subscription that takes only changes of
// summaries, forgets and warnings: a change of output alone (every read of
// a flood) neither wakes nor waits in it. Its changes carry no Info (no
// snapshot is taken for it): Wait uses one, and reads what it needs
// itself.
func (f *Feed) SubscribeSummaries() *Subscription { return f.subscribe(true) }

// Subscribers returns how many subscriptions are open.
func (f *Feed) Subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

func (f *Feed) subscribe(summaries bool) *Subscription {
	sub := &Subscription{feed: f, ready: make(chan struct{}, 1), pending: map[string]*Change{}, summaries: summaries}
	f.mu.Lock()
	if f.subs == nil {
		f.subs = map[*Subscription]struct{}{}
	}
	f.subs[sub] = struct{}{}
	f.mu.Unlock()
	return sub
}

func (f *Feed) remove(sub *Subscription) {
	f.mu.Lock()
	delete(f.subs, sub)
	f.mu.Unlock()
}

// Publish records c for every subscription. It never blocks on a
// subscriber.
func (f *Feed) Publish(c Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for sub := range f.subs {
		sub.add(c)
	}
}
