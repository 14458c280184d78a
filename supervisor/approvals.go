package supervisor

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/steer"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
)

// Approvals (SPEC §12): with --approvals, a claude submission's stdin stays
// open and carries stream-json; each can_use_tool control request the CLI
// writes becomes a pending approval of the agent until a person answers it
// (Approve, Deny) or the submission is stopped, which denies it. A codex
// submission's approval requests come the same way from its app-server
// (codex.go), and each answer goes back through approvals.reply. Nothing
// is ever allowed without an answer.

// DefaultDenyMessage is what the agent reads when a denial gives no reason.
const DefaultDenyMessage = "The user denied this tool use."

// approvals is the approval state of one submission run with --approvals.
// The fields below stdin are guarded by Supervisor.mu.
type approvals struct {
	stdin   *steer.Stdin
	session string // the CLI session the submission runs in
	// relay says that tool permission requests reach a person
	// (--approvals); without it they are denied at once as the CLI denies
	// them without a prompt tool. Questions are always relayed.
	relay bool
	// reply sends the CLI the answer to request c (a decision of
	// proto's, the message of a denial).
	reply func(c transcript.ControlRequest, decision, message string)
	// pending are the unanswered requests, oldest first.
	pending []*approvalRequest
	// answered says, for every request no longer pending, how it ended
	// ("allowed", "denied: …"), so a late answer is refused by name.
	answered map[string]string
	// asked are its question requests, pending and ended, oldest first:
	// the record keeps them (questions_record.go).
	asked []*approvalRequest
}

type approvalRequest struct {
	req transcript.ControlRequest
	at  time.Time
	// questions are what an AskUserQuestion request asks; nil for a
	// tool permission request. answers are a person's answers to them,
	// question text to answer.
	questions []proto.Question
	answers   map[string]string
}

func (r *approvalRequest) info(sub *submission) proto.PendingApproval {
	return proto.PendingApproval{RequestID: r.req.RequestID, Tool: r.req.Tool, Summary: r.req.Summary,
		Description: r.req.Description, SubmissionID: sub.id, RequestedAt: proto.Time{Time: r.at}}
}

// newApprovalsLocked prepares sub to relay approvals: the initialize
// request and the message as a stream-json user message are queued for its
// stdin, which stays open until the final result. Call with s.mu held.
func (s *Supervisor) newApprovalsLocked(a *agent, sub *submission) {
	q := steer.NewStdin()
	if sub.steer != nil {
		q = sub.steer.stdin // one stdin; steering closes it (steerResult)
	}
	q.Write(transcript.ClaudeInitialize("subdash-init-" + sub.id))
	_, session := a.preset.CommandFor(a.id, a.sessionID)
	sub.appr = &approvals{stdin: q, session: session, relay: a.preset.Approvals, answered: map[string]string{},
		reply: func(c transcript.ControlRequest, decision, message string) {
			if decision == proto.DecisionDeny {
				q.Write(transcript.ClaudeDeny(c, message))
			} else {
				q.Write(transcript.ClaudeAllow(c, decision == proto.DecisionAllowAlways))
			}
		}}
	sub.tr.onControl = func(line []byte) { s.onControl(a, sub, line) }
	if sub.steer == nil {
		sub.tr.onFinal = q.Close // the CLI ends once its stdin closes
	}
}

