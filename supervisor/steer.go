package supervisor

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/output"
	"github.com/subdash/subdash/supervisor/internal/steer"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
)

// steering is what a submission of an agent that takes messages while it
// runs holds (SPEC §11 steer): the book of the messages steered into it,
// its open stream-json stdin, and the messages not taken yet (a message
// not delivered is queued from here). Guarded by Supervisor.mu.
type steering struct {
	book  *steer.Book
	stdin *steer.Stdin
	msgs  map[string]*Message
}

// Steering (SPEC §11 steer): the submissions of an agent that takes
// messages while it runs keep stdin open, carrying stream-json, and a
// book of the messages steered into them (sub.steer); the agent's own
// output gives each its receipt.

// steerable reports whether agent a takes messages while it runs: the
// built-in agent (the default agent or --preset builtin), the claude and
// codex presets.
func steerable(a *agent) bool {
	return a.builtin || a.preset != nil && (a.preset.Name == "builtin" || a.preset.Name == "claude" || a.preset.isCodexApp())
}

// steerSetupLocked readies sub of a steerable agent: a book, an open
// stream-json stdin, and the hook that reads the receipts from its stdout
// lines. Call with s.mu held, before sub.out is made from opt.
func (s *Supervisor) steerSetupLocked(a *agent, sub *submission, opt *output.Options) {
	if !steerable(a) {
		return
	}
	if a.preset.isCodexApp() { // the app-server's driver gives the receipts
		s.codexSetupLocked(a, sub, opt)
		return
	}
	sub.steer = &steering{book: &steer.Book{}, stdin: steer.NewStdin(), msgs: map[string]*Message{}}
	if sub.tr != nil { // claude: its echo is the receipt, each result a turn's end
		sub.tr.onEcho = func(id string) { s.steerTaken(a, sub, id, "", true) }
		sub.tr.onResult = func() { s.steerResult(a, sub) }
		return
	}
	opt.RawLine = func(st runner.Stream, line []byte) {
		if st != runner.Stdout {
			return
		}
		if id, r, ok := transcript.ParseBuiltinTaken(line); ok {
			s.steerTaken(a, sub, id, r, false)
		} else if transcript.IsBuiltinEnd(line) {
			s.steerResult(a, sub)
		}
	}
}

// steerVars are the variables of sub a steered built-in agent gets: its
// stdin is stream-json (SPEC §2); none for any other submission.
func steerVars(a *agent, sub *submission) []string {
	if sub.steer == nil || a.preset.Structured() {
		return nil
	}
	return []string{"SUBDASH_AGENT_INPUT=" + transcript.BuiltinInputStreamJSON}
}

// steerSessionLocked is the session id a steered line names.
func (s *Supervisor) steerSessionLocked(a *agent) string {
	if a.preset == nil || a.preset.Name != "claude" {
		return ""
	}
	_, session := a.preset.CommandFor(a.id, a.sessionID)
	return session
}

// steerTaken records the receipt of message id of sub: r as the agent
// said it, or, with echo, as claude's echo places it (steer.Book.Echo).
func (s *Supervisor) steerTaken(a *agent, sub *submission, id, r string, echo bool) {
	now := time.Now()
	s.mu.Lock()
	var sm proto.SteeredMessage
	var ok bool
	if echo {
		sm, ok = sub.steer.book.Echo(id, now)
	} else {
		sm, ok = sub.steer.book.Take(id, r, now)
	}
	s.mu.Unlock()
	if ok {
		s.steerReceipt(a, sub, sm)
	}
}

// steerReceipt journals and shows the receipt sm that the book of sub
// just recorded, and lets go of the message it no longer needs.
func (s *Supervisor) steerReceipt(a *agent, sub *submission, sm proto.SteeredMessage) {
	s.mu.Lock()
	m := sub.steer.msgs[sm.ID]
	delete(sub.steer.msgs, sm.ID)
	s.mu.Unlock()
	m.Discard()
	s.journal.Write(journal.Event{Event: "steer_receipt", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Steered: &sm})
	if sub.tr != nil {
		sub.tr.add(transcript.Entry{Kind: transcript.KindInit, ID: sm.ID, Text: receiptText(sm)})
	}
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true, Output: true})
}

