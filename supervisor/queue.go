package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/mailbox"
	"github.com/subdash/subdash/supervisor/proto"
)

// Queueing (SPEC §11): the messages held or queued for an agent's next
// submission are items of its mailbox (internal/mailbox), which this
// host guards with s.mu; each item's message is kept in a file of the run
// before the item is journaled.

// Queue keeps message to start as agent id's next submission as soon as
// its running submission ends by itself, completed or errored (SPEC §11):
// the agent first takes that final status (a wait in flight returns it),
// then the next submission starts at once with every message held for it,
// in order. An agent that runs nothing gets the message at once, as Send
// does; one whose submission ended after the check that it ran, whatever
// the timing, has its next submission start with the message then (the
// result has its submission_id), or at the concurrency limit as soon as a
// slot frees (pending_start). Several messages may be queued; CancelQueue
// cancels the last.
// Interrupt keeps them (they wait for the next submission), close drops
// them and says so.
//
// Errors: those of Send (empty or too long message, unknown agent, closed
// agent, the concurrency limit when it starts at once); "agent <id> is
// being stopped; send the message once it has stopped"; a message file
// that cannot be written.
func (s *Supervisor) Queue(ctx context.Context, id, message string) (proto.SendResult, error) {
	m, err := NewMessage(message)
	if err != nil {
		return proto.SendResult{}, err
	}
	return s.QueueMessage(ctx, id, m)
}

// QueueMessage is Queue with a Message (NewMessage, ReadMessage), which it
// takes: on an error, or when the queued message is dropped or cancelled,
// the message is discarded.
func (s *Supervisor) QueueMessage(ctx context.Context, id string, m *Message) (proto.SendResult, error) {
	res, err := s.queueMessage(ctx, id, m)
	if err != nil {
		m.Discard()
	}
	return res, err
}

func (s *Supervisor) queueMessage(ctx context.Context, id string, m *Message) (proto.SendResult, error) {
	c := proto.CallerOf(ctx)
	for {
		s.mu.Lock()
		a, err := s.resolveLocked(c, id)
		if err == nil {
			err = s.checkQueueLocked(a)
		}
		if err != nil {
			s.mu.Unlock()
			return proto.SendResult{}, err
		}
		if a.running == nil && !a.replacing {
			s.mu.Unlock()
			res, err := s.sendMessage(ctx, a.id, m, false)
			if proto.CodeOf(err) == proto.CodeBusy {
				continue // it started running meanwhile: queue after all
			}
			return res, err
		}
		from := s.pathOfLocked(c)
		s.mu.Unlock()
		return s.putMessage(a, m, true, from)
	}
}

// put is putMessage without its result.
func (s *Supervisor) put(a *agent, m *Message, queued bool, from string) error {
	_, err := s.putMessage(a, m, queued, from)
	return err
}

// putMessage puts message m from the agent at path from ("" for a person
// or program) into agent a's mailbox, queued or held: it is kept in a
// file of the run first (SPEC §10: a later host restores it), then the
// item is journaled and the agent's summary published. A queued message
// that finds a running nothing, whatever the caller saw before, starts
// a's next submission at once (startQueuedLocked). The result says what
// became of it: held (Queued, with a's status: running when the end of
// its submission takes it, else waiting for a slot, its summary's
// pending_start), or the submission it started. Errors: the file cannot
// be written; the agent was closed or forgotten meanwhile (the message is
// not kept then).
func (s *Supervisor) putMessage(a *agent, m *Message, queued bool, from string) (proto.SendResult, error) {
	item := &mailbox.Item{Seq: s.mailboxSeq.Add(1), Queued: queued, From: from, At: time.Now(), Head: m.head, Size: m.size}
	item.File = mailbox.File(filepath.Join(s.runDir, a.id), item.Seq)
	if err := m.keep(item.File); err != nil {
		return proto.SendResult{}, errKeepMessage(item.File, err)
	}
	s.mu.Lock()
	for queued && a.ending && a.running == nil && !a.replacing {
		// The end of its submission is being journaled, and that end
		// found no queued message: what starts next is decided once it
		// is written, so that the journal keeps the order of the two.
		done := a.subs[len(a.subs)-1].done
		s.mu.Unlock()
		<-done
		s.mu.Lock()
	}
	if _, ok := s.agents[a.id]; !ok || a.status == proto.StatusClosed {
		s.mu.Unlock()
		item.Discard()
		if !ok {
			return proto.SendResult{}, proto.ErrNotFound(a.id)
		}
		return proto.SendResult{}, proto.ErrClosed(a.id)
	}
	a.mailbox.Put(item)
	a.updatedAt = item.At
	var next *submission
	var nextErr error
	if queued {
		next, nextErr = s.startQueuedLocked(a)
	}
	res := proto.SendResult{AgentID: a.id, Status: a.status, Queued: true}
	s.mu.Unlock()
	s.journal.Write(mailbox.Owner{AgentID: a.id}.Put(item))
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	if nextErr != nil {
		s.mailboxKept(a, nextErr)
	}
	if next == nil {
		return res, nil
	}
	s.journalSent(a, next, "a queued message that came as the previous submission ended")
	res = proto.SendResult{AgentID: a.id, Status: proto.StatusRunning, SubmissionID: next.id}
	if err := s.launch(a, next); err != nil {
		res.Status = proto.StatusErrored // a start failure ends it as errored, as for send
	}
	return res, nil
}