// stdinFeed returns what writes sub's stdin: its message file and a
// newline (SPEC §4); for codex, the app-server's requests (codexFeed);
// or, with approvals, the stream-json queue, after the initialize request
// the message as a stream-json user message. That one
// line is JSON, so with approvals the message is read whole from its file
// and held until the child has read it. Errors: the message file cannot be
// read.
func (s *Supervisor) stdinFeed(a *agent, sub *submission) (func(io.WriteCloser), error) {
	if sub.codex != nil {
		return s.codexFeed(sub)
	}
	if sub.appr != nil {
		b, err := os.ReadFile(sub.msgPath())
		if err != nil {
			return nil, fmt.Errorf("cannot read the message from %s: %v; check --state-dir", sub.msgPath(), err)
		}
		sub.appr.stdin.Write(transcript.ClaudeUserMessage(string(b), sub.appr.session))
		return sub.appr.stdin.Run, nil
	}
	if sub.steer != nil { // steerable: the message as the first stream-json line
		b, err := os.ReadFile(sub.msgPath())
		if err != nil {
			return nil, fmt.Errorf("cannot read the message from %s: %v; check --state-dir", sub.msgPath(), err)
		}
		s.mu.Lock()
		session := s.steerSessionLocked(a)
		s.mu.Unlock()
		sub.steer.stdin.Write(steer.UserLine(string(b), session, ""))
		return sub.steer.stdin.Run, nil
	}
	return feedMessage(sub.msgPath(), sub.out.Note), nil
}

// onControl handles a control line of sub's CLI: a can_use_tool request
// becomes pending (approvalRequested); a cancellation withdraws a pending
// request.
func (s *Supervisor) onControl(a *agent, sub *submission, line []byte) {
	c, ok := transcript.ParseClaudeControl(line)
	if !ok || c.RequestID == "" {
		return
	}
	if c.Type == "control_cancel_request" {
		s.approvalWithdrawn(a, sub, c.RequestID)
		return
	}
	if c.Subtype != "can_use_tool" {
		return
	}
	if qs, ok := transcript.ParseQuestions(c); ok {
		s.questionRequested(a, sub, c, qs)
		return
	}
	if !sub.appr.relay {
		s.notRelayed(a, sub, c)
		return
	}
	s.approvalRequested(a, sub, c)
}

// approvalWithdrawn records that the CLI withdrew the pending request rid
// of sub.
func (s *Supervisor) approvalWithdrawn(a *agent, sub *submission, rid string) {
	ap := sub.appr
	s.mu.Lock()
	r := ap.takeLocked(rid)
	if r != nil {
		ap.answered[rid] = "withdrawn by the agent CLI"
	}
	s.mu.Unlock()
	if r != nil {
		s.journal.Write(journal.Event{Event: "approval_withdrawn", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
			RequestID: rid, Tool: r.req.Tool})
		s.hub.Publish(proto.Change{AgentID: a.id, Agent: true, Output: true})
	}
}

// approvalRequested makes request c of sub's CLI pending, or answers it at
// once: allowed when an earlier "allow always" covers its tool, denied
// when the submission is being stopped.
func (s *Supervisor) approvalRequested(a *agent, sub *submission, c transcript.ControlRequest) {
	ap := sub.appr
	s.mu.Lock()
	stopping, always := sub.reason, a.alwaysAllowed[c.Tool]
	var at *proto.Attention
	switch {
	case stopping != "":
		ap.answered[c.RequestID] = "denied: " + stopping
	case always:
		ap.answered[c.RequestID] = "allowed: an earlier answer allowed " + c.Tool + " for this agent's session"
	default:
		ap.pending = append(ap.pending, &approvalRequest{req: c, at: time.Now()})
		a.updatedAt = time.Now()
		// It needs you (SPEC §11, §12): marked, rung, --notify-command.
		if at = s.needYouLocked(a, proto.ReasonApproval); at != nil {
			at.Text = termtext.OneLine("agent "+termtext.ShortID(a.id)+" needs approval: "+c.Tool+" "+c.Summary, proto.MaxAttentionText)
		}
	}
	s.mu.Unlock()
	s.journal.Write(journal.Event{Event: "approval_requested", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
		RequestID: c.RequestID, Tool: c.Tool, Note: c.Summary})
	switch {
	case stopping != "":
		s.answer(a, sub, &approvalRequest{req: c}, proto.DecisionDeny, "subdash: "+stopping, "denied: "+stopping)
	case always:
		s.answer(a, sub, &approvalRequest{req: c}, proto.DecisionAllow, "", "allowed: an earlier answer allowed "+c.Tool+" for this agent's session")
	default:
		s.hub.Publish(proto.Change{AgentID: a.id, Agent: true, Output: true})
		s.announce(a.id, at)
	}
}

