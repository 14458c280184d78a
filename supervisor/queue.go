package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// An agent's mailbox (SPEC §11, §14): the messages held for its next
// submission, in the order they came, and the ends of its children that
// it has not taken yet. A queued message (Queue, followup_task of a
// running agent) starts that next submission as soon as the running one
// ends by itself; a held one (send_message) waits for it. The next
// submission takes the whole mailbox, each item's text a part of its
// message before its own (joinMessages). Interrupt keeps the mailbox, as
// Memo keeps its own; close drops it and says so. Each item is journaled
// with its whole text in a file of the run, so a later host restores it.

// mailItem is one item of a mailbox.
type mailItem struct {
	seq uint64   // numbers the items of every mailbox of the host, in order
	msg *Message // what the next submission takes: kept in file once queued
	// trigger: a queued message, which starts the next submission when
	// the running one ends by itself; false: held until then.
	trigger bool
	from    string    // the sender's path, "" for a person or program
	at      time.Time // when it came
	// end is set for the end of a child (SPEC §14), whose text msg holds
	// as Memo hands it to its model; nil for a message.
	end *childEnd
}

// childEnd is what a mailbox item says of a child that ended, or that a
// person interrupted or closed.
type childEnd struct {
	agentID, path string
	status        string // the multi-agent family's word (proto.TreeStatus)
	detail        string // its last answer or error
}

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
		return s.postItem(a, &mailItem{msg: m, trigger: true, from: from})
	}
}

// post is postItem without its result.
func (s *Supervisor) post(a *agent, item *mailItem) error {
	_, err := s.postItem(a, item)
	return err
}

// postItem puts item into agent a's mailbox: its message is kept in a
// file of the run first (SPEC §10: a later host restores it), then the
// item is journaled and the agent's summary published. A queued item
// (trigger) that finds a running nothing, whatever the caller saw before,
// starts a's next submission at once (startQueuedLocked). The result says
// what became of the item: held (Queued, with a's status: running when
// the end of its submission takes it, else waiting for a slot, its
// summary's pending_start), or the submission it started. Errors: the
// file cannot be written; the agent was closed or forgotten meanwhile
// (the message is not kept then).
func (s *Supervisor) postItem(a *agent, item *mailItem) (proto.SendResult, error) {
	item.seq = s.mailSeq.Add(1)
	item.at = time.Now()
	file := filepath.Join(s.runDir, a.id, "mail-"+strconv.FormatUint(item.seq, 10)+".msg")
	if err := item.msg.keep(file); err != nil {
		return proto.SendResult{}, errKeepMessage(file, err)
	}
	item.msg = &Message{path: file, head: item.msg.head, size: item.msg.size}
	s.mu.Lock()
	for item.trigger && a.ending && a.running == nil && !a.replacing {
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
		item.msg.Discard()
		if !ok {
			return proto.SendResult{}, proto.ErrNotFound(a.id)
		}
		return proto.SendResult{}, proto.ErrClosed(a.id)
	}
	a.inbox = append(a.inbox, item)
	a.updatedAt = item.at
	var next *submission
	var nextErr error
	if item.trigger {
		next, nextErr = s.startQueuedLocked(a)
	}
	res := proto.SendResult{AgentID: a.id, Status: a.status, Queued: true}
	s.mu.Unlock()
	s.journal.Write(journal.Event{Event: "mail", AgentID: a.id, Mail: mailRecord(item)})
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	if nextErr != nil {
		s.mailKept(a, nextErr)
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
	case a.running != nil || a.replacing || a.status == proto.StatusClosed || s.shutdown || !hasTriggerLocked(a):
		return nil, nil
	case s.runningCount() >= s.cfg.MaxAgents:
		a.pending = true // the next end of any submission starts it (startPending)
		return nil, nil
	}
	return s.newSubmissionLocked(a, nil)
}

// mailKept journals and says on the screen that agent a's queued messages
// could not start its next submission, and why; they stay held.
func (s *Supervisor) mailKept(a *agent, err error) {
	s.journal.Write(journal.Event{Event: "mail_kept", AgentID: a.id, Note: "the queued messages were not started: " + err.Error()})
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
	last := -1
	for i, it := range a.inbox {
		if it.end == nil {
			last = i
		}
	}
	if last < 0 {
		s.mu.Unlock()
		return proto.StatusResult{}, proto.ErrNoQueue(a.id)
	}
	item := a.inbox[last]
	a.inbox = append(a.inbox[:last:last], a.inbox[last+1:]...)
	a.pending = a.pending && hasTriggerLocked(a) // nothing left to wait for a slot
	a.updatedAt = time.Now()
	res := proto.StatusResult{AgentID: a.id, Status: a.status, DroppedQueued: true}
	s.mu.Unlock()
	item.msg.Discard()
	s.journal.Write(journal.Event{Event: "mail_removed", AgentID: a.id, Seqs: []uint64{item.seq}, Note: "cancelled"})
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	return res, nil
}

// dropInboxLocked empties agent a's mailbox (close, SPEC §11), so that it
// no longer waits for a slot either, and returns the items' numbers and
// whether any was a message. Call with s.mu held; the caller journals the
// numbers (journalDropped) after unlocking.
func dropInboxLocked(a *agent) (seqs []uint64, messages bool) {
	for _, it := range a.inbox {
		seqs = append(seqs, it.seq)
		messages = messages || it.end == nil
		it.msg.Discard()
	}
	a.inbox = nil
	a.pending = false // nothing left to wait for a slot
	return seqs, messages
}

