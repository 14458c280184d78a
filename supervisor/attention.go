package supervisor

import (
	"context"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// Attention (SPEC §11): who needs the user; announce hands a transition
// to the notifier (notify.go), which runs --notify-command.

// needYouLocked marks agent a as needing the user for reason (SPEC §11)
// and returns the attention to announce. Call with s.mu held, then, after
// unlocking, publish a Change for a and call s.announce with the result.
//
// This is the hook for approvals (SPEC §12): a pending approval request
// marks its agent with reason "approval" through it, and the
// dashboards, the status line, the jump key, notifications and
// --notify-command all follow. A host that is shutting down marks nothing.
func (s *Supervisor) needYouLocked(a *agent, reason string) *proto.Attention {
	if s.shutdown {
		return nil
	}
	s.attentionSeq++
	at := &proto.Attention{Reason: reason, Since: proto.Time{Time: time.Now()}, Seq: s.attentionSeq, Text: attentionText(a, reason)}
	a.needsYou = at
	return at
}

// announce runs the notify command for a transition (nil: none).
func (s *Supervisor) announce(id string, at *proto.Attention) {
	if at != nil && s.notifier != nil {
		s.notifier.notify(id, at)
	}
}

// MarkSeen records that the user looked at agent id (selected it in a
// dashboard): it no longer needs you (SPEC §11). Marking an agent that
// does not need you changes nothing. The result is the agent's id and
// status. Errors: "agent not found: <id>".
func (s *Supervisor) MarkSeen(_ context.Context, id string) (proto.StatusResult, error) {
	s.mu.Lock()
	a, err := s.lookup(id)
	if err != nil {
		s.mu.Unlock()
		return proto.StatusResult{}, err
	}
	was := a.needsYou
	a.needsYou = nil
	res := proto.StatusResult{AgentID: a.id, Status: a.status}
	s.mu.Unlock()
	if was != nil {
		s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	}
	return res, nil
}

// attentionText is the short summary of why agent a needs you, e.g.
// "agent 3fa2c1d0 errored (submission failed with exit code 2): fix the
// tests". Call with s.mu held.
func attentionText(a *agent, reason string) string {
	head := "agent " + termtext.ShortID(a.id) + " " + reason
	switch {
	case reason == string(proto.StatusErrored) && a.lastError != nil:
		head += " (" + *a.lastError + ")"
	case reason == proto.ReasonStalled:
		head += " (no output, no event and no CPU time)"
	}
	return termtext.OneLine(head+": "+a.lastMessage, proto.MaxAttentionText)
}

func copyAttention(at *proto.Attention) *proto.Attention {
	if at == nil {
		return nil
	}
	v := *at
	return &v
}
