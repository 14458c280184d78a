package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// Progress of a waiting call (SPEC §6). A tools/call of wait or
// wait_agent that carries _meta.progressToken hears notifications/progress
// for that token when each awaited agent ends ("2 of 5 ended: /root/review
// completed") and whenever it was silent for progressInterval. total is
// the number of awaited agents: wait's ids; for wait_agent the agents
// list_agents shows the caller that run when the call begins. progress is
// the number of ended ones at an end, and between ends that number plus
// the elapsed fraction of the timeout, below the next whole number, so it
// strictly increases as MCP requires (basic/utilities/progress). Every
// notification is written before the call's result, which stays the same
// with or without a token; a call without one hears nothing.

// progressInterval is the longest a waiting call with a progress token
// stays silent: clients give up calls that stay silent (Claude Code
// resets its timeout when progress arrives), and a person watching the
// orchestrator sees it move. Tests shorten it.
var progressInterval = 5 * time.Second

// reporter tells the client of one waiting call how it goes.
type reporter struct {
	session *mcp.ServerSession
	token   any
	total   int
	timeout time.Duration
	start   time.Time

	mu     sync.Mutex
	ended  []string  // keys of the agents told ended, in order
	last   float64   // the progress last sent; -1 before the first
	sentAt time.Time // when the last notification was sent (start before the first)
}

// newReporter returns the reporter of req's call, which awaits total
// agents for timeout, or nil when req carries no progress token.
func newReporter(req *mcp.CallToolRequest, total int, timeout time.Duration) *reporter {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	now := time.Now()
	return &reporter{session: req.Session, token: token, total: total, timeout: timeout, start: now, last: -1, sentAt: now}
}

// end tells the client that the agent key (an id as the call named it)
// ended, once per key: "<n> of <total> ended: <who> <status>", progress
// n. A notification that could not be written (the call ended) is not
// counted, so the result's ends are told once.
func (r *reporter) end(ctx context.Context, key, who, status string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.ended, key) {
		return
	}
	n := len(r.ended) + 1
	if r.notifyLocked(ctx, float64(n), fmt.Sprintf("%d of %d ended: %s %s", n, r.total, who, status)) {
		r.ended = append(r.ended, key)
	}
}

// beat tells the client that the call still waits when it was silent for
// progressInterval, and returns how long until the next one is due.
func (r *reporter) beat(ctx context.Context) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if silent := now.Sub(r.sentAt); silent < progressInterval {
		return progressInterval - silent
	}
	n := len(r.ended)
	p := float64(n) + float64(now.Sub(r.start))/float64(r.timeout)
	if p >= float64(n+1) || p <= r.last {
		// past the timeout, or a clock that did not move: half way to
		// the next whole number still increases
		p = r.last + (float64(n+1)-r.last)/2
	}
	what := fmt.Sprintf("%d of %d ended", n, r.total)
	if r.total == 0 {
		what = "no agent running"
	}
	r.notifyLocked(ctx, p, fmt.Sprintf("%s; waited %s of %s", what, seconds(now.Sub(r.start)), seconds(r.timeout)))
	return progressInterval
}

// notifyLocked sends one notification and reports whether it was
// written. Call with r.mu held: notifications go out in order, their
// progress increasing.
func (r *reporter) notifyLocked(ctx context.Context, progress float64, message string) bool {
	err := r.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: r.token, Progress: progress, Total: float64(r.total), Message: message})
	if err != nil {
		return false // the call ended, or the client is gone: nobody is listening
	}
	r.last, r.sentAt = progress, time.Now()
	return true
}

// keepTelling sends r's heartbeats (beat) until stop is called; stop
// returns once none can be sent any more.
func (r *reporter) keepTelling(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				t.Reset(r.beat(ctx))
			}
		}
	}()
	return func() { cancel(); <-done }
}

// seconds writes d for a person: tenths of a second below 10 s, else
// whole seconds ("2.5s", "30s", "5m0s").
func seconds(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// waitTelling is b.Wait (the seed family's wait) that tells the client of
// req how it goes when req carries a progress token: total is the ids
// given, each final id of the result is told ended before the result
// (wait returns as soon as one is final), and heartbeats go out while it
// waits. timeoutMS is Wait's.
func waitTelling(ctx context.Context, req *mcp.CallToolRequest, b Backend, ids []string, timeoutMS *int) (proto.WaitResult, error) {
	var named []string // the ids, each once, in order
	for _, id := range ids {
		if !slices.Contains(named, id) {
			named = append(named, id)
		}
	}
	ms := proto.DefaultWaitTimeoutMS
	if timeoutMS != nil {
		ms = min(max(*timeoutMS, proto.MinWaitTimeoutMS), proto.MaxWaitTimeoutMS)
	}
	r := newReporter(req, len(named), time.Duration(ms)*time.Millisecond)
	if r == nil || len(ids) == 0 || timeoutMS != nil && *timeoutMS <= 0 {
		return b.Wait(ctx, ids, timeoutMS) // nothing to tell, or refused at once
	}
	stop := r.keepTelling(ctx)
	res, err := b.Wait(ctx, ids, timeoutMS)
	stop()
	if err == nil {
		for _, id := range named {
			if st, ok := res.Status[id]; ok {
				who := id
				if p := res.Details[id].AgentPath; p != "" {
					who = p
				}
				r.end(ctx, id, who, string(st))
			}
		}
	}
	return res, err
}

// waitMailboxTelling is b.WaitMailbox (wait_agent) that tells the client
// of req how it goes when req carries a progress token: total is the
// agents the caller of ctx awaits (awaitedAgents), each is told ended as
// the backend's summaries show it stop running (followEnds) or, at the
// latest, as its end item comes in the result, and heartbeats go out
// while it waits. timeoutMS and ack are WaitMailbox's.
func waitMailboxTelling(ctx context.Context, req *mcp.CallToolRequest, b Backend, timeoutMS *int, ack uint64) (proto.MailboxResult, error) {
	ms := proto.DefaultWaitTimeoutMS
	if timeoutMS != nil {
		ms = *timeoutMS
	}
	if req == nil || req.Params == nil || req.Params.GetProgressToken() == nil || ms < proto.MinWaitTimeoutMS || ms > proto.MaxWaitTimeoutMS {
		return b.WaitMailbox(ctx, timeoutMS, ack) // nothing to tell, or refused at once
	}
	awaited := awaitedAgents(ctx, b)
	r := newReporter(req, len(awaited), time.Duration(ms)*time.Millisecond)
	fctx, cancel := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		followEnds(fctx, b, awaited, r)
	}()
	stop := r.keepTelling(ctx)
	res, err := b.WaitMailbox(ctx, timeoutMS, ack)
	cancel()
	<-followed
	stop()
	if err == nil {
		for _, it := range res.Items {
			if _, ok := awaited[it.EndOf]; ok && it.EndOf != "" {
				r.end(ctx, it.EndOf, it.Path, it.Status)
			}
		}
	}
	return res, err
}