// startQueuedLocked starts agent a's next submission with its mailbox
// when a queued message is in it and a runs nothing: the message came
// after the end of a's submission looked at the mailbox. That end
// decides under s.mu, as this does, so exactly one of the two starts the
// submission (SPEC §11). At the concurrency limit a waits for a slot
// instead (pending_init, startPending); while the host ends the message
// stays for the next host, as at the end of a submission. It returns the
// submission for the caller to launch, nil when none started; an error
// says why none could (the budget, a joined message over the limit), the
// messages staying held. Call with s.mu held, a's end journaled (not
// a.ending).
func (s *Supervisor) startQueuedLocked(a *agent) (*submission, error) {
	switch {
	case a.running != nil || a.replacing || a.status == proto.StatusClosed || s.shutdown || !a.mailbox.HasQueued():
		return nil, nil
	case s.runningCount() >= s.cfg.MaxAgents:
		a.pending = true // the next end of any submission starts it (startPending)
		return nil, nil
	}
	return s.newSubmissionLocked(a, nil)
}

// mailboxKept journals and says on the screen that agent a's queued
// messages could not start its next submission, and why; they stay held.
func (s *Supervisor) mailboxKept(a *agent, err error) {
	s.journal.Write(mailbox.Owner{AgentID: a.id}.Kept(err))
	s.warn(fmt.Sprintf("agent %s: the queued messages were not started: %v", a.id, err))
}

func (s *Supervisor) checkQueueLocked(a *agent) error {
	switch {
	case s.shutdown:
		return proto.ErrShutdown()
	case a.status == proto.StatusClosed:
		return proto.ErrClosed(a.id)
	case a.running != nil && a.running.reason != "":
		return &proto.Error{Code: proto.CodeBusy, Message: fmt.Sprintf("agent %s is being stopped; send the message once it has stopped", a.id)}
	}
	return s.checkBudgetLocked(a) // a queued or steered message would spend more
}

// CancelQueue drops the last message held for agent id (SPEC §11: `u`,
// `ctl cancel-queue`); the result has DroppedQueued set. Errors: "agent
// not found: <id>"; "agent <id> has no queued message".
func (s *Supervisor) CancelQueue(ctx context.Context, id string) (proto.StatusResult, error) {
	s.mu.Lock()
	a, err := s.resolveLocked(proto.CallerOf(ctx), id)
	if err != nil {
		s.mu.Unlock()
		return proto.StatusResult{}, err
	}
	item := a.mailbox.CancelLast()
	if item == nil {
		s.mu.Unlock()
		return proto.StatusResult{}, proto.ErrNoQueue(a.id)
	}
	a.pending = a.pending && a.mailbox.HasQueued() // nothing left to wait for a slot
	a.updatedAt = time.Now()
	res := proto.StatusResult{AgentID: a.id, Status: a.status, DroppedQueued: true}
	s.mu.Unlock()
	item.Discard()
	s.journal.Write(mailbox.Owner{AgentID: a.id}.Removed([]uint64{item.Seq}, "cancelled"))
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	return res, nil
}

