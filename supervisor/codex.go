package supervisor

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/subdash/subdash/supervisor/appserver"
	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/output"
	"github.com/subdash/subdash/supervisor/internal/steer"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/transcript"
)

// The codex preset on `codex app-server` (SPEC §8): each submission is one
// app-server process that a driver (package appserver) speaks to over its
// stdin and stdout. It takes messages while it runs (SPEC §11 steer: the
// driver gives each its receipt), relays approval requests with
// --approvals (SPEC §12) and stops its turn with turn/interrupt (SPEC §4).
// What is here wires the driver's events into the engine's steering,
// approvals and notes.

// isCodexApp reports whether p runs codex on its app-server.
func (p *Preset) isCodexApp() bool { return p != nil && p.Name == "codex" }

// codexSetupLocked readies sub of a codex agent: a steering book, the
// app-server's stdin, the driver reading its stdout after the transcript,
// and, with --approvals, the relay of its approval requests. Call with
// s.mu held, before sub.out is made from opt.
func (s *Supervisor) codexSetupLocked(a *agent, sub *submission, opt *output.Options) {
	q := steer.NewStdin()
	sub.steer = &steering{book: &steer.Book{}, stdin: q, msgs: map[string]*Message{}}
	sub.codex = appserver.New(appserver.Config{MessageID: sub.id, ThreadID: a.sessionID,
		Approvals: a.preset.Approvals, Version: buildVersion()}, q)
	sub.tr.onResult = func() { s.codexTurnEnded(sub) }
	parse := opt.RawLine
	opt.RawLine = func(st runner.Stream, line []byte) {
		parse(st, line)
		if st == runner.Stdout {
			s.codexEvents(a, sub, sub.codex.Line(line))
		}
	}
	if a.preset.Approvals {
		sub.appr = &approvals{stdin: q, answered: map[string]string{},
			reply: func(c transcript.ControlRequest, decision, _ string) {
				sub.codex.Answer(c.RequestID, codexDecision(decision))
			}}
	}
}

// codexTurnEnded closes the app-server's stdin at a turn's end when no
// steered message waits for its receipt: the submission then ends (SPEC
// §8). The driver gives every message its receipt, so no count of turns
// stands in for one (steer.Book.Result's rule for claude).
func (s *Supervisor) codexTurnEnded(sub *submission) {
	s.mu.Lock()
	closeNow := !sub.steer.book.Pending()
	if closeNow {
		sub.steer.book.Close()
	}
	s.mu.Unlock()
	if closeNow {
		sub.steer.stdin.Close()
	}
}

// codexFeed is the stdin of a codex submission: the driver's requests,
// initialize first, the message going with the turn/start of its first
// turn. Errors: the message file cannot be read.
func (s *Supervisor) codexFeed(sub *submission) (func(io.WriteCloser), error) {
	b, err := os.ReadFile(sub.msgPath())
	if err != nil {
		return nil, fmt.Errorf("cannot read the message from %s: %v; check --state-dir", sub.msgPath(), err)
	}
	sub.codex.Start(string(b))
	return sub.steer.stdin.Run, nil
}

// codexEvents applies what the driver read in a line of the app-server.
func (s *Supervisor) codexEvents(a *agent, sub *submission, evs []appserver.Event) {
	for _, ev := range evs {
		switch ev.Kind {
		case appserver.EventTaken:
			r := proto.ReceiptNextTurn
			if ev.Folded {
				r = proto.ReceiptFolded
			}
			s.steerTaken(a, sub, ev.MessageID, r, false)
		case appserver.EventUndelivered:
			s.codexUndelivered(a, sub, ev.MessageID, ev.Text)
		case appserver.EventApproval:
			if c, ok := transcript.ParseCodexApproval(ev.Line, ev.Files); ok {
				s.approvalRequested(a, sub, c)
			}
		case appserver.EventWithdrawn:
			s.approvalWithdrawn(a, sub, ev.RequestID)
		case appserver.EventDeclined:
			tool := ev.Method
			if c, ok := transcript.ParseCodexApproval(ev.Line, ""); ok {
				tool = c.Tool
			}
			sub.tr.add(transcript.Entry{Kind: transcript.KindApprovalAnswer, Tool: tool, ID: ev.RequestID, Text: ev.Text, IsError: true})
			s.journal.Write(journal.Event{Event: "approval_answered", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
				RequestID: ev.RequestID, Tool: tool, Decision: proto.DecisionDeny, Note: ev.Text})
			s.hub.Publish(proto.Change{AgentID: a.id, Agent: true, Output: true})
		}
	}
}

// codexUndelivered records that steered message id of sub cannot reach
// the agent (why): not_delivered, and queued for the next submission as
// one still pending at the end is (SPEC §11). When nothing else is left
// for the app-server, its stdin closes, so the submission ends.
func (s *Supervisor) codexUndelivered(a *agent, sub *submission, id, why string) {
	now := time.Now()
	s.mu.Lock()
	sm, ok := sub.steer.book.Take(id, proto.ReceiptNotDelivered, now)
	m := sub.steer.msgs[id]
	delete(sub.steer.msgs, id)
	s.mu.Unlock()
	if !ok {
		return
	}
	note := why + ": queued for the next submission"
	if err := s.put(a, m, true, ""); err != nil {
		note = why + ", and it was dropped: " + err.Error()
	}
	s.mu.Lock()
	sub.steer.book.SetNote(id, note)
	idle := !sub.steer.book.Pending() && sub.codex.Idle()
	if idle {
		sub.steer.book.Close()
	}
	s.mu.Unlock()
	sm.Note = note
	s.journal.Write(journal.Event{Event: "steer_receipt", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Steered: &sm})
	sub.note(receiptText(sm), transcript.KindError)
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true, Output: true})
	if idle {
		sub.steer.stdin.Close()
	}
}

// codexDecision is the driver's form of a decision of SPEC §12.
func codexDecision(decision string) appserver.Decision {
	switch decision {
	case proto.DecisionAllow:
		return appserver.Allow
	case proto.DecisionAllowAlways:
		return appserver.AllowAlways
	}
	return appserver.Deny
}

// buildVersion is this binary's module version, for the app-server's
// clientInfo.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return ""
}