// takeInboxLocked empties agent a's mailbox into the parts of its next
// submission's message, own last (nil for none), and returns the message
// and the items' numbers. Errors: the joined message is too long (the
// mailbox is left as it was). Call with s.mu held.
func takeInboxLocked(a *agent, own *Message) (*Message, []uint64, error) {
	if len(a.inbox) == 0 {
		return own, nil, nil
	}
	parts := make([]*Message, 0, len(a.inbox)+1)
	seqs := make([]uint64, 0, len(a.inbox))
	for _, it := range a.inbox {
		parts = append(parts, it.msg)
		seqs = append(seqs, it.seq)
	}
	if own != nil {
		parts = append(parts, own)
	}
	m, err := joinMessages(parts)
	if err != nil {
		return nil, nil, err
	}
	a.inbox = nil
	return m, seqs, nil
}

// hasTriggerLocked reports whether a's mailbox holds a queued message.
func hasTriggerLocked(a *agent) bool {
	for _, it := range a.inbox {
		if it.trigger {
			return true
		}
	}
	return false
}

// queuedLocked returns the heads of the messages in a's mailbox, oldest
// first (Summary.QueuedMessages); nil when none.
func queuedLocked(a *agent) []string {
	var out []string
	for _, it := range a.inbox {
		if it.end == nil {
			out = append(out, it.msg.head)
		}
	}
	return out
}

// journalDropped records that op dropped the items seqs of agent id's
// mailbox.
func (s *Supervisor) journalDropped(id, op string, seqs []uint64) {
	if len(seqs) > 0 {
		s.journal.Write(journal.Event{Event: "mail_removed", AgentID: id, Seqs: seqs, Note: op + " dropped the queued messages"})
	}
}

// mailRecord is item as the journal keeps it.
func mailRecord(it *mailItem) *journal.MailRecord {
	r := &journal.MailRecord{Seq: it.seq, Trigger: it.trigger, From: it.from, At: proto.Time{Time: it.at},
		Message: it.msg.head, MessageBytes: it.msg.size, MessageFile: it.msg.path}
	if e := it.end; e != nil {
		r.EndOf, r.EndPath, r.EndStatus, r.Detail = e.agentID, e.path, e.status, e.detail
	}
	return r
}

// mailItemOf is the item a restored record keeps: its message read from
// its file when the submission takes it, or its head when the file is
// gone and the head is the whole message.
func mailItemOf(r journal.MailRecord) *mailItem {
	it := &mailItem{seq: r.Seq, trigger: r.Trigger, from: r.From, at: r.At.Time,
		msg: &Message{path: r.MessageFile, head: r.Message, size: r.MessageBytes}}
	if r.MessageFile == "" {
		it.msg = &Message{text: r.Message, head: r.Message, size: len(r.Message)}
	}
	if r.EndOf != "" {
		it.end = &childEnd{agentID: r.EndOf, path: r.EndPath, status: r.EndStatus, detail: r.Detail}
		it.msg = textMessage(proto.FormatEnd(r.EndPath, r.EndStatus, r.Detail))
	}
	return it
}

// sessionDir is the folder of a session's message files in the run.
func (s *Supervisor) sessionDir(session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(s.runDir, "sessions", hex.EncodeToString(sum[:6]))
}

// postRoot puts message m from caller c into the root mailbox of c's
// tree (SPEC §14: a child's send_message to /root lands in its session's
// mailbox). Errors: the tree has no multi-agent session; the message
// file cannot be written.
func (s *Supervisor) postRoot(c proto.Caller, m *Message) error {
	s.mu.Lock()
	session, from := c.Session, proto.RootPath
	if a := s.agents[c.AgentID]; a != nil {
		session, from = s.rootSessionLocked(a), a.path
	}
	s.mu.Unlock()
	if session == "" {
		return &proto.Error{Code: proto.CodeInvalid, Message: "/root has no mailbox here: the root of this tree is not a `subdash mcp --tools multi-agent` session"}
	}
	item := &mailItem{seq: s.mailSeq.Add(1), msg: m, from: from, at: time.Now()}
	file := filepath.Join(s.sessionDir(session), "mail-"+strconv.FormatUint(item.seq, 10)+".msg")
	if err := m.keep(file); err != nil {
		return errKeepMessage(file, err)
	}
	item.msg = &Message{path: file, head: m.head, size: m.size}
	s.mu.Lock()
	b := s.sessionLocked(session)
	b.items = append(b.items, item)
	s.wakeLocked()
	s.mu.Unlock()
	s.journal.Write(journal.Event{Event: "mail", Session: session, Mail: mailRecord(item)})
	return nil
}

// sessionRecordsLocked returns the root mailboxes that hold items, as the
// journal's checkpoint keeps them. Call with s.mu held.
func (s *Supervisor) sessionRecordsLocked() []*journal.MailboxRecord {
	var out []*journal.MailboxRecord
	for id, b := range s.sessions {
		if len(b.items)+len(b.handed) == 0 {
			continue
		}
		r := &journal.MailboxRecord{Session: id, Dir: s.cfg.Dir}
		for _, it := range append(slices.Clone(b.handed), b.items...) {
			r.Items = append(r.Items, *mailRecord(it))
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y *journal.MailboxRecord) int { return strings.Compare(x.Session, y.Session) })
	return out
}