// dropMailboxLocked empties agent a's mailbox (close, SPEC §11), so that
// it no longer waits for a slot either, and returns the items' numbers
// and whether any was a message. Call with s.mu held; the caller journals
// the numbers (journalDropped) after unlocking.
func dropMailboxLocked(a *agent) (seqs []uint64, messages bool) {
	a.pending = false // nothing left to wait for a slot
	return a.mailbox.Drop()
}

// takeMailboxLocked empties agent a's mailbox into the parts of its next
// submission's message, own last (nil for none), and returns the message
// and the items' numbers. Errors: the joined message is too long (the
// mailbox is left as it was). Call with s.mu held.
func takeMailboxLocked(a *agent, own *Message) (*Message, []uint64, error) {
	items := a.mailbox.Items()
	if len(items) == 0 {
		return own, nil, nil
	}
	parts := make([]*Message, 0, len(items)+1)
	seqs := make([]uint64, 0, len(items))
	for _, it := range items {
		parts = append(parts, messageOf(it))
		seqs = append(seqs, it.Seq)
	}
	if own != nil {
		parts = append(parts, own)
	}
	m, err := joinMessages(parts)
	if err != nil {
		return nil, nil, err
	}
	a.mailbox.Clear()
	return m, seqs, nil
}

// messageOf is the message of mailbox item it: read from its file when a
// submission takes it, or its text in memory.
func messageOf(it *mailbox.Item) *Message {
	if it.File == "" {
		return &Message{text: it.Text, head: it.Head, size: it.Size}
	}
	return &Message{path: it.File, head: it.Head, size: it.Size}
}

// journalDropped records that op dropped the items seqs of agent id's
// mailbox.
func (s *Supervisor) journalDropped(id, op string, seqs []uint64) {
	if len(seqs) > 0 {
		s.journal.Write(mailbox.Owner{AgentID: id}.Removed(seqs, op+" dropped the queued messages"))
	}
}

// rootDir is the folder of the message files of session's root mailbox
// in the run.
func (s *Supervisor) rootDir(session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(s.runDir, "sessions", hex.EncodeToString(sum[:6]))
}

// putRoot puts message m from caller c into the root mailbox of c's tree
// (SPEC §14: a child's send_message to /root lands in its session's
// mailbox). Errors: the tree has no multi-agent session; the message file
// cannot be written.
func (s *Supervisor) putRoot(c proto.Caller, m *Message) error {
	s.mu.Lock()
	session, from := c.Session, proto.RootPath
	if a := s.agents[c.AgentID]; a != nil {
		session, from = s.rootSessionLocked(a), a.path
	}
	s.mu.Unlock()
	if session == "" {
		return &proto.Error{Code: proto.CodeInvalid, Message: "/root has no mailbox here: the root of this tree is not a `subdash mcp --tools multi-agent` session"}
	}
	item := &mailbox.Item{Seq: s.mailboxSeq.Add(1), From: from, At: time.Now(), Head: m.head, Size: m.size}
	item.File = mailbox.File(s.rootDir(session), item.Seq)
	if err := m.keep(item.File); err != nil {
		return errKeepMessage(item.File, err)
	}
	s.mu.Lock()
	s.rootLocked(session).Put(item)
	s.wakeLocked()
	s.mu.Unlock()
	s.journal.Write(mailbox.Owner{Session: session}.Put(item))
	return nil
}

// rootRecordsLocked returns the root mailboxes that hold items, as the
// journal's checkpoint keeps them. Call with s.mu held.
func (s *Supervisor) rootRecordsLocked() []*journal.MailboxRecord {
	var out []*journal.MailboxRecord
	for id, b := range s.roots {
		if b.Empty() {
			continue
		}
		out = append(out, &journal.MailboxRecord{Session: id, Dir: s.cfg.Dir, Items: b.Records()})
	}
	slices.SortFunc(out, func(x, y *journal.MailboxRecord) int { return strings.Compare(x.Session, y.Session) })
	return out
}
