package supervisor

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// Spawn creates an agent and starts its first submission with message
// (SPEC §3 spawn); it is SpawnAgent without a task name.
func (s *Supervisor) Spawn(ctx context.Context, message string) (proto.SpawnResult, error) {
	return s.SpawnAgent(ctx, proto.SpawnRequest{Message: message})
}

// SpawnAgent creates an agent and starts its first submission with
// req.Message (SPEC §3 spawn). Its place in the tree (SPEC §14) is under
// the agent whose submission made the call (proto.CallerOf(ctx)), or the
// root, named req.TaskName or its short id. The agent keeps
// proto.OriginOf(ctx) as who asked ("mcp", "ctl", "viewer"; "" for this
// process's own dashboard) in its snapshot (AgentInfo.Origin), so the
// host's quit question can say whose agents it ends (SPEC §7). Errors:
// "message must not be empty"; a message longer than MaxMessageBytes; a
// bad task name, the depth limit or a path held by another agent (SPEC
// §14); "subagent concurrency limit reached (<max>)"; each leaves no agent
// behind. A submission that cannot start (working directory gone) still
// creates the agent, with status errored and the reason as last_error.
func (s *Supervisor) SpawnAgent(ctx context.Context, req proto.SpawnRequest) (proto.SpawnResult, error) {
	m, err := NewMessage(req.Message)
	if err != nil {
		return proto.SpawnResult{}, err
	}
	return s.SpawnMessage(ctx, m, req.TaskName)
}

// SpawnMessage is SpawnAgent with a Message (NewMessage, ReadMessage),
// which it takes: on an error the message is discarded.
func (s *Supervisor) SpawnMessage(ctx context.Context, m *Message, taskName string) (proto.SpawnResult, error) {
	res, err := s.spawnMessage(ctx, m, taskName)
	if err != nil {
		m.Discard()
	}
	return res, err
}

func (s *Supervisor) spawnMessage(ctx context.Context, m *Message, taskName string) (proto.SpawnResult, error) {
	c := proto.CallerOf(ctx)
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return proto.SpawnResult{}, proto.ErrShutdown()
	}
	now := time.Now()
	a := &agent{id: uuid.NewString(), createdAt: now, updatedAt: now, origin: proto.OriginOf(ctx)}
	var err error
	if a.path, a.taskName, a.parentID, err = s.placeLocked(a.id, c, taskName); err != nil {
		s.mu.Unlock()
		return proto.SpawnResult{}, err
	}
	if s.runningCount() >= s.cfg.MaxAgents {
		s.mu.Unlock()
		return proto.SpawnResult{}, proto.ErrLimit(s.cfg.MaxAgents)
	}
	if err := s.checkBudgetLocked(a); err != nil { // a new agent spent nothing: the fleet's
		s.mu.Unlock()
		return proto.SpawnResult{}, err
	}
	if a.parentID == "" {
		a.session = c.Session
	}
	s.spawnedWith(a)
	s.agents[a.id] = a
	s.order = append(s.order, a)
	s.paths[a.path] = a
	sub, _ := s.newSubmissionLocked(a, m) // a new agent's mailbox is empty
	sum := s.summaryLocked(a)
	// Its first change goes out before s.mu does, so that subscribers
	// learn of new agents in the order of s.order (a dashboard adds a new
	// one last), whichever process starts first. Publish never blocks.
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	s.mu.Unlock()

	s.journal.Write(journal.Event{Event: "spawned", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Message: m.head, MessageBytes: m.size,
		Command: a.command, Builtin: a.builtin, Preset: presetRecord(a.preset, a.home), Runner: a.runner,
		TaskName: a.taskName, AgentPath: a.path, ParentID: a.parentID, Session: a.session})
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
	res, err := s.sendMessage(ctx, id, m, interrupt)
	if err != nil {
		m.Discard()
	}
	return res, err
}

