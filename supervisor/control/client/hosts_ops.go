package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/subdash/subdash/supervisor/proto"
)

// The reads and operations of a viewer of several hosts: each goes to its
// agent's host (Hosts.of), a spawn to the host proto.WithHost names; a
// close of several agents, a search and a read of several windows go to
// every host they concern.

// The roles a Hosts plays.
var _ interface {
	proto.Viewer
	proto.Reader
	proto.Operator
	proto.MessageFiles
	proto.Searcher
	proto.Differ
	proto.Answerer
	proto.WindowsReader
	proto.HostSet
} = (*Hosts)(nil)

// Window asks agent id's host for a window of display lines (Remote.Window).
func (h *Hosts) Window(ctx context.Context, id string, seq int, from int64, n int) (proto.Window, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.Window{}, err
	}
	return r.Window(ctx, id, seq, from, n)
}

// Transcript asks agent id's host for a window of transcript entries.
func (h *Hosts) Transcript(ctx context.Context, id string, seq int, from int64, n int) (proto.TranscriptWindow, bool, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.TranscriptWindow{}, false, err
	}
	return r.Transcript(ctx, id, seq, from, n)
}

// Search searches agent id's log on its host.
func (h *Hosts) Search(ctx context.Context, id string, seq int, transcript bool, query string, from int64) (proto.SearchResult, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.SearchResult{}, err
	}
	return r.Search(ctx, id, seq, transcript, query, from)
}

// Message reads the whole message of agent id's submission from its host.
func (h *Hosts) Message(ctx context.Context, id string, seq int) (string, error) {
	r, err := h.of(id)
	if err != nil {
		return "", err
	}
	return r.Message(ctx, id, seq)
}

// WriteLines streams agent id's display lines from its host.
func (h *Hosts) WriteLines(ctx context.Context, w io.Writer, id string, seq int, keepSGR bool) error {
	r, err := h.of(id)
	if err != nil {
		return err
	}
	return r.WriteLines(ctx, w, id, seq, keepSGR)
}

// Storage says where the logs of the host proto.HostOf(ctx) names are
// (the first host that answers when it names none).
func (h *Hosts) Storage(ctx context.Context) (proto.Storage, error) {
	r, err := h.forSpawn(ctx)
	if err != nil {
		return proto.Storage{}, err
	}
	return r.Storage(ctx)
}