// takeLocked removes the pending request rid and returns it, or nil.
func (ap *approvals) takeLocked(rid string) *approvalRequest {
	for i, r := range ap.pending {
		if r.req.RequestID == rid {
			ap.pending = append(ap.pending[:i:i], ap.pending[i+1:]...)
			return r
		}
	}
	return nil
}

// Approve allows a pending tool permission request of agent id (SPEC §12):
// requestID names it, "" means the oldest pending one (the result names
// which). With always, the tool is allowed for the rest of the agent's
// session: the answer carries a session permission rule for it, and later
// submissions of the agent get that tool allowed by the same answer.
// Errors: "agent not found: <id>"; no pending request; a request that was
// already answered (by another client meanwhile) or never existed; nothing
// is sent then.
func (s *Supervisor) Approve(ctx context.Context, id, requestID string, always bool) (proto.ApprovalResult, error) {
	decision := proto.DecisionAllow
	if always {
		decision = proto.DecisionAllowAlways
	}
	return s.decide(id, requestID, decision, "")
}

// Deny refuses a pending tool permission request of agent id (SPEC §12);
// message is the reason the agent reads ("" sends DefaultDenyMessage).
// requestID and the errors are as for Approve. The agent goes on: the CLI
// hands the denial to the model as the tool's result.
func (s *Supervisor) Deny(ctx context.Context, id, requestID, message string) (proto.ApprovalResult, error) {
	message = strings.TrimSpace(message)
	if message == "" {
		message = DefaultDenyMessage
	}
	return s.decide(id, requestID, proto.DecisionDeny, message)
}

func (s *Supervisor) decide(id, requestID, decision, message string) (proto.ApprovalResult, error) {
	requestID = strings.TrimSpace(requestID)
	s.mu.Lock()
	a, err := s.lookup(id)
	if err != nil {
		s.mu.Unlock()
		return proto.ApprovalResult{}, err
	}
	sub, r, err := s.findRequestLocked(a, requestID)
	if err != nil {
		s.mu.Unlock()
		return proto.ApprovalResult{}, err
	}
	sub.appr.takeLocked(r.req.RequestID)
	text := "allowed"
	switch decision {
	case proto.DecisionAllowAlways:
		if a.alwaysAllowed == nil {
			a.alwaysAllowed = map[string]bool{}
		}
		a.alwaysAllowed[r.req.Tool] = true
		text = "allowed " + r.req.Tool + " for the rest of this agent's session"
	case proto.DecisionDeny:
		text = "denied: " + message
	}
	sub.appr.answered[r.req.RequestID] = text
	a.updatedAt = time.Now()
	s.mu.Unlock()
	s.answer(a, sub, r, decision, message, text)
	return proto.ApprovalResult{AgentID: a.id, RequestID: r.req.RequestID, Tool: r.req.Tool, Summary: r.req.Summary,
		Decision: decision, Message: message}, nil
}

// findRequestLocked finds the pending request rid of a ("" = the oldest
// pending one), with the errors of Approve. Call with s.mu held.
func (s *Supervisor) findRequestLocked(a *agent, rid string) (*submission, *approvalRequest, error) {
	sub := a.running
	if sub != nil && sub.appr != nil {
		for _, r := range sub.appr.pending {
			if rid == "" && r.questions == nil || rid != "" && r.req.RequestID == rid {
				if r.questions != nil {
					return nil, nil, proto.ErrBadAnswer("request " + rid + " of agent " + a.id + " is a question: answer it with subdash ctl answer, or the question panel")
				}
				return sub, r, nil
			}
		}
	}
	if rid == "" {
		return nil, nil, proto.ErrNoPendingApproval(a.id)
	}
	for _, old := range a.subs {
		if old.appr == nil {
			continue
		}
		if how, ok := old.appr.answered[rid]; ok {
			return nil, nil, proto.ErrNotPending(a.id, rid, how)
		}
	}
	return nil, nil, proto.ErrNoApprovalRequest(a.id, rid)
}

