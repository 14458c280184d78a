package supervisor

import (
	"context"
	"fmt"
	"time"

	"github.com/subdash/subdash/supervisor/internal/mailbox"
	"github.com/subdash/subdash/supervisor/proto"
)

// Mailboxes of the multi-agent family (SPEC §14, internal/mailbox): each
// agent has one (agent.mailbox), each `subdash mcp --tools multi-agent`
// session a root mailbox (Supervisor.roots); s.mu guards them all. Here
// the ends of children are put in, and waits hand items over.

// rootLocked returns the root mailbox of session, made when new. Call
// with s.mu held.
func (s *Supervisor) rootLocked(session string) *mailbox.Box {
	b := s.roots[session]
	if b == nil {
		b = &mailbox.Box{}
		s.roots[session] = b
	}
	return b
}

// wakeLocked wakes every wait on a mailbox: one of them changed. Call with
// s.mu held.
func (s *Supervisor) wakeLocked() {
	close(s.mailboxWake)
	s.mailboxWake = make(chan struct{})
}

// rootSessionLocked returns the session whose root mailbox is the root of
// agent a's tree: that of its ancestor under the root; "" when that one
// was not spawned by a multi-agent session. Call with s.mu held.
func (s *Supervisor) rootSessionLocked(a *agent) string {
	for a.parentID != "" {
		p := s.agents[a.parentID]
		if p == nil {
			return ""
		}
		a = p
	}
	return a.session
}

// isParentLocked reports whether caller c is agent a's parent: the agent
// that spawned it, or for a child of the root the session that did. Call
// with s.mu held.
func isParentLocked(c proto.Caller, a *agent) bool {
	if a.parentID != "" {
		return c.AgentID == a.parentID
	}
	return c.AgentID == "" && c.Session != "" && c.Session == a.session
}

// stoppedByLocked records that caller c asks to stop sub of agent a: its
// parent gets no item of it then. Call with s.mu held.
func (s *Supervisor) stoppedByLocked(a *agent, sub *submission, c proto.Caller) {
	if sub.reason == "" && sub.endedAt.IsZero() {
		sub.byParent = isParentLocked(c, a)
	}
}

// checkJoinLocked refuses own when the messages held for agent a and it
// would make a message over the limit (joinMessages). Call with s.mu held.
func checkJoinLocked(a *agent, own *Message) error {
	items := a.mailbox.Items()
	if len(items) == 0 {
		return nil
	}
	parts := []*Message{own}
	for _, it := range items {
		parts = append(parts, messageOf(it))
	}
	if size := joinedSize(parts); size > proto.MaxMessageBytes {
		return errJoinTooLong(size)
	}
	return nil
}

// putEnd puts into the mailbox of agent a's parent the item that says how
// a ended, or that it was closed (SPEC §14): ta is a as it was when the
// turn ended, taken before a queued message could start its next turn, so
// the item says how that turn went. A parent that is closed, or a child of
// the root that no multi-agent session spawned, gets none.
func (s *Supervisor) putEnd(a *agent, ta proto.TreeAgent) {
	s.mu.Lock()
	detail := ""
	switch {
	case ta.Error != nil:
		detail = *ta.Error
	case ta.Status == proto.TreeInterrupted && s.shutdown:
		detail = "interrupted (host ended)"
	case ta.Status == proto.TreeInterrupted:
		detail = "interrupted by a person or another program; followup_task continues it"
	case ta.Status == proto.TreeShutdown:
		detail = "closed by a person or another program"
	case ta.LastMessage != nil:
		detail = *ta.LastMessage
	}
	item := mailbox.NewEnd(s.mailboxSeq.Add(1), time.Now(), mailbox.End{AgentID: a.id, Path: a.path, Status: ta.Status, Detail: detail})
	var owner mailbox.Owner
	p := s.agents[a.parentID]
	switch {
	case p != nil && p.status != proto.StatusClosed:
		p.mailbox.Put(item)
		owner.AgentID = p.id
	case a.parentID == "" && a.session != "":
		s.rootLocked(a.session).Put(item)
		owner.Session = a.session
	default:
		s.mu.Unlock()
		return
	}
	s.wakeLocked()
	s.mu.Unlock()
	s.journal.Write(owner.Put(item))
	if owner.AgentID != "" {
		s.hub.Publish(proto.Change{AgentID: p.id, Agent: true})
	}
}

