package supervisor

import (
	"context"
	"slices"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// Forget removes agent id, with its descendants, from the table and list
// for good (SPEC §10 forget, §14: a finished subtree), deepest first: the
// journal records it, so a later host does not restore them, and their
// paths are free again; their log and message files stay on disk.
// Descendants lists the others it forgot. Errors: "agent not found:
// <id>"; an agent of the subtree that runs is refused ("agent <id> is
// running; interrupt or close it before forgetting it").
func (s *Supervisor) Forget(ctx context.Context, id string) (proto.StatusResult, error) {
	tree, unlock, err := s.lockTree(proto.CallerOf(ctx), id)
	if err != nil {
		return proto.StatusResult{}, err
	}
	defer unlock()
	a := tree[len(tree)-1]
	s.mu.Lock()
	for _, d := range tree {
		if d.running != nil || d.replacing {
			s.mu.Unlock()
			return proto.StatusResult{}, proto.ErrForgetRunning(d.id)
		}
	}
	var dones []chan struct{}
	for _, d := range tree {
		if n := len(d.subs); n > 0 && d.subs[n-1].done != nil {
			dones = append(dones, d.subs[n-1].done)
		}
	}
	s.mu.Unlock()
	// Each agent took its final status, and its submission's end may be
	// being journaled: "forgotten" must come after it, or a later host
	// replaying the journal would bring the agent back. The operation
	// locks keep new submissions from starting meanwhile.
	for _, done := range dones {
		<-done
	}
	res := proto.StatusResult{AgentID: a.id, Status: proto.StatusForgotten}
	for _, d := range tree {
		s.mu.Lock()
		if _, ok := s.agents[d.id]; !ok {
			s.mu.Unlock()
			if d == a {
				return proto.StatusResult{}, proto.ErrNotFound(id)
			}
			continue
		}
		s.removeLocked(d)
		s.forgotten = append(s.forgotten, d.id)
		s.mu.Unlock()
		s.journal.Write(journal.Event{Event: "forgotten", AgentID: d.id, Note: "its logs stay on disk"})
		s.hub.Publish(proto.Change{AgentID: d.id, Agent: true, Forgotten: true})
		if d != a {
			res.Descendants = append(res.Descendants, d.id)
		}
	}
	return res, nil
}

// removeLocked takes agent a out of the supervisor: its id, path, display
// lines and mailbox. Call with s.mu held.
func (s *Supervisor) removeLocked(a *agent) {
	delete(s.agents, a.id)
	if s.paths[a.path] == a {
		delete(s.paths, a.path)
	}
	if i := slices.Index(s.order, a); i >= 0 {
		s.order = slices.Delete(s.order, i, i+1)
	}
	for _, sub := range a.subs {
		if sub.out != nil {
			s.lineMem.Forget(sub.out)
		}
	}
	a.mailbox.DropAll()
}
