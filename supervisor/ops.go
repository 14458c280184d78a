package supervisor

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// Spawn creates an agent and starts its first submission with message
// (SPEC §3 spawn). The agent keeps proto.OriginOf(ctx) as who asked
// ("mcp", "ctl", "viewer"; "" for this process's own dashboard) in its
// snapshot (AgentInfo.Origin), so the host's quit question can say whose
// agents it ends (SPEC §7). Errors: "message must not be empty"; a message
// longer than MaxMessageBytes; "subagent concurrency limit reached
// (<max>)", leaving no agent behind. A submission that cannot start
// (working directory gone) still creates the agent, with status errored
// and the reason as last_error.
func (s *Supervisor) Spawn(ctx context.Context, message string) (proto.SpawnResult, error) {
	m, err := NewMessage(message)
	if err != nil {
		return proto.SpawnResult{}, err
	}
	return s.SpawnMessage(ctx, m)
}

// SpawnMessage is Spawn with a Message (NewMessage, ReadMessage), which
// it takes: on an error the message is discarded.
func (s *Supervisor) SpawnMessage(ctx context.Context, m *Message) (proto.SpawnResult, error) {
	res, err := s.spawnMessage(proto.OriginOf(ctx), m)
	if err != nil {
		m.Discard()
	}
	return res, err
}

func (s *Supervisor) spawnMessage(origin string, m *Message) (proto.SpawnResult, error) {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return proto.SpawnResult{}, proto.ErrShutdown()
	}
	if s.runningCount() >= s.cfg.MaxAgents {
		s.mu.Unlock()
		return proto.SpawnResult{}, proto.ErrLimit(s.cfg.MaxAgents)
	}
	now := time.Now()
	a := &agent{id: uuid.NewString(), createdAt: now, updatedAt: now, origin: origin}
	s.spawnedWith(a)
	s.agents[a.id] = a
	s.order = append(s.order, a)
	sub := s.newSubmissionLocked(a, m)
	sum := s.summaryLocked(a)
	s.mu.Unlock()

	s.journal.Write(journal.Event{Event: "spawned", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Message: m.head, MessageBytes: m.size,
		Command: a.command, Builtin: a.builtin, Preset: presetRecord(a.preset, a.home), Runner: a.runner})
	if err := s.launch(a, sub); err != nil {
		s.mu.Lock()
		sum = s.summaryLocked(a)
		s.mu.Unlock()
	}
	return proto.SpawnResult{Summary: sum, SubmissionID: sub.id}, nil
}

// Send starts a new submission of agent id with message (SPEC §3 send).
// Errors: "message must not be empty"; a message longer than
// MaxMessageBytes; "agent not found: <id>"; "agent <id> is closed; run
// resume_agent first"; "agent <id> is busy; set interrupt=true to cancel
// current submission" when it runs and interrupt is false; the concurrency limit as for Spawn. With interrupt, the running
// submission is terminated (its whole process group is gone) before the new
// one starts; the agent stays running throughout.
func (s *Supervisor) Send(ctx context.Context, id, message string, interrupt bool) (proto.SendResult, error) {
	m, err := NewMessage(message)
	if err != nil {
		return proto.SendResult{}, err
	}
	return s.SendMessage(ctx, id, m, interrupt)
}

// SendMessage is Send with a Message (NewMessage, ReadMessage), which it
// takes: on an error the message is discarded.
func (s *Supervisor) SendMessage(ctx context.Context, id string, m *Message, interrupt bool) (proto.SendResult, error) {
	res, err := s.sendMessage(id, m, interrupt)
	if err != nil {
		m.Discard()
	}
	return res, err
}

func (s *Supervisor) sendMessage(id string, m *Message, interrupt bool) (proto.SendResult, error) {
	a, unlock, err := s.lockAgent(id)
	if err != nil {
		return proto.SendResult{}, err
	}
	defer unlock()

	if a.restored {
		if err := checkCLI(a, s.cfg.Dir, s.cfg.Environ); err != nil {
			return proto.SendResult{}, err
		}
	}
	s.mu.Lock()
	if err := s.checkSendLocked(a, interrupt); err != nil {
		s.mu.Unlock()
		return proto.SendResult{}, err
	}
	dropped := false
	if old := a.running; old != nil {
		a.replacing = true
		dropped = dropQueueLocked(a)
		s.mu.Unlock()
		if dropped {
			s.journalDropped(a.id, "send with interrupt")
		}
		s.journal.Write(journal.Event{Event: "interrupted", AgentID: a.id, SubmissionID: old.id, Seq: old.seq, Note: "send with interrupt"})
		s.requestStop(a, old, "interrupted")
		<-old.done
		s.mu.Lock()
		a.replacing = false
		if s.shutdown {
			a.status = old.status
			s.mu.Unlock()
			s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
			return proto.SendResult{}, proto.ErrShutdown()
		}
	} else if s.runningCount() >= s.cfg.MaxAgents {
		s.mu.Unlock()
		return proto.SendResult{}, proto.ErrLimit(s.cfg.MaxAgents)
	}
	sub := s.newSubmissionLocked(a, m)
	s.mu.Unlock()

	s.journal.Write(journal.Event{Event: "sent", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Message: m.head, MessageBytes: m.size})
	status := proto.StatusRunning
	if err := s.launch(a, sub); err != nil {
		status = proto.StatusErrored
	}
	return proto.SendResult{AgentID: a.id, Status: status, SubmissionID: sub.id, DroppedQueued: dropped}, nil
}