// Wait waits until any of ids is final (SPEC §3 wait). timeoutMS nil means
// DefaultWaitTimeoutMS; other values are clamped to [MinWaitTimeoutMS,
// MaxWaitTimeoutMS]. It returns at once when an id is already final, as soon
// as one becomes final (driven by events, not a polling tick), or at the
// timeout with TimedOut set, no Status, and Details only of the ids that
// ask a question (pending_questions, SPEC §12). An unknown id is final as
// not_found. Errors: "ids must not be empty"; "timeout_ms must be greater
// than zero"; ctx's error when ctx ends first (a cancelled client).
func (s *Supervisor) Wait(ctx context.Context, ids []string, timeoutMS *int) (proto.WaitResult, error) {
	if len(ids) == 0 {
		return proto.WaitResult{}, proto.ErrEmptyIDs()
	}
	ms := proto.DefaultWaitTimeoutMS
	if timeoutMS != nil {
		if *timeoutMS <= 0 {
			return proto.WaitResult{}, proto.ErrTimeoutNotPositive()
		}
		ms = min(max(*timeoutMS, proto.MinWaitTimeoutMS), proto.MaxWaitTimeoutMS)
	}
	// An ambiguous id prefix is an error, as in the other operations, not
	// an unknown id: the caller would take not_found for an answer.
	c := proto.CallerOf(ctx)
	s.mu.Lock()
	for _, id := range ids {
		if _, err := s.resolveLocked(c, id); proto.CodeOf(err) == proto.CodeInvalid {
			s.mu.Unlock()
			return proto.WaitResult{}, err
		}
	}
	// A final status an agent takes from now on is returned even when a
	// queued message starts its next submission before we look (SPEC §11).
	base := make(map[*agent]int, len(ids))
	for _, id := range ids {
		if a, err := s.resolveLocked(c, id); err == nil {
			base[a] = a.finals
		}
	}
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	s.mu.Unlock()
	// A final status is a change of the agent's summary: output alone
	// (every read while an agent floods) does not wake the wait.
	sub := s.hub.SubscribeSummaries()
	defer sub.Close()
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	for {
		if res, ok := s.finalOf(c, ids, base); ok {
			return res, nil
		}
		select {
		case <-sub.Ready():
			sub.Drain()
		case <-timer.C:
			return proto.WaitResult{Status: map[string]proto.Status{}, Details: s.askingOf(c, ids), TimedOut: true}, nil
		case <-ctx.Done():
			return proto.WaitResult{}, ctx.Err()
		}
	}
}

// askingOf returns the details of those of ids that ask a question and
// wait on it (SPEC §12 "Questions"), keyed as given: a wait that timed
// out shows what keeps them (their status stays out of Status, which
// holds final ones).
func (s *Supervisor) askingOf(c proto.Caller, ids []string) map[string]proto.WaitDetail {
	out := map[string]proto.WaitDetail{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if a, err := s.resolveLocked(c, id); err == nil && len(questionsLocked(a)) > 0 {
			out[id] = s.detailLocked(a)
		}
	}
	return out
}

// Waiting returns how many Wait calls are in flight: each returns a
// final status taken from now on, whatever comes first (a test waits for
// its wait to be in flight before it ends an agent).
func (s *Supervisor) Waiting() int { return int(s.waiting.Load()) }