// answer writes the control_response for r on sub's stdin and records it
// in the transcript and the journal.
func (s *Supervisor) answer(a *agent, sub *submission, r *approvalRequest, decision, message, text string) {
	sub.appr.reply(r.req, decision, message)
	sub.tr.add(transcript.Entry{Kind: transcript.KindApprovalAnswer, Tool: r.req.Tool, ID: r.req.RequestID,
		Summary: r.req.Summary, Text: text, IsError: decision == proto.DecisionDeny})
	ev := "approval_answered"
	if r.questions != nil {
		ev = "question_answered"
	}
	s.journal.Write(journal.Event{Event: ev, AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
		RequestID: r.req.RequestID, Tool: r.req.Tool, Decision: decision, Note: message})
	s.mu.Lock()
	if at := a.needsYou; at != nil && (at.Reason == proto.ReasonApproval || at.Reason == proto.ReasonQuestion) && len(sub.appr.pending) == 0 {
		a.needsYou = nil // answered, from wherever: nothing left to ask you
	}
	s.mu.Unlock()
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true, Output: true})
}

// denyPending denies every pending request of sub because it is being
// stopped (interrupt, close, quit, --timeout, host end: reason), then closes
// its stdin (SPEC §12: nothing is allowed without an answer).
func (s *Supervisor) denyPending(a *agent, sub *submission, reason string) {
	if sub.appr == nil {
		return
	}
	s.mu.Lock()
	pending := sub.appr.pending
	sub.appr.pending = nil
	for _, r := range pending {
		sub.appr.answered[r.req.RequestID] = "denied: " + reason
	}
	s.mu.Unlock()
	for _, r := range pending {
		s.answer(a, sub, r, proto.DecisionDeny, "subdash: "+reason, "denied: "+reason)
	}
	sub.appr.stdin.Close()
}

// expirePending records, when sub ended by itself, that its pending
// requests were never answered (the CLI failed them when stdin closed).
func (s *Supervisor) expirePending(a *agent, sub *submission) {
	if sub.appr == nil {
		return
	}
	s.mu.Lock()
	pending := sub.appr.pending
	sub.appr.pending = nil
	for _, r := range pending {
		sub.appr.answered[r.req.RequestID] = "the submission ended unanswered"
	}
	s.mu.Unlock()
	for _, r := range pending {
		ev := "approval_expired"
		if r.questions != nil {
			ev = "question_expired"
		}
		s.journal.Write(journal.Event{Event: ev, AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
			RequestID: r.req.RequestID, Tool: r.req.Tool, Note: "the submission ended before an answer"})
	}
	sub.appr.stdin.Close()
}

// pendingLocked returns copies of the pending requests of a's running
// submission, oldest first; nil when none. Call with s.mu held.
func pendingLocked(a *agent) []proto.PendingApproval {
	sub := a.running
	if sub == nil || sub.appr == nil {
		return nil
	}
	var out []proto.PendingApproval
	for _, r := range sub.appr.pending {
		if r.questions == nil {
			out = append(out, r.info(sub))
		}
	}
	return out
}

// errApprovalsPreset is the error for --approvals with what, a preset other
// than claude or codex, or a plain command (SPEC §12).
func errApprovalsPreset(what string) error {
	return fmt.Errorf("--approvals works with --preset claude or codex only, not with %s: only they have a headless approval channel; for codex exec use its sandbox and approval policy (--preset-args '--sandbox workspace-write', -c approval_policy=…), for gemini its --approval-mode", what)
}