// lockAgent finds agent id and takes its operation lock, which serializes
// the operations that wait on its processes; call the returned function to
// release it.
func (s *Supervisor) lockAgent(id string) (*agent, func(), error) {
	a, err := s.find(id)
	if err != nil {
		return nil, nil, err
	}
	a.opMu.Lock()
	return a, a.opMu.Unlock, nil
}

func (s *Supervisor) checkSendLocked(a *agent, interrupt bool) error {
	switch {
	case s.shutdown:
		return proto.ErrShutdown()
	case a.status == proto.StatusClosed:
		return proto.ErrClosed(a.id)
	case a.running != nil && !interrupt:
		return proto.ErrBusy(a.id)
	}
	return nil
}

// Interrupt terminates the running submission of agent id (SPEC §3
// interrupt, §4) and returns once its process group is gone; the agent
// becomes errored with last_error "interrupted" and stays open for input.
// Errors: "agent not found: <id>"; "agent <id> is not running".
func (s *Supervisor) Interrupt(ctx context.Context, id string) (proto.StatusResult, error) {
	a, unlock, err := s.lockAgent(id)
	if err != nil {
		return proto.StatusResult{}, err
	}
	defer unlock()
	s.mu.Lock()
	sub := a.running
	dropped := sub != nil && dropQueueLocked(a)
	s.mu.Unlock()
	if sub == nil {
		return proto.StatusResult{}, proto.ErrNotRunning(a.id)
	}
	if dropped {
		s.journalDropped(a.id, "interrupt")
	}
	s.journal.Write(journal.Event{Event: "interrupted", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq})
	s.requestStop(a, sub, "interrupted")
	<-sub.done
	res := s.statusResult(a)
	res.DroppedQueued = dropped
	return res, nil
}

// Close marks agent id closed and terminates its running submission, if any,
// before returning (SPEC §3 close). Closing a closed agent is not an error.
// Errors: "agent not found: <id>".
func (s *Supervisor) Close(ctx context.Context, id string) (proto.StatusResult, error) {
	a, unlock, err := s.lockAgent(id)
	if err != nil {
		return proto.StatusResult{}, err
	}
	defer unlock()
	s.mu.Lock()
	if a.status == proto.StatusClosed {
		s.mu.Unlock()
		return proto.StatusResult{AgentID: a.id, Status: proto.StatusClosed}, nil
	}
	sub := a.running
	if sub == nil {
		a.beforeClose = a.status
	}
	a.status = proto.StatusClosed
	a.updatedAt = time.Now()
	dropped := dropQueueLocked(a)
	s.tookFinalLocked(a)
	at := s.needYouLocked(a, string(proto.StatusClosed))
	s.mu.Unlock()
	if dropped {
		s.journalDropped(a.id, "close")
	}
	s.journal.Write(journal.Event{Event: "closed", AgentID: a.id})
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	s.announce(a.id, at)
	if sub != nil {
		s.requestStop(a, sub, "interrupted")
		<-sub.done
	}
	return proto.StatusResult{AgentID: a.id, Status: proto.StatusClosed, DroppedQueued: dropped}, nil
}

// Resume reopens a closed agent, restoring the status it had when it was
// closed; an agent whose submission was killed by the close comes back
// errored with last_error "interrupted" (SPEC §3 resume, a deliberate
// difference from Memo). It starts no submission; an open agent is left as
// it is. Errors: "agent not found: <id>".
func (s *Supervisor) Resume(ctx context.Context, id string) (proto.StatusResult, error) {
	a, unlock, err := s.lockAgent(id)
	if err != nil {
		return proto.StatusResult{}, err
	}
	defer unlock()
	s.mu.Lock()
	resumed := a.status == proto.StatusClosed
	if resumed {
		a.status = a.beforeClose
		a.updatedAt = time.Now()
	}
	res := proto.StatusResult{AgentID: a.id, Status: a.status}
	s.mu.Unlock()
	if resumed {
		s.journal.Write(journal.Event{Event: "resumed", AgentID: a.id, Status: res.Status})
		s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	}
	return res, nil
}

func (s *Supervisor) statusResult(a *agent) proto.StatusResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.StatusResult{AgentID: a.id, Status: a.status}
}