// finalOf reports the final ids among ids, keyed as given: those final
// now, and those that took a final status since base counted their finals.
func (s *Supervisor) finalOf(c proto.Caller, ids []string, base map[*agent]int) (proto.WaitResult, bool) {
	res := proto.WaitResult{Status: map[string]proto.Status{}, Details: map[string]proto.WaitDetail{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		a, err := s.resolveLocked(c, id)
		if err != nil {
			res.Status[id] = proto.StatusNotFound
			res.Details[id] = proto.WaitDetail{Status: proto.StatusNotFound}
			continue
		}
		if a.ending {
			continue // final once its end is journaled; the change that follows wakes the wait
		}
		if !a.status.Final() || a.running != nil {
			if n, ok := base[a]; ok && a.finals > n {
				res.Status[id] = a.lastFinal.Status
				res.Details[id] = *a.lastFinal
			}
			continue
		}
		res.Status[id] = a.status
		res.Details[id] = s.detailLocked(a)
	}
	return res, len(res.Status) > 0
}

func (s *Supervisor) detailLocked(a *agent) proto.WaitDetail {
	sum := s.summaryLocked(a)
	d := proto.WaitDetail{
		Status:           a.status,
		LastMessage:      &sum.LastMessage,
		LastOutput:       copyStr(a.lastOutput),
		LastError:        copyStr(a.lastError),
		LastSubmissionID: &sum.LastSubmissionID,
		UpdatedAt:        &sum.UpdatedAt,
		SessionID:        a.sessionID,
		Failure:          sum.Failure,
		TaskName:         sum.TaskName,
		AgentPath:        sum.AgentPath,
		ParentID:         sum.ParentID,
		PendingQuestions: sum.PendingQuestions,
	}
	return d
}

// WaitMailbox waits on the mailbox of the caller of ctx (SPEC §14,
// wait_agent): its agent's, or its session's root mailbox. The items
// numbered up to ack, handed over by an earlier wait, are taken out
// first; then it returns at once when items are there (those handed over
// and not acknowledged yet come again: that answer may have been lost),
// else when one comes, when the caller's agent is closed or the host ends
// (ActivityClosed), or at the timeout. timeoutMS nil means
// DefaultWaitTimeoutMS. Errors: Memo's "timeout_ms must be between 10000
// and 300000"; a caller with no mailbox (outside every submission and
// every multi-agent session); ctx's error when ctx ends first.
func (s *Supervisor) WaitMailbox(ctx context.Context, timeoutMS *int, ack uint64) (proto.MailboxResult, error) {
	ms := proto.DefaultWaitTimeoutMS
	if timeoutMS != nil {
		ms = *timeoutMS
	}
	if ms < proto.MinWaitTimeoutMS || ms > proto.MaxWaitTimeoutMS {
		return proto.MailboxResult{}, &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf(
			"timeout_ms must be between %d and %d", proto.MinWaitTimeoutMS, proto.MaxWaitTimeoutMS)}
	}
	c := proto.CallerOf(ctx)
	if c.AgentID == "" && c.Session == "" {
		return proto.MailboxResult{}, &proto.Error{Code: proto.CodeInvalid, Message: "wait_agent waits on the mailbox of an agent or of a `subdash mcp --tools multi-agent` session; this caller has none"}
	}
	s.ackMailbox(c, ack)
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	for {
		res, wake, err := s.handOver(c)
		if err != nil || res.Activity != "" {
			return res, err
		}
		select {
		case <-wake:
		case <-s.stopped:
		case <-timer.C:
			return proto.MailboxResult{Activity: proto.ActivityTimeout, TimedOut: true, Items: []proto.MailItem{}}, nil
		case <-ctx.Done():
			return proto.MailboxResult{}, ctx.Err()
		}
	}
}

// mailboxLocked returns caller c's mailbox, and the agent it belongs to
// (nil for a session's). Errors: the caller's agent is gone. Call with
// s.mu held.
func (s *Supervisor) mailboxLocked(c proto.Caller) (*mailbox.Box, *agent, error) {
	if c.AgentID != "" {
		a := s.agents[c.AgentID]
		if a == nil {
			return nil, nil, proto.ErrNotFound(c.AgentID)
		}
		return &a.mailbox, a, nil
	}
	return s.rootLocked(c.Session), nil, nil
}

// ownerOf names caller c's mailbox in the journal: that of its agent a
// (nil: the session's).
func ownerOf(c proto.Caller, a *agent) mailbox.Owner {
	if a != nil {
		return mailbox.Owner{AgentID: a.id}
	}
	return mailbox.Owner{Session: c.Session}
}