func (s *Supervisor) sendMessage(ctx context.Context, id string, m *Message, interrupt bool) (proto.SendResult, error) {
	a, unlock, err := s.lockAgent(ctx, id)
	if err != nil {
		return proto.SendResult{}, err
	}
	defer unlock()

	if a.restored {
		if err := s.checkRestored(a); err != nil {
			return proto.SendResult{}, err
		}
	}
	s.mu.Lock()
	err = s.checkSendLocked(a, interrupt)
	if err == nil {
		err = checkJoinLocked(a, m)
	}
	if err != nil {
		s.mu.Unlock()
		return proto.SendResult{}, err
	}
	if old := a.running; old != nil {
		a.replacing = true
		s.stoppedByLocked(a, old, proto.CallerOf(ctx))
		s.mu.Unlock()
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
	sub, err := s.newSubmissionLocked(a, m)
	s.mu.Unlock()
	if err != nil {
		return proto.SendResult{}, err
	}
	s.journalSent(a, sub, "")
	status := proto.StatusRunning
	if err := s.launch(a, sub); err != nil {
		status = proto.StatusErrored
	}
	return proto.SendResult{AgentID: a.id, Status: status, SubmissionID: sub.id}, nil
}

// journalSent journals that sub started as agent a's next submission
// (event sent), with the mailbox items it took.
func (s *Supervisor) journalSent(a *agent, sub *submission, note string) {
	var took []uint64
	if sub.took != nil {
		took = *sub.took
	}
	s.journal.Write(journal.Event{Event: "sent", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Message: sub.message,
		MessageBytes: sub.msgLen, Seqs: took, Note: note})
}

// lockAgent finds the agent target names for the caller of ctx (SPEC §14)
// and takes its operation lock, which serializes the operations that wait
// on its processes; call the returned function to release it.
func (s *Supervisor) lockAgent(ctx context.Context, target string) (*agent, func(), error) {
	s.mu.Lock()
	a, err := s.resolveLocked(proto.CallerOf(ctx), target)
	s.mu.Unlock()
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
// It touches only that agent (not its children), and keeps the messages
// held for it: they wait for its next submission (SPEC §14, as Memo keeps
// its mailbox). Errors: "agent not found: <id>"; "agent <id> is not
// running"; "an agent cannot interrupt itself" when the calling
// submission is the agent's own (Memo's rule, every door; SPEC §14).
func (s *Supervisor) Interrupt(ctx context.Context, id string) (proto.StatusResult, error) {
	a, unlock, err := s.lockAgent(ctx, id)
	if err != nil {
		return proto.StatusResult{}, err
	}
	defer unlock()
	if c := proto.CallerOf(ctx); c.AgentID != "" && c.AgentID == a.id {
		return proto.StatusResult{}, errSelfInterrupt
	}
	s.mu.Lock()
	sub := a.running
	if sub != nil {
		s.stoppedByLocked(a, sub, proto.CallerOf(ctx))
	}
	s.mu.Unlock()
	if sub == nil {
		return proto.StatusResult{}, proto.ErrNotRunning(a.id)
	}
	s.journal.Write(journal.Event{Event: "interrupted", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq})
	s.requestStop(a, sub, "interrupted")
	<-sub.done
	return s.statusResult(a), nil
}

// Close marks agent id and its descendants closed (SPEC §3 close, §14),
// journaled deepest first as Memo shuts its tree down, and terminates
// every running submission among them at once (one grace period for all,
// not one per level) before returning. Each closed agent's mailbox is
// dropped, which the result says (DroppedQueued). Closing a closed agent
// is not an error; a closed descendant stays closed by its own close.
// Descendants lists the ids of the others it closed. Errors: "agent not
// found: <id>".
func (s *Supervisor) Close(ctx context.Context, id string) (proto.StatusResult, error) {
	c := proto.CallerOf(ctx)
	tree, unlock, err := s.lockTree(c, id)
	if err != nil {
		return proto.StatusResult{}, err
	}
	defer unlock()
	a := tree[len(tree)-1] // the shallowest: the target
	res := proto.StatusResult{AgentID: a.id, Status: proto.StatusClosed}
	s.mu.Lock()
	closed := s.closeTreeLocked(c, tree, time.Now())
	s.mu.Unlock()
	for _, cl := range closed {
		if cl.a != a {
			res.Descendants = append(res.Descendants, cl.a.id)
		}
		res.DroppedQueued = res.DroppedQueued || cl.msgs
	}
	s.endCloses(closed, []*agent{a})
	return res, nil
}

// closing is one agent that a close closes: the submission it stops (nil
// when none ran), the queued messages it dropped and the attention it
// raised.
type closing struct {
	a       *agent
	sub     *submission
	dropped []uint64
	msgs    bool
	at      *proto.Attention
}

// closeTreeLocked marks the open agents of tree (subtreeLocked's order,
// its root last) closed for caller c, the others closed by the root, and
// drops their mailboxes; what it closed is returned for endCloses. Call
// with s.mu and the tree's operation locks held.
func (s *Supervisor) closeTreeLocked(c proto.Caller, tree []*agent, now time.Time) []closing {
	root := tree[len(tree)-1]
	var closed []closing
	for _, d := range tree {
		if d.status == proto.StatusClosed {
			continue
		}
		cl := closing{a: d, sub: d.running}
		if cl.sub == nil {
			d.beforeClose = d.status
		} else {
			s.stoppedByLocked(d, cl.sub, c)
		}
		d.status = proto.StatusClosed
		d.updatedAt = now
		if d != root {
			d.closedBy = root.id
		}
		cl.dropped, cl.msgs = dropMailboxLocked(d)
		s.tookFinalLocked(d)
		cl.at = s.needYouLocked(d, string(proto.StatusClosed))
		closed = append(closed, cl)
	}
	return closed
}

// endCloses journals and publishes the closes closeTreeLocked made, then
// terminates every running submission among them at once and waits until
// each has ended; roots are the closes' targets, whose parents hear of the
// close of one that ran nothing (a running one's end says it).
func (s *Supervisor) endCloses(closed []closing, roots []*agent) {
	for _, cl := range closed {
		s.journalDropped(cl.a.id, "close", cl.dropped)
		s.journal.Write(journal.Event{Event: "closed", AgentID: cl.a.id, ClosedBy: cl.a.closedBy})
		s.hub.Publish(proto.Change{AgentID: cl.a.id, Agent: true})
		s.announce(cl.a.id, cl.at)
	}
	for _, cl := range closed {
		if cl.sub != nil {
			s.requestStop(cl.a, cl.sub, "interrupted")
		}
	}
	for _, cl := range closed {
		if cl.sub != nil {
			<-cl.sub.done
		} else if slices.Contains(roots, cl.a) {
			s.putEnd(cl.a, s.treeAgent(cl.a))
		}
	}
}

// Resume reopens a closed agent, restoring the status it had when it was
// closed, and the descendants that its close closed (SPEC §14); an agent
// whose submission was killed by the close comes back errored with
// last_error "interrupted" (SPEC §3 resume, a deliberate difference from
// Memo). It starts no submission; an open agent is left as it is.
// Descendants lists the ids of the others it reopened. Errors: "agent not
// found: <id>".
func (s *Supervisor) Resume(ctx context.Context, id string) (proto.StatusResult, error) {
	tree, unlock, err := s.lockTree(proto.CallerOf(ctx), id)
	if err != nil {
		return proto.StatusResult{}, err
	}
	defer unlock()
	a := tree[len(tree)-1]
	var reopened []*agent
	s.mu.Lock()
	now := time.Now()
	for i := len(tree) - 1; i >= 0; i-- { // the target first, then down the tree
		d := tree[i]
		if d.status != proto.StatusClosed || d != a && d.closedBy != a.id {
			continue
		}
		d.status, d.closedBy, d.updatedAt = d.beforeClose, "", now
		reopened = append(reopened, d)
	}
	res := proto.StatusResult{AgentID: a.id, Status: a.status}
	for _, d := range reopened {
		if d != a {
			res.Descendants = append(res.Descendants, d.id)
		}
	}
	s.mu.Unlock()
	for _, d := range reopened {
		s.journal.Write(journal.Event{Event: "resumed", AgentID: d.id, Status: d.beforeClose})
		s.hub.Publish(proto.Change{AgentID: d.id, Agent: true})
	}
	return res, nil
}

func (s *Supervisor) statusResult(a *agent) proto.StatusResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.StatusResult{AgentID: a.id, Status: a.status}
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
// are gone, then closes the journal. It waits at most the grace period
// and ShutdownTimeout more, or until ctx ends: the error then says how
// many submissions were left (the next host on the state directory ends
// them), or is ctx's. It is safe to call twice.
func (s *Supervisor) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	already := s.shutdown
	s.shutdown = true
	if s.stateTimer != nil {
		s.stateTimer.Stop()
	}
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
	bound := time.NewTimer(s.cfg.Grace + ShutdownTimeout)
	defer bound.Stop()
	var late error
	select {
	case <-done:
	case <-bound.C:
		late = s.errStillRunning()
	case <-ctx.Done():
		late = ctx.Err()
	}
	if late != nil {
		// What the runner holds (pods) must not outlive the host even
		// when its submissions could not be ended in time: closing it
		// ends them with it (Runner.Close).
		_ = s.closeRunner()
		return late
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

// errStillRunning says that the running submissions outlived Shutdown's
// bound.
func (s *Supervisor) errStillRunning() error {
	s.mu.Lock()
	n := s.runningCount()
	s.mu.Unlock()
	return fmt.Errorf("%d submission(s) still running %s after the grace period of %s; the next host on this state directory ends them", n, ShutdownTimeout, s.cfg.Grace)
}

// SkipGrace ends every grace period now and for the rest of the
// supervisor's life: a process that is still alive after its SIGTERM, or
// an agent CLI still ending on its own interrupt (SPEC §4), gets SIGKILL
// at once instead of after --grace. For a user who quits without
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