// awaitedAgents returns the agents a wait_agent of the caller of ctx
// awaits, by id, with their paths: those list_agents shows the caller
// (its subtree) that run now (running or pending_init). A `subdash mcp`
// run inside a submission acts for that submission's agent (SPEC §14),
// which runs while it waits and is not awaited: it is the agent whose
// latest submission is this process's SUBDASH_SUBMISSION_ID. When the
// backend cannot say, none are awaited; the wait itself reports the
// backend's failure.
func awaitedAgents(ctx context.Context, b Backend) map[string]string {
	tree, err := b.ListTree(ctx, "")
	if err != nil {
		return map[string]string{}
	}
	awaited := map[string]string{}
	for _, a := range tree.Agents {
		if a.Status == proto.TreeRunning || a.Status == proto.TreePendingInit {
			awaited[a.AgentID] = a.AgentPath
		}
	}
	if sub := os.Getenv("SUBDASH_SUBMISSION_ID"); sub != "" && len(awaited) > 0 {
		if ls, err := b.List(ctx); err == nil {
			for _, s := range ls.Agents {
				if s.LastSubmissionID == sub {
					delete(awaited, s.AgentID)
				}
			}
		}
	}
	return awaited
}

// followEnds tells r of each agent of awaited (id -> path) that stops
// running, as the backend's summaries show it, until ctx ends. The status
// told is the multi-agent family's word for the agent (completed,
// errored, interrupted, shutdown).
func followEnds(ctx context.Context, b Backend, awaited map[string]string, r *reporter) {
	if len(awaited) == 0 {
		return
	}
	followSummaries(ctx, b, awaited, func(s proto.Summary) {
		if s.Status == proto.StatusRunning || s.PendingStart {
			return
		}
		r.end(ctx, s.AgentID, s.AgentPath, treeStatus(ctx, b, s))
	})
}

// treeStatus is the multi-agent family's status of the agent of s, which
// stopped running: list_agents' word when it still says the agent ended,
// else (a queued message started it again) the word of s's status.
func treeStatus(ctx context.Context, b Backend, s proto.Summary) string {
	if tree, err := b.ListTree(ctx, s.AgentPath); err == nil {
		for _, a := range tree.Agents {
			if a.AgentID == s.AgentID && a.Status != proto.TreeRunning && a.Status != proto.TreePendingInit {
				return a.Status
			}
		}
	}
	if s.Status == proto.StatusClosed {
		return proto.TreeShutdown
	}
	return string(s.Status)
}

// summaryEvents is the control client's follower of summaries
// (client.Client.Events, GET /v1/events).
type summaryEvents interface {
	Events(ctx context.Context, fn func(proto.Summary) error) error
}

// summaryFeed is a supervisor of this process as a follower of summaries.
type summaryFeed interface {
	SubscribeSummaries() *proto.Subscription
	Agent(id string) (proto.AgentInfo, bool)
}

// Both backends follow summaries: the client of a host over its socket,
// and a supervisor of this process.
var (
	_ summaryEvents = (*client.Client)(nil)
	_ summaryFeed   = (*supervisor.Supervisor)(nil)
)

// followSummaries calls fn with the summary of each agent of ids now,
// then each time one changes, until ctx ends or the backend's stream of
// changes ends (the host went away: the wait reports it). A backend that
// has no such stream calls fn never.
func followSummaries(ctx context.Context, b Backend, ids map[string]string, fn func(proto.Summary)) {
	switch f := b.(type) {
	case summaryEvents:
		_ = f.Events(ctx, func(s proto.Summary) error {
			if _, ok := ids[s.AgentID]; ok {
				fn(s)
			}
			return nil
		})
	case summaryFeed:
		sub := f.SubscribeSummaries()
		defer sub.Close()
		now := func(id string) {
			if a, ok := f.Agent(id); ok {
				fn(a.Summary)
			}
		}
		for _, id := range slices.Sorted(maps.Keys(ids)) {
			now(id)
		}
		for {
			changes, err := sub.Next(ctx)
			if err != nil {
				return
			}
			for _, c := range changes {
				if _, ok := ids[c.AgentID]; ok && c.Agent {
					now(c.AgentID)
				}
			}
		}
	}
}