// forSpawn returns the Remote of the host ctx names (proto.WithHost), or
// of the first host that answers when it names none.
func (h *Hosts) forSpawn(ctx context.Context) (*Remote, error) {
	if name := proto.HostOf(ctx); name != "" {
		return h.named(name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var first error
	for _, hc := range h.hosts {
		r, err := h.liveLocked(hc)
		if err == nil {
			return r, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// Spawn spawns an agent on the host proto.WithHost names in ctx.
func (h *Hosts) Spawn(ctx context.Context, message string) (proto.SpawnResult, error) {
	r, err := h.forSpawn(ctx)
	if err != nil {
		return proto.SpawnResult{}, err
	}
	return r.Spawn(ctx, message)
}

// SpawnAgent spawns a named agent on the host proto.WithHost names in ctx.
func (h *Hosts) SpawnAgent(ctx context.Context, req proto.SpawnRequest) (proto.SpawnResult, error) {
	r, err := h.forSpawn(ctx)
	if err != nil {
		return proto.SpawnResult{}, err
	}
	return r.SpawnAgent(ctx, req)
}

// Send sends to agent id on its host.
func (h *Hosts) Send(ctx context.Context, id, message string, interrupt bool) (proto.SendResult, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.SendResult{}, err
	}
	return r.Send(ctx, id, message, interrupt)
}

// Queue queues a message for agent id on its host.
func (h *Hosts) Queue(ctx context.Context, id, message string) (proto.SendResult, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.SendResult{}, err
	}
	return r.Queue(ctx, id, message)
}

// Steer steers a message into agent id on its host.
func (h *Hosts) Steer(ctx context.Context, id, message string) (proto.SendResult, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.SendResult{}, err
	}
	return r.Steer(ctx, id, message)
}

// CancelQueue drops agent id's last queued message on its host.
func (h *Hosts) CancelQueue(ctx context.Context, id string) (proto.StatusResult, error) {
	return h.status(ctx, id, (*Remote).CancelQueue)
}

// Interrupt interrupts agent id on its host.
func (h *Hosts) Interrupt(ctx context.Context, id string) (proto.StatusResult, error) {
	return h.status(ctx, id, (*Remote).Interrupt)
}

// Close closes agent id on its host.
func (h *Hosts) Close(ctx context.Context, id string) (proto.StatusResult, error) {
	return h.status(ctx, id, (*Remote).Close)
}

// Resume reopens agent id on its host.
func (h *Hosts) Resume(ctx context.Context, id string) (proto.StatusResult, error) {
	return h.status(ctx, id, (*Remote).Resume)
}

// Forget forgets agent id on its host.
func (h *Hosts) Forget(ctx context.Context, id string) (proto.StatusResult, error) {
	return h.status(ctx, id, (*Remote).Forget)
}

// MarkSeen marks agent id seen on its host.
func (h *Hosts) MarkSeen(ctx context.Context, id string) (proto.StatusResult, error) {
	return h.status(ctx, id, (*Remote).MarkSeen)
}

// status runs op, an operation answered by a StatusResult, on agent id's
// host.
func (h *Hosts) status(ctx context.Context, id string, op func(*Remote, context.Context, string) (proto.StatusResult, error)) (proto.StatusResult, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.StatusResult{}, err
	}
	return op(r, ctx, id)
}

// CloseMany closes the agents req lists on their hosts, every host at
// once; a request by status or of all closes on every host that answers.
// The result holds every host's; the error names each host that failed.
func (h *Hosts) CloseMany(ctx context.Context, req proto.CloseManyRequest) (proto.CloseManyResult, error) {
	type part struct {
		r   *Remote
		req proto.CloseManyRequest
		res proto.CloseManyResult
		err error
	}
	var parts []*part
	if len(req.AgentIDs) > 0 {
		by := map[*Remote]*part{}
		for _, id := range req.AgentIDs {
			r, err := h.of(id)
			if err != nil {
				return proto.CloseManyResult{}, err
			}
			if by[r] == nil {
				by[r] = &part{r: r}
				parts = append(parts, by[r])
			}
			by[r].req.AgentIDs = append(by[r].req.AgentIDs, id)
		}
	} else {
		h.mu.Lock()
		for _, hc := range h.hosts {
			if r, err := h.liveLocked(hc); err == nil {
				parts = append(parts, &part{r: r, req: req})
			}
		}
		h.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.res, p.err = p.r.CloseMany(ctx, p.req)
		}()
	}
	wg.Wait()
	var out proto.CloseManyResult
	var errs []error
	for _, p := range parts {
		out.Closed = append(out.Closed, p.res.Closed...)
		out.DroppedQueued = out.DroppedQueued || p.res.DroppedQueued
		if p.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", h.nameOf(p.r), p.err))
		}
	}
	return out, errors.Join(errs...)
}

// nameOf names the host of Remote r.
func (h *Hosts) nameOf(r *Remote) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, hc := range h.hosts {
		if hc.remote == r {
			return hc.t.Name
		}
	}
	return r.where
}

// Approve allows a pending request of agent id on its host.
func (h *Hosts) Approve(ctx context.Context, id, requestID string, always bool) (proto.ApprovalResult, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.ApprovalResult{}, err
	}
	return r.Approve(ctx, id, requestID, always)
}

// Deny refuses a pending request of agent id on its host.
func (h *Hosts) Deny(ctx context.Context, id, requestID, message string) (proto.ApprovalResult, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.ApprovalResult{}, err
	}
	return r.Deny(ctx, id, requestID, message)
}

// Answer answers a pending question of agent id on its host.
func (h *Hosts) Answer(ctx context.Context, id, requestID string, answers map[string][]string) (proto.QuestionResult, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.QuestionResult{}, err
	}
	return r.Answer(ctx, id, requestID, answers)
}

// WriteMessage streams agent id's whole message from its host.
func (h *Hosts) WriteMessage(ctx context.Context, w io.Writer, id string, seq int) error {
	r, err := h.of(id)
	if err != nil {
		return err
	}
	return r.WriteMessage(ctx, w, id, seq)
}