// receiptText says a receipt in words, for the transcript.
func receiptText(sm proto.SteeredMessage) string {
	what := "steered message " + termtext.ShortID(sm.ID)
	switch sm.Receipt {
	case proto.ReceiptFolded:
		return what + " folded into the running turn"
	case proto.ReceiptNextTurn:
		return what + " taken as a turn of its own (next_turn)"
	}
	return what + " not delivered: " + sm.Note
}

// steerResult records that a turn of sub ended and closes its stdin when
// no steered message waits for its receipt: the agent then ends (SPEC §8).
func (s *Supervisor) steerResult(a *agent, sub *submission) {
	now := time.Now()
	s.mu.Lock()
	closeNow, taken := sub.steer.book.Result(now)
	if closeNow {
		sub.steer.book.Close()
		sub.steer.stdin.Close()
	}
	s.mu.Unlock()
	for _, sm := range taken {
		s.steerReceipt(a, sub, sm)
	}
}

// endSteer, as sub ends, makes every steered message still pending
// not_delivered and puts it in the agent's mailbox as a queued message
// (SPEC §11): the next submission takes it, unless the agent was closed,
// which drops it, or interrupted, which keeps it for the next one.
func (s *Supervisor) endSteer(a *agent, sub *submission) {
	if sub.steer == nil {
		return
	}
	now := time.Now()
	s.mu.Lock()
	missed := sub.steer.book.End("the submission ended before the agent took it", now)
	msgs := make([]*Message, len(missed))
	for i, sm := range missed {
		msgs[i] = sub.steer.msgs[sm.ID]
		delete(sub.steer.msgs, sm.ID)
	}
	s.mu.Unlock()
	sub.steer.stdin.Close()
	for i, sm := range missed {
		note := "the submission ended before the agent took it: queued for the next submission"
		if err := s.put(a, msgs[i], true, ""); err != nil {
			note = "the submission ended before the agent took it, and it was dropped: " + err.Error()
		}
		s.mu.Lock()
		sub.steer.book.SetNote(sm.ID, note)
		s.mu.Unlock()
		sm.Note = note
		s.journal.Write(journal.Event{Event: "steer_receipt", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Steered: &sm})
		sub.note(receiptText(sm), transcript.KindError)
	}
}

// steeredLocked returns the steered messages of a's latest submission and
// those of the one before that were not delivered (Summary's
// steered_messages), oldest first; nil when none. Call with s.mu held.
func steeredLocked(a *agent) []proto.SteeredMessage {
	n := len(a.subs)
	var out []proto.SteeredMessage
	if n >= 2 && a.subs[n-2].steer != nil {
		for _, sm := range a.subs[n-2].steer.book.Messages() {
			if sm.Receipt == proto.ReceiptNotDelivered {
				out = append(out, sm)
			}
		}
	}
	if n >= 1 && a.subs[n-1].steer != nil {
		out = append(out, a.subs[n-1].steer.book.Messages()...)
	}
	return out
}

// Steer writes message into the running submission of agent id, for an
// agent that takes messages while it runs (SPEC §11 steer: the claude
// and codex presets, the built-in agent), and answers at once with the message's id
// and receipt pending; the receipt follows in the agent's summary
// (steered_messages) when the agent takes it: folded into the running
// turn, or next_turn. A submission whose stdin closed already (its last
// turn ended) cannot take it: the message is queued as the next
// submission's, and the result says not_delivered. An agent that runs
// nothing gets the message as Send gives it. Errors: those of Queue;
// ErrCannotSteer for an agent that reads its message once.
func (s *Supervisor) Steer(ctx context.Context, id, message string) (proto.SendResult, error) {
	m, err := NewMessage(message)
	if err != nil {
		return proto.SendResult{}, err
	}
	return s.SteerMessage(ctx, id, m)
}

