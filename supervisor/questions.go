package supervisor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
)

// Questions (SPEC §12 "Questions"): claude's AskUserQuestion tool call
// arrives as a can_use_tool control request on the same channel as the
// approvals (approvals.go), with or without --approvals. It waits as a
// pending request, marked as a question, until a person answers it
// (Answer), or the submission is stopped, which denies it like a pending
// approval.

// notRelayed denies tool permission request c of sub at once, as claude
// does without a prompt tool, in its words (transcript.ClaudeDenial):
// without --approvals nothing reaches a person but the agent's questions
// (SPEC §12).
func (s *Supervisor) notRelayed(a *agent, sub *submission, c transcript.ControlRequest) {
	msg := transcript.ClaudeDenial(c, sub.tr.cwd())
	s.mu.Lock()
	sub.appr.answered[c.RequestID] = "denied: " + msg
	s.mu.Unlock()
	sub.appr.reply(c, proto.DecisionDeny, msg)
	sub.tr.add(transcript.Entry{Kind: transcript.KindApprovalAnswer, Tool: c.Tool, ID: c.RequestID,
		Summary: c.Summary, Text: "denied without --approvals: " + msg, IsError: true})
}

// questionRequested makes question request c of sub pending, or denies it
// at once when the submission is being stopped.
func (s *Supervisor) questionRequested(a *agent, sub *submission, c transcript.ControlRequest, asked []transcript.Asked) {
	qs := make([]proto.Question, len(asked))
	for i, q := range asked {
		qs[i] = proto.Question{Question: q.Question, Header: q.Header, MultiSelect: q.MultiSelect}
		for j, l := range q.Labels {
			qs[i].Options = append(qs[i].Options, proto.QuestionOption{Label: l, Description: q.Descs[j]})
		}
	}
	r := &approvalRequest{req: c, at: time.Now(), questions: qs}
	ap := sub.appr
	s.mu.Lock()
	stopping := sub.reason
	ap.asked = append(ap.asked, r)
	var at *proto.Attention
	if stopping != "" {
		ap.answered[c.RequestID] = "denied: " + stopping
	} else {
		ap.pending = append(ap.pending, r)
		a.updatedAt = time.Now()
		// It needs you (SPEC §11, §12): marked, rung, --notify-command.
		if at = s.needYouLocked(a, proto.ReasonQuestion); at != nil {
			at.Text = termtext.OneLine("agent "+termtext.ShortID(a.id)+" "+proto.QuestionActivity(r.question(sub)), proto.MaxAttentionText)
		}
	}
	s.mu.Unlock()
	s.journal.Write(journal.Event{Event: "question_requested", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
		RequestID: c.RequestID, Tool: c.Tool, Questions: qs})
	if stopping != "" {
		s.answer(a, sub, r, proto.DecisionDeny, "subdash: "+stopping, "denied: "+stopping)
		return
	}
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true, Output: true})
	s.announce(a.id, at)
}

// question is the pending question request r of sub as list shows it.
func (r *approvalRequest) question(sub *submission) proto.PendingQuestion {
	return proto.PendingQuestion{RequestID: r.req.RequestID, Questions: r.questions,
		SubmissionID: sub.id, RequestedAt: proto.Time{Time: r.at}}
}

// questionsLocked returns the pending questions of a's running submission,
// oldest first; nil when none. Call with s.mu held.
func questionsLocked(a *agent) []proto.PendingQuestion {
	sub := a.running
	if sub == nil || sub.appr == nil {
		return nil
	}
	var out []proto.PendingQuestion
	for _, r := range sub.appr.pending {
		if r.questions != nil {
			out = append(out, r.question(sub))
		}
	}
	return out
}

// ErrMCPAnswers is the refusal of an answer from an MCP client on a host
// run without --mcp-answers (SPEC §12 "Questions").
func ErrMCPAnswers() error {
	return &proto.Error{Code: proto.CodeInvalid, Message: "a person must answer the agent's question (in the dashboard: A, or subdash ctl answer); this host was not started with --mcp-answers, which lets an MCP client answer"}
}