// SendFrom sends (or queues) the message read from rd to agent id on its
// host.
func (h *Hosts) SendFrom(ctx context.Context, id string, rd io.Reader, interrupt, queue bool) (proto.SendResult, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.SendResult{}, err
	}
	return r.SendFrom(ctx, id, rd, interrupt, queue)
}

// Resend sends agent id's last message again on its host.
func (h *Hosts) Resend(ctx context.Context, id string, interrupt, queue bool) (proto.SendResult, error) {
	r, err := h.of(id)
	if err != nil {
		return proto.SendResult{}, err
	}
	return r.Resend(ctx, id, interrupt, queue)
}

// WriteChanges streams the diff of agent id's submission from its host.
func (h *Hosts) WriteChanges(ctx context.Context, w io.Writer, id string, seq int, color bool) error {
	r, err := h.of(id)
	if err != nil {
		return err
	}
	return r.WriteChanges(ctx, w, id, seq, color)
}

// Windows reads several windows, one request per host they are on, the
// hosts at once; the answers are in the order asked. A window of a host
// that is lost is answered by its error.
func (h *Hosts) Windows(ctx context.Context, reqs []proto.WindowRequest) ([]proto.WindowAnswer, error) {
	type part struct {
		r   *Remote
		at  []int // the requests' places in reqs
		req []proto.WindowRequest
	}
	out := make([]proto.WindowAnswer, len(reqs))
	by := map[*Remote]*part{}
	var parts []*part
	for i, q := range reqs {
		r, err := h.of(q.AgentID)
		if err != nil {
			out[i].Err = err
			continue
		}
		if by[r] == nil {
			by[r] = &part{r: r}
			parts = append(parts, by[r])
		}
		by[r].at = append(by[r].at, i)
		by[r].req = append(by[r].req, q)
	}
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ans, err := p.r.Windows(ctx, p.req)
			for k, i := range p.at {
				switch {
				case err != nil:
					out[i].Err = err
				case k < len(ans):
					out[i] = ans[k]
				default:
					out[i].Err = fmt.Errorf("the host answered %d of %d windows", len(ans), len(p.req))
				}
			}
		}()
	}
	wg.Wait()
	return out, nil
}

// SearchAgents searches every host that answers, in the order given,
// each agent's output (proto.Searcher): hits come host by host; Limit
// bounds them all; After resumes in the host of its agent. A host that is
// lost is not searched, and a note says so; a host's own failure ends
// the search with its error, naming it.
func (h *Hosts) SearchAgents(ctx context.Context, req proto.SearchRequest, emit func(proto.SearchHit) error) (proto.SearchSummary, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = proto.DefaultSearchLimit
	}
	h.mu.Lock()
	start := 0
	if req.After != nil {
		if hc := h.owner[req.After.AgentID]; hc != nil {
			for i := range h.hosts {
				if h.hosts[i] == hc {
					start = i
				}
			}
		}
	}
	type target struct {
		name string
		r    *Remote
		err  error
	}
	var ts []target
	for _, hc := range h.hosts[start:] {
		r, err := h.liveLocked(hc)
		ts = append(ts, target{hc.t.Name, r, err})
	}
	var only *Remote
	if hc := h.owner[req.Agent]; req.Agent != "" && hc != nil {
		only = hc.remote
	}
	h.mu.Unlock()
	var sum proto.SearchSummary
	for i, t := range ts {
		if t.err != nil {
			sum.Notes = append(sum.Notes, t.err.Error()+"; not searched")
			continue
		}
		if only != nil && t.r != only {
			continue
		}
		q := req
		q.Limit = limit - sum.Hits
		if i > 0 {
			q.After = nil
		}
		s, err := t.r.SearchAgents(ctx, q, emit)
		if err != nil && req.Agent != "" && only == nil && proto.CodeOf(err) == proto.CodeNotFound {
			continue // the agent named is not on this host
		}
		if err != nil {
			return sum, fmt.Errorf("%s: %w", t.name, err)
		}
		sum.Hits += s.Hits
		for _, n := range s.Notes {
			sum.Notes = append(sum.Notes, t.name+": "+n)
		}
		if s.Truncated || sum.Hits >= limit {
			sum.Truncated = s.Truncated || i < len(ts)-1
			break
		}
	}
	return sum, nil
}