// SteerMessage is Steer with a Message (NewMessage, ReadMessage), which it
// takes: on an error, or once the agent took it, the message is discarded.
func (s *Supervisor) SteerMessage(ctx context.Context, id string, m *Message) (proto.SendResult, error) {
	res, err := s.steerMessage(ctx, id, m)
	if err != nil {
		m.Discard()
	}
	return res, err
}

func (s *Supervisor) steerMessage(ctx context.Context, id string, m *Message) (proto.SendResult, error) {
	c := proto.CallerOf(ctx)
	text, err := m.read()
	if err != nil {
		return proto.SendResult{}, errKeepMessage(m.path, err)
	}
	for {
		s.mu.Lock()
		a, err := s.resolveLocked(c, id)
		if err == nil {
			err = s.checkQueueLocked(a)
		}
		if err == nil && a.running != nil && a.running.steer == nil {
			err = proto.ErrCannotSteer(a.id)
		}
		if err != nil {
			s.mu.Unlock()
			return proto.SendResult{}, err
		}
		if a.running == nil {
			replacing := a.replacing
			s.mu.Unlock()
			if replacing {
				return s.queueMessage(ctx, a.id, m)
			}
			res, err := s.sendMessage(ctx, a.id, m, false)
			if proto.CodeOf(err) == proto.CodeBusy {
				continue // it started running meanwhile: steer after all
			}
			return res, err
		}
		sub := a.running
		mid := uuid.NewString()
		now := time.Now()
		written := sub.steer.book.Add(mid, sub.seq, m.head, now)
		if written && sub.codex != nil {
			written = sub.codex.Steer(mid, string(text))
		} else if written {
			written = sub.steer.stdin.Write(steer.UserLine(string(text), s.steerSessionLocked(a), mid))
		}
		if !written {
			s.mu.Unlock()
			return s.steerMissed(ctx, a, sub, mid, m, now)
		}
		sub.steer.msgs[mid] = m
		a.updatedAt = now
		sm := sub.steer.book.Messages()
		s.mu.Unlock()
		s.journal.Write(journal.Event{Event: "steered", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Steered: &sm[len(sm)-1]})
		sub.note("steered message "+termtext.ShortID(mid)+" written while the agent runs: "+termtext.OneLine(m.head, 200), transcript.KindInit)
		s.hub.Publish(proto.Change{AgentID: a.id, Agent: true, Output: true})
		return proto.SendResult{AgentID: a.id, Status: proto.StatusRunning, SubmissionID: sub.id,
			MessageID: mid, Receipt: proto.ReceiptPending}, nil
	}
}

// steerMissed handles a steer that reached sub after its stdin closed:
// the message is queued for the next submission (SPEC §11) and the result
// says not_delivered.
func (s *Supervisor) steerMissed(ctx context.Context, a *agent, sub *submission, mid string, m *Message, now time.Time) (proto.SendResult, error) {
	const note = "the running submission's stdin had closed (its last turn ended): queued for the next submission"
	res, err := s.queueMessage(ctx, a.id, m)
	if err != nil {
		return res, err
	}
	sm := proto.SteeredMessage{ID: mid, SubmissionSeq: sub.seq, Message: m.head, Receipt: proto.ReceiptNotDelivered,
		SentAt: proto.Time{Time: now}, TakenAt: proto.Time{Time: now}, Note: note}
	s.mu.Lock()
	sub.steer.book.Missed(sm)
	s.mu.Unlock()
	s.journal.Write(journal.Event{Event: "steered", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Steered: &sm})
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	res.MessageID, res.Receipt, res.Note = mid, proto.ReceiptNotDelivered, note
	return res, nil
}