// ackMailbox takes the items numbered up to ack out of the caller's
// handed over items, for good.
func (s *Supervisor) ackMailbox(c proto.Caller, ack uint64) {
	if ack == 0 {
		return
	}
	s.mu.Lock()
	b, a, err := s.mailboxLocked(c)
	var gone []uint64
	if err == nil {
		gone = b.Ack(ack)
	}
	s.mu.Unlock()
	if len(gone) > 0 {
		s.journal.Write(ownerOf(c, a).Taken(gone))
	}
}

// handOver hands the caller's items over (its mailbox holds them as
// handed over until acknowledged) and answers them; with none it answers
// no activity and the channel that a change of any mailbox closes.
func (s *Supervisor) handOver(c proto.Caller) (proto.MailboxResult, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, a, err := s.mailboxLocked(c)
	if err != nil {
		return proto.MailboxResult{}, nil, err
	}
	if handed := b.HandOver(); len(handed) > 0 {
		to := proto.RootPath
		if a != nil {
			to = a.path
		}
		res := proto.MailboxResult{Activity: proto.ActivityMailbox}
		for _, it := range handed {
			res.Items = append(res.Items, it.Answer(to))
		}
		return res, nil, nil
	}
	if a != nil && a.status == proto.StatusClosed || s.stoppedNow() {
		return proto.MailboxResult{Activity: proto.ActivityClosed, Items: []proto.MailItem{}}, nil, nil
	}
	return proto.MailboxResult{}, s.mailboxWake, nil
}

// stoppedNow reports whether Shutdown has ended every submission.
func (s *Supervisor) stoppedNow() bool {
	select {
	case <-s.stopped:
		return true
	default:
		return false
	}
}

// deliver gives agent a the message m of a follow-up (SPEC §14,
// followup_task): an idle agent starts its next submission with it now
// (the held messages first), or, at the concurrency limit, as soon as a
// slot frees (pending_init); a running agent gets it queued for the end of
// its running submission, or, where the agent takes messages while it
// runs, steered into it (SPEC §11 steer: the receipt follows in its
// summary; one not delivered is queued). This is the one place that
// decides between queueing and steering.
func (s *Supervisor) deliver(ctx context.Context, a *agent, m *Message) error {
	from := ""
	for {
		s.mu.Lock()
		if err := s.checkQueueLocked(a); err != nil {
			s.mu.Unlock()
			return err
		}
		from = s.pathOfLocked(proto.CallerOf(ctx))
		idle := a.running == nil && !a.replacing
		full := s.runningCount() >= s.cfg.MaxAgents
		steers := a.running != nil && a.running.steer != nil
		s.mu.Unlock()
		if steers { // it takes messages while it runs (SPEC §11 steer)
			_, err := s.steerMessage(ctx, a.id, m)
			return err
		}
		if !idle || full {
			// put starts it, or has it wait for a slot, when the agent
			// runs nothing by then
			return s.put(a, m, true, from)
		}
		_, err := s.sendMessage(ctx, a.id, m, false)
		if c := proto.CodeOf(err); c != proto.CodeBusy && c != proto.CodeLimit {
			return err
		}
		// it started running, or the last slot went, meanwhile: again
	}
}

// startPending starts the next submission of agents whose follow-up waits
// for a slot (pending_init), oldest first, while slots are free.
func (s *Supervisor) startPending() {
	for {
		s.mu.Lock()
		var a *agent
		if !s.shutdown && s.runningCount() < s.cfg.MaxAgents {
			for _, o := range s.order {
				if o.pending && !o.mailbox.HasQueued() {
					o.pending = false // nothing queued is left to start: a start with a nil message would crash the host
					continue
				}
				if o.pending && o.running == nil && !o.replacing && o.status != proto.StatusClosed {
					a = o
					break
				}
			}
		}
		if a == nil {
			s.mu.Unlock()
			return
		}
		a.pending = false
		sub, err := s.newSubmissionLocked(a, nil)
		s.mu.Unlock()
		if err != nil {
			s.warn(fmt.Sprintf("agent %s: its follow-up could not start: %v", a.id, err))
			continue
		}
		s.journalSent(a, sub, "a follow-up that waited for a slot")
		_ = s.launch(a, sub) // a start failure ends it as errored, as for send
	}
}