// Wait waits until any of ids is final (SPEC §3 wait). timeoutMS nil means
// DefaultWaitTimeoutMS; other values are clamped to [MinWaitTimeoutMS,
// MaxWaitTimeoutMS]. It returns at once when an id is already final, as soon
// as one becomes final (driven by events, not a polling tick), or at the
// timeout with empty maps and TimedOut set. An unknown id is final as
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
	s.mu.Lock()
	for _, id := range ids {
		if _, err := s.lookup(id); proto.CodeOf(err) == proto.CodeInvalid {
			s.mu.Unlock()
			return proto.WaitResult{}, err
		}
	}
	// A final status an agent takes from now on is returned even when a
	// queued message starts its next submission before we look (SPEC §11).
	base := make(map[*agent]int, len(ids))
	for _, id := range ids {
		if a, err := s.lookup(id); err == nil {
			base[a] = a.finals
		}
	}
	s.mu.Unlock()
	// A final status is a change of the agent's summary: output alone
	// (every read while an agent floods) does not wake the wait.
	sub := s.hub.SubscribeSummaries()
	defer sub.Close()
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	for {
		if res, ok := s.finalOf(ids, base); ok {
			return res, nil
		}
		select {
		case <-sub.Ready():
			sub.Drain()
		case <-timer.C:
			return proto.WaitResult{Status: map[string]proto.Status{}, Details: map[string]proto.WaitDetail{}, TimedOut: true}, nil
		case <-ctx.Done():
			return proto.WaitResult{}, ctx.Err()
		}
	}
}

// finalOf reports the final ids among ids, keyed as given: those final
// now, and those that took a final status since base counted their finals.
func (s *Supervisor) finalOf(ids []string, base map[*agent]int) (proto.WaitResult, bool) {
	res := proto.WaitResult{Status: map[string]proto.Status{}, Details: map[string]proto.WaitDetail{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		a, err := s.lookup(id)
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
				res.Details[id] = a.lastFinal
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
	}
	return d
}

// List returns every agent's summary, oldest first (SPEC §3 list), and
// the host's own Failure. The caller owns the slice; the error is always
// nil (proto.Lister's List, whose client may fail).
func (s *Supervisor) List(context.Context) (proto.ListResult, error) {
	s.mu.Lock()
	out := make([]proto.Summary, 0, len(s.order))
	for _, a := range s.order {
		out = append(out, s.summaryLocked(a))
	}
	s.mu.Unlock()
	return proto.ListResult{Agents: out, Failure: s.Failure()}, nil
}

// Shutdown refuses new submissions, terminates every running submission
// (SPEC §4; last_error "interrupted") and waits until their process groups
// are gone or ctx ends, then closes the journal. It is safe to call twice.
func (s *Supervisor) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	already := s.shutdown
	s.shutdown = true
	type stop struct {
		a   *agent
		sub *submission
	}
	var stops []stop
	for _, a := range s.order {
		if a.running != nil {
			stops = append(stops, stop{a, a.running})
		}
	}
	s.mu.Unlock()
	if !already {
		s.journal.Write(journal.Event{Event: "shutdown", Note: "terminating running submissions"})
	}
	for _, st := range stops {
		s.requestStop(st.a, st.sub, "interrupted")
	}
	done := make(chan struct{})
	go func() {
		s.runs.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		// What the runner holds (pods) must not outlive the host even
		// when its submissions could not be ended in time: closing it
		// ends them with it (Runner.Close).
		_ = s.closeRunner()
		return ctx.Err()
	}
	if s.notifier != nil {
		s.notifier.close()
	}
	cerr := s.closeRunner()
	s.stopOnce.Do(func() {
		// every submission ended: later hosts skip this run in their
		// orphan sweep (journal.EndedCleanly)
		s.journal.Write(journal.Event{Event: "run_ended"})
		close(s.stopped)
	})
	if err := s.journal.Close(); err != nil {
		return err
	}
	return cerr
}

// SkipGrace ends every grace period now and for the rest of the
// supervisor's life: a process that is still alive after its SIGTERM gets
// SIGKILL at once instead of after --grace. For a user who quits without
// waiting (a second q, or ctrl+c while the dashboard stops its agents), so
// Shutdown returns within moments. It is safe to call more than once.
func (s *Supervisor) SkipGrace() {
	s.cutOnce.Do(func() {
		s.journal.Write(journal.Event{Event: "grace_skipped", Note: "processes still alive after SIGTERM are killed at once"})
		close(s.cut)
	})
}

// Stopped is closed once Shutdown has ended every submission: from then on
// every agent is final, so a Wait in progress returns its answer at once
// (the control socket lets such waits answer before it closes).
func (s *Supervisor) Stopped() <-chan struct{} { return s.stopped }

func copyStr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
