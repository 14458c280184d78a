package supervisor

import (
	"context"
	"fmt"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// Queue keeps message to start as agent id's next submission as soon as
// its running submission ends by itself, completed or errored (SPEC §11):
// the agent first takes that final status (a wait in flight returns it),
// then the queued message starts at once. An agent that runs nothing gets
// the message at once, as Send does. Interrupt, close and send with
// interrupt drop a queued message and say so; CancelQueue cancels it.
//
// Errors: those of Send (empty or too long message, unknown agent, closed
// agent, the concurrency limit when it starts at once); "agent <id>
// already has a queued message; cancel it first" (one message waits at a
// time); "agent <id> is being stopped; send the message once it has
// stopped".
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
	res, err := s.queueMessage(id, m)
	if err != nil {
		m.Discard()
	}
	return res, err
}

func (s *Supervisor) queueMessage(id string, m *Message) (proto.SendResult, error) {
	for {
		s.mu.Lock()
		a, err := s.lookup(id)
		if err == nil {
			err = s.checkQueueLocked(a)
		}
		if err != nil {
			s.mu.Unlock()
			return proto.SendResult{}, err
		}
		if a.running == nil && !a.replacing {
			s.mu.Unlock()
			res, err := s.sendMessage(a.id, m, false)
			if proto.CodeOf(err) == proto.CodeBusy {
				continue // it started running meanwhile: queue after all
			}
			return res, err
		}
		a.queued = m
		a.updatedAt = time.Now()
		s.mu.Unlock()
		s.journal.Write(journal.Event{Event: "queued", AgentID: a.id, Message: m.head, MessageBytes: m.size})
		s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
		return proto.SendResult{AgentID: a.id, Status: proto.StatusRunning, Queued: true}, nil
	}
}

func (s *Supervisor) checkQueueLocked(a *agent) error {
	switch {
	case s.shutdown:
		return proto.ErrShutdown()
	case a.status == proto.StatusClosed:
		return proto.ErrClosed(a.id)
	case a.queued != nil:
		return &proto.Error{Code: proto.CodeBusy, Message: fmt.Sprintf("agent %s already has a queued message; cancel it first", a.id)}
	case a.running != nil && a.running.reason != "":
		return &proto.Error{Code: proto.CodeBusy, Message: fmt.Sprintf("agent %s is being stopped; send the message once it has stopped", a.id)}
	}
	return nil
}

// CancelQueue drops the message queued for agent id (SPEC §11); the
// result has DroppedQueued set. Errors: "agent not found: <id>"; "agent
// <id> has no queued message".
func (s *Supervisor) CancelQueue(ctx context.Context, id string) (proto.StatusResult, error) {
	s.mu.Lock()
	a, err := s.lookup(id)
	if err != nil {
		s.mu.Unlock()
		return proto.StatusResult{}, err
	}
	if a.queued == nil {
		s.mu.Unlock()
		return proto.StatusResult{}, proto.ErrNoQueue(a.id)
	}
	dropQueueLocked(a)
	a.updatedAt = time.Now()
	res := proto.StatusResult{AgentID: a.id, Status: a.status, DroppedQueued: true}
	s.mu.Unlock()
	s.journal.Write(journal.Event{Event: "queue_dropped", AgentID: a.id, Note: "cancelled"})
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	return res, nil
}

// dropQueueLocked drops agent a's queued message, if any, because of op
// (interrupt, close, send with interrupt), and reports whether there was
// one. Call with s.mu held; the journal entry is written by the caller's
// dropQueueJournal after unlocking.
func dropQueueLocked(a *agent) bool {
	had := a.queued != nil
	a.queued.Discard()
	a.queued = nil
	return had
}

// journalDropped records that op dropped agent id's queued message.
func (s *Supervisor) journalDropped(id, op string) {
	s.journal.Write(journal.Event{Event: "queue_dropped", AgentID: id, Note: op + " dropped the queued message"})
}