// Answer answers the pending question request requestID of agent id (""
// = the oldest; SPEC §12 "Questions"): answers maps each question, named
// by its text, its header, or "" when the request asks one, to the chosen
// option labels or other text (more than one only for a multi-select).
// Every question of the request must be answered. The agent reads the
// answers as the tool's result. Errors: from an MCP client (origin
// "mcp") on a host without --mcp-answers, ErrMCPAnswers; "agent not found: <id>"; no pending
// question; a request answered already or never asked; an answer that does
// not fit the questions (unknown question, none or several answers to a
// single-select one, a question left unanswered): nothing is sent then.
func (s *Supervisor) Answer(ctx context.Context, id, requestID string, answers map[string][]string) (proto.QuestionResult, error) {
	requestID = strings.TrimSpace(requestID)
	if proto.OriginOf(ctx) == "mcp" && !s.cfg.MCPAnswers {
		return proto.QuestionResult{}, ErrMCPAnswers()
	}
	s.mu.Lock()
	a, err := s.lookup(id)
	if err != nil {
		s.mu.Unlock()
		return proto.QuestionResult{}, err
	}
	sub, r, err := s.findQuestionLocked(a, requestID)
	if err != nil {
		s.mu.Unlock()
		return proto.QuestionResult{}, err
	}
	got, err := fitAnswers(r.questions, answers)
	if err != nil {
		s.mu.Unlock()
		return proto.QuestionResult{}, err
	}
	sub.appr.takeLocked(r.req.RequestID)
	text := proto.AnswerText(r.questions, got)
	sub.appr.answered[r.req.RequestID] = "answered: " + text
	r.answers = got
	a.updatedAt = time.Now()
	s.mu.Unlock()

	sub.appr.stdin.Write(transcript.ClaudeAnswer(r.req, got))
	sub.tr.add(transcript.Entry{Kind: transcript.KindApprovalAnswer, Tool: r.req.Tool, ID: r.req.RequestID,
		Text: "answered: " + text})
	s.journal.Write(journal.Event{Event: "question_answered", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
		RequestID: r.req.RequestID, Tool: r.req.Tool, Answers: got})
	s.mu.Lock()
	if at := a.needsYou; at != nil && at.Reason == proto.ReasonQuestion && len(sub.appr.pending) == 0 {
		a.needsYou = nil
	}
	s.mu.Unlock()
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true, Output: true})
	return proto.QuestionResult{AgentID: a.id, RequestID: r.req.RequestID, Answers: got}, nil
}

// findQuestionLocked finds the pending question request rid of a ("" =
// the oldest), with the errors of Answer. Call with s.mu held.
func (s *Supervisor) findQuestionLocked(a *agent, rid string) (*submission, *approvalRequest, error) {
	if sub := a.running; sub != nil && sub.appr != nil {
		for _, r := range sub.appr.pending {
			if r.questions != nil && (rid == "" || r.req.RequestID == rid) {
				return sub, r, nil
			}
			if r.questions == nil && r.req.RequestID == rid {
				return nil, nil, proto.ErrBadAnswer("request " + rid + " of agent " + a.id + " asks approval of " + r.req.Tool + ", not a question: answer it with approve or deny")
			}
		}
	}
	if rid == "" {
		return nil, nil, proto.ErrNoPendingQuestion(a.id)
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

// fitAnswers matches answers to the questions qs and returns them as
// claude takes them: question text to the labels or other text, joined
// with ", ".
func fitAnswers(qs []proto.Question, answers map[string][]string) (map[string]string, error) {
	got := map[string]string{}
	for key, vals := range answers {
		i := questionIndex(qs, strings.TrimSpace(key))
		if i < 0 {
			return nil, proto.ErrBadAnswer(fmt.Sprintf("no question %q: name one of %s", key, questionNames(qs)))
		}
		q := qs[i]
		var clean []string
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				clean = append(clean, v)
			}
		}
		switch {
		case len(clean) == 0:
			return nil, proto.ErrBadAnswer(fmt.Sprintf("empty answer to %q: give an option label or other text", q.Question))
		case len(clean) > 1 && !q.MultiSelect:
			return nil, proto.ErrBadAnswer(fmt.Sprintf("%d answers to %q, which takes one", len(clean), q.Question))
		}
		if _, dup := got[q.Question]; dup {
			return nil, proto.ErrBadAnswer(fmt.Sprintf("%q answered twice", q.Question))
		}
		got[q.Question] = strings.Join(clean, ", ")
	}
	for _, q := range qs {
		if _, ok := got[q.Question]; !ok {
			return nil, proto.ErrBadAnswer(fmt.Sprintf("%q is not answered: answer every question of the request", q.Question))
		}
	}
	return got, nil
}

// questionIndex is the index of the question named key in qs (its text,
// else its header, case-insensitive; "" names the only question), or -1.
func questionIndex(qs []proto.Question, key string) int {
	if key == "" {
		if len(qs) == 1 {
			return 0
		}
		return -1
	}
	for i, q := range qs {
		if q.Question == key {
			return i
		}
	}
	for i, q := range qs {
		if strings.EqualFold(q.Question, key) || q.Header != "" && strings.EqualFold(q.Header, key) {
			return i
		}
	}
	return -1
}

func questionNames(qs []proto.Question) string {
	names := make([]string, len(qs))
	for i, q := range qs {
		names[i] = fmt.Sprintf("%q", q.Question)
	}
	return strings.Join(names, ", ")
}
