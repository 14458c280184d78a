package supervisor

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/proto"
)

// needYouLocked marks agent a as needing the user for reason (SPEC §11)
// and returns the attention to announce. Call with s.mu held, then, after
// unlocking, publish a Change for a and call s.announce with the result.
//
// This is the hook for approvals (SPEC §12): a pending approval request
// marks its agent with reason "approval" through needYou, and the
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

// needYou marks agent a as needing the user for reason, publishes the
// change and runs --notify-command for it (SPEC §11). It takes s.mu; the
// supervisor-internal hook for events such as an approval request.
func (s *Supervisor) needYou(a *agent, reason string) {
	s.mu.Lock()
	at := s.needYouLocked(a, reason)
	s.mu.Unlock()
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	s.announce(a.id, at)
}

// announce runs the notify command for a transition (nil: none).
func (s *Supervisor) announce(id string, at *proto.Attention) {
	if at != nil && s.notifier != nil {
		s.notifier.notify(id, at)
	}
}

// MarkSeen records that the user looked at agent id (selected it in a
// dashboard): it no longer needs you (SPEC §11). Marking an agent that
// does not need you changes nothing. Errors: "agent not found: <id>".
func (s *Supervisor) MarkSeen(id string) error {
	s.mu.Lock()
	a, err := s.lookup(id)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	was := a.needsYou
	a.needsYou = nil
	s.mu.Unlock()
	if was != nil {
		s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	}
	return nil
}

// attentionText is the short summary of why agent a needs you, e.g.
// "agent 3fa2c1d0 errored (submission failed with exit code 2): fix the
// tests". Call with s.mu held.
func attentionText(a *agent, reason string) string {
	head := "agent " + shortID(a.id) + " " + reason
	if reason == string(proto.StatusErrored) && a.lastError != nil {
		head += " (" + *a.lastError + ")"
	}
	return oneLine(head+": "+a.lastMessage, proto.MaxAttentionText)
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// oneLine turns s into one line of at most n characters that is safe to
// put into a terminal escape sequence or an environment variable: control
// characters (C0, C1, DEL, ESC) and invalid UTF-8 become spaces, runs of
// white space one space, and a cut ends with "…". It reads at most about
// 4n bytes of s, so a message of megabytes costs no more than a short one.
func oneLine(s string, n int) string {
	out := make([]rune, 0, n+1)
	space := false
	i, limit := 0, min(len(s), 4*n+64)
	for i < limit && len(out) <= n {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if r == utf8.RuneError && w <= 1 || unicode.IsControl(r) || unicode.IsSpace(r) {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
	}
	more := i < len(s) && strings.TrimSpace(s[i:]) != ""
	switch {
	case len(out) > n || more && len(out) == n:
		out = append(out[:n-1], '…')
	case more && len(out) > 0:
		out = append(out, '…')
	}
	return string(out)
}
