package supervisor

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/output"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/socket"
	"github.com/subdash/subdash/supervisor/transcript"
)

// quietAfterExit is how long output must pause, after a main process exited
// by itself while other members of its group live on, before the
// submission ends: long enough to read what the main process left in the
// pipes, short enough that the submission still "ends at once" (SPEC §4).
const quietAfterExit = 50 * time.Millisecond

// proc is a started submission as the supervisor holds it.
type proc struct {
	runner.Process
	pgid int // its process group on this machine; 0 when it runs elsewhere
}

// launch opens the submission's log file and starts its process. A
// submission that cannot start ends at once as errored with the reason
// (SPEC §4), and launch returns that reason.
func (s *Supervisor) launch(a *agent, sub *submission) error {
	var err error
	var logFile *os.File
	if err = os.MkdirAll(filepath.Dir(sub.logPath()), 0o700); err == nil {
		logFile, err = os.OpenFile(sub.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	if err != nil {
		err = fmt.Errorf("cannot create log file %s: %v; check --state-dir", sub.logPath(), err)
	} else {
		sub.out.SetLog(logFile)
	}
	if sub.newSession {
		s.newSessionNote(a, sub)
	}
	s.mu.Lock()
	m := sub.pending
	s.mu.Unlock()
	if err == nil {
		if merr := m.keep(sub.msgPath()); merr != nil {
			err = fmt.Errorf("cannot keep the message in %s: %v; check --state-dir", sub.msgPath(), merr)
		}
	}
	m.Discard() // what keep did not take (it failed, or err came first)
	s.mu.Lock()
	sub.pending = nil // from now on only the message file keeps it
	s.mu.Unlock()
	if err == nil && a.preset.isMemo() {
		err = s.prepareMemo(a, sub)
	}
	var feed func(io.WriteCloser)
	if err == nil {
		feed, err = s.stdinFeed(a, sub)
	}
	if err == nil {
		err = s.checkRunner(a)
	}
	if err == nil {
		if root := s.snapshotRoot(a, sub); root != "" {
			// Where it starts from, before it runs (SPEC §15), which may
			// take seconds: the operation answers at once.
			go func() {
				s.snapshotStart(a, sub, root)
				_ = s.start(a, sub, feed, nil)
			}()
			return nil
		}
	}
	return s.start(a, sub, feed, err)
}

// start starts sub's process, or, with err (why it cannot start), ends
// sub as errored with it and returns it (SPEC §4). A stop asked for
// before the process started (while its snapshot was taken) ends sub
// without starting it.
func (s *Supervisor) start(a *agent, sub *submission, feed func(io.WriteCloser), err error) error {
	if err == nil && sub.stopRequested() {
		_ = sub.out.Finish()
		s.endSubmission(a, sub, nil, "", "")
		sub.out.Release()
		s.runs.Done()
		return nil
	}
	var started runner.Process
	if err == nil {
		s.mu.Lock()
		sub.startedAt = time.Now() // its time is its run's, not its snapshot's
		s.mu.Unlock()
		started, err = s.cfg.Runner.Start(runner.StartRequest{
			Command: sub.command, Dir: s.cfg.Dir, Stdin: feed, Vars: s.submissionVars(a, sub),
			AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Output: sub.out.Feed,
			Log: sub.out.Take, Display: sub.out.Display,
			Placed: func(pl runner.Place) { s.placed(a, pl) },
		})
	}
	if err != nil {
		// the log pane says why (the dashboard points there)
		sub.note("the submission could not start: "+err.Error(), transcript.KindError)
		_ = sub.out.Finish()
		s.endSubmission(a, sub, nil, "", err.Error())
		sub.out.Release()
		s.runs.Done()
		return err
	}
	p := &proc{Process: started, pgid: started.Place().PGID}
	s.mu.Lock()
	sub.proc = p
	s.mu.Unlock()
	s.journal.Write(journal.Event{Event: "submission_started", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
		Command: sub.command, PID: p.pgid, Log: sub.logPath()})
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	go s.run(a, sub, p)
	return nil
}

// newSessionNote says in sub's log pane and the journal that the previous
// submission ended before the agent CLI created a session, so sub starts a
// new one (SPEC §8).
func (s *Supervisor) newSessionNote(a *agent, sub *submission) {
	msg := "the previous submission ended before " + a.preset.Name + " created a session; this submission starts a new session"
	sub.note(msg, transcript.KindNote)
	s.journal.Write(journal.Event{Event: "new_session", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Note: "subdash: " + msg})
}

// note adds a line subdash itself writes to sub's log pane ("subdash: "
// and text): a display line of the raw view and, for a preset with a
// transcript, an entry of kind k there, so either view says it.
func (sub *submission) note(text string, k transcript.Kind) {
	sub.out.Note("subdash: " + text)
	if sub.tr != nil {
		sub.tr.add(transcript.Entry{Kind: k, Text: text})
	}
}

// run waits for a submission's main process to exit, or for a stop request
// or the time limit, and ends the submission (SPEC §4):
//   - stopped (interrupt, send with interrupt, close, quit, time limit): the
//     agent CLI's own interrupt where it has one, then the whole process
//     group is terminated (see stop.go), then the submission ends;
//   - the main process exited by itself and its group is empty: the output
//     is drained and the submission ends with its exit status;
//   - it exited by itself but left processes in its group: the submission
//     ends at once with its exit status (once the pipes pause), and what it
//     left is terminated afterwards, so nothing outlives it.
func (s *Supervisor) run(a *agent, sub *submission, p *proc) {
	defer s.runs.Done()
	var timeout <-chan time.Time
	if s.cfg.Timeout > 0 {
		t := time.NewTimer(s.cfg.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	selfExit := false
	select {
	case <-p.Exited():
		selfExit = s.markExited(sub)
	case <-sub.stopCh:
	case <-timeout:
		s.requestStop(a, sub, "timed out after "+s.cfg.Timeout.String())
	}
	if selfExit && p.Lingers() {
		p.WaitQuiet(quietAfterExit)
		sub.out.FlushRawLines()
		s.endSubmission(a, sub, p, "", "")
		note := "terminated what the submission left running in its process group"
		if err := p.Terminate(s.cfg.Grace, s.cut); err != nil {
			note = err.Error()
		}
		if n := p.TerminateEscapees(s.cfg.Grace, s.cut); n > 0 {
			note += fmt.Sprintf("; terminated %d process(es) that had left the group", n)
		}
		p.Drain()
		if err := sub.out.Finish(); err != nil {
			note += "; log file: " + err.Error()
		}
		s.journal.Write(journal.Event{Event: "leftovers_terminated", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, PID: p.pgid, Note: note})
		sub.out.Release()
		return
	}
	var notes []string
	if err := s.terminate(sub, p); err != nil {
		notes = append(notes, err.Error())
	}
	stopped := sub.stopRequested()
	if stopped {
		// processes that left the group would keep the pipes open and
		// outlive the interrupt
		if n := p.TerminateEscapees(s.cfg.Grace, s.cut); n > 0 {
			notes = append(notes, fmt.Sprintf("terminated %d process(es) that had left the group", n))
		}
	}
	select {
	case <-p.Exited():
	case <-time.After(runner.KillWait):
		// A main process that survives SIGKILL (uninterruptible sleep)
		// cannot be reaped now; the submission ends anyway.
		notes = append(notes, fmt.Sprintf("main process of %s did not exit after SIGKILL", placeText(p.Place())))
	}
	p.Drain()
	if err := sub.out.Finish(); err != nil {
		notes = append(notes, "log file: "+err.Error())
	}
	s.endSubmission(a, sub, p, strings.Join(notes, "; "), "")
	// A stopped submission's escapees were ended above, once its group was
	// gone: nothing of it is left to start more, and one more scan of
	// every process's environment is spared (at a thousand stops, the
	// host's work).
	if stopped {
		sub.out.Release()
		return
	}
	if n := p.TerminateEscapees(s.cfg.Grace, s.cut); n > 0 {
		// left the group and the pipes before the main process exited
		s.journal.Write(journal.Event{Event: "leftovers_terminated", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
			Note: fmt.Sprintf("terminated %d process(es) that had left the submission's process group", n)})
	}
	sub.out.Release()
}

// placed records where agent a's submission runs (the runner's
// StartRequest.Placed), for the dashboard and list (SPEC §13).
func (s *Supervisor) placed(a *agent, pl runner.Place) {
	s.mu.Lock()
	a.place = pl
	s.mu.Unlock()
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
}

// placeText names a place in words: "process group 123", "pod x on node y".
func placeText(pl runner.Place) string {
	switch {
	case pl.Pod != "" && pl.Node != "":
		return "pod " + pl.Pod + " on node " + pl.Node
	case pl.Pod != "":
		return "pod " + pl.Pod
	}
	return fmt.Sprintf("process group %d", pl.PGID)
}

// closeRunner closes the runner (Runner.Close) within ShutdownTimeout, a
// time of its own, not what is left of the wait for the submissions: they
// may have taken all of that, and what the runner holds must not outlive
// the host. A failure is journaled and returned, so that it reaches the
// screen or the exit status with Shutdown's.
func (s *Supervisor) closeRunner() error {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := s.cfg.Runner.Close(ctx)
	if err != nil {
		s.journal.Write(journal.Event{Event: "runner_closed", Note: err.Error()})
		err = fmt.Errorf("closing the %s runner: %w", s.cfg.RunnerName, err)
	}
	return err
}

// markExited records that sub's main process ended by itself, unless a stop
// was requested first, and reports whether it did.
func (s *Supervisor) markExited(sub *submission) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sub.reason != "" {
		return false
	}
	sub.exited = true
	return true
}

// endSubmission records how sub ended and updates its agent (SPEC §4). p is
// its process, nil when startErr says why it could not start.
func (s *Supervisor) endSubmission(a *agent, sub *submission, p *proc, note, startErr string) {
	var code *int
	var sig string
	if p != nil {
		ex := p.Exit()
		code, sig = ex.Code, ex.Signal
		if startErr == "" {
			startErr = ex.Err
		}
	}
	s.expirePending(a, sub)
	s.countEnd(a, sub)
	s.endSteer(a, sub) // before the mailbox decides what starts next
	var oc *outcome
	var lastOutput string
	var used proto.Usage
	var inner []proto.InnerAgent
	if sub.tr != nil {
		oc = sub.tr.outcome()
		_, used = sub.tr.activity()
		inner = sub.tr.innerAgents(sub.seq)
		sub.memo.decide(oc, &used) // Memo's session file decides (SPEC §8)
		lastOutput = structuredLastOutput(oc, sub.out)
	} else {
		lastOutput = sub.out.LastOutput()
	}

	s.mu.Lock()
	lastError := failure(startErr, sub.reason, code, sig, oc)
	sub.endedAt = time.Now()
	sub.exitCode, sub.signal = code, sig
	if lastError == "" {
		sub.status = proto.StatusCompleted
	} else {
		sub.status = proto.StatusErrored
		sub.lastError = &lastError
	}
	if oc != nil && oc.sessionID != "" {
		a.sessionID = oc.sessionID
	}
	a.lastOutput = &lastOutput
	a.lastError = sub.lastError
	endNowLocked(a)
	a.updatedAt = sub.endedAt
	if a.running == sub {
		a.running = nil
	}
	a.usage.Add(used) // with a.running cleared: counted once, here from now on
	a.runCost, s.spent = a.runCost+used.CostUSD, s.spent+used.CostUSD
	a.inner = proto.AppendInner(a.inner, inner)
	s.lineMem.Keep(sub.out)
	var at *proto.Attention
	var next *submission // the queued messages' submission, started below
	nextErr := ""
	ended := false // the end is an item of the parent's mailbox (SPEC §14)
	var endedAs proto.TreeAgent
	switch {
	case a.status == proto.StatusClosed:
		a.beforeClose = sub.status
		ended = !sub.byParent
		endedAs = s.treeAgentLocked(a)
	case !a.replacing:
		a.status = sub.status
		s.tookFinalLocked(a)
		ended = !sub.byParent || sub.reason != "interrupted"
		endedAs = s.treeAgentLocked(a) // before a queued message runs again
		// Queued messages start now (SPEC §11), unless the host is ending
		// (they stay in the journal for the next host's agent) or the
		// submission was interrupted (they wait for the next one).
		if a.mailbox.HasQueued() && !s.shutdown && sub.reason != "interrupted" {
			var err error
			if next, err = s.newSubmissionLocked(a, nil); err != nil {
				nextErr = err.Error()
			}
		}
		if next == nil {
			at = s.needYouLocked(a, string(sub.status))
		}
	}
	ev := journal.Event{Event: "submission_ended", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
		ExitCode: code, Signal: sig, Status: sub.status, SessionID: a.sessionID, Note: note,
		LastOutput: copyStr(&lastOutput), LogDropped: sub.out.LogDropped(), InnerAgents: inner}
	if used != (proto.Usage{}) {
		ev.Usage = &used
	}
	if sub.lastError != nil {
		ev.LastError = *sub.lastError
	}
	a.ending = true
	s.mu.Unlock()

	s.journal.Write(ev)
	if nextErr != "" {
		s.journal.Write(journal.Event{Event: "mail_kept", AgentID: a.id, Note: "the queued messages were not started: " + nextErr})
		s.warn(fmt.Sprintf("agent %s: the queued messages were not started: %s", a.id, nextErr))
	}
	if ended {
		// before done: the operation that stopped it returns with the
		// item in its parent's mailbox
		s.putEnd(a, endedAs)
	}
	s.mu.Lock()
	a.ending = false
	s.mu.Unlock()
	close(sub.done)
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true, Output: true})
	s.announce(a.id, at)
	if next != nil {
		s.journalSent(a, next, "queued messages, started as the previous submission ended")
		_ = s.launch(a, next) // a start failure ends it as errored, as for send
	} else {
		s.startPending() // its slot is free
	}
}

// tookFinalLocked records the final status agent a just took, for the
// waits in flight (see agent.finals). Call with s.mu held.
func (s *Supervisor) tookFinalLocked(a *agent) {
	a.finals++
	d := s.detailLocked(a)
	a.lastFinal = &d
}

// The last_errors that say only how a submission's process ended, in
// subdash's words (failure): the row's "now" says the output's last line
// before them (endText).
const (
	signalFailure   = "submission killed by signal "
	exitFailure     = "submission failed with exit code "
	noResultFailure = "ended without a result"
	cliNoMessage    = "the agent CLI reported an error without a message"
)

// failure returns last_error for a submission that ended, or "" when it
// completed (SPEC §4 and, for structured output, §8: the final event decides,
// not the exit status alone).
func failure(startErr, reason string, code *int, sig string, oc *outcome) string {
	switch {
	case startErr != "":
		return startErr
	case reason != "":
		return reason
	case sig != "":
		return signalFailure + sig
	case oc != nil && oc.final && !oc.success:
		if oc.err == "" {
			return cliNoMessage
		}
		return oc.err
	case code != nil && *code != 0:
		return exitFailure + strconv.Itoa(*code)
	case oc != nil && !oc.final:
		return noResultFailure
	}
	return ""
}

// structuredLastOutput is last_output for a preset with structured output
// (SPEC §8): the final answer; when there is none, the tail of stderr, which
// is where a CLI that failed before its first event says why; and when
// stdout held no JSON event at all (the CLI printed its usage or version
// instead of its stream, e.g. wrong --preset-args), the stdout and stderr
// tails as for any command (SPEC §4).
func structuredLastOutput(oc *outcome, out *output.Output) string {
	if answer := strings.TrimRight(oc.answer, " \t\r\n"); answer != "" {
		return output.LastOutputOf(answer)
	}
	if !oc.events {
		return out.LastOutput()
	}
	return out.StderrOutput()
}

// submissionVars returns the submission's own variables (SPEC §2):
// SUBDASH_AGENT_ID, SUBDASH_SUBMISSION_ID, SUBDASH_SUBMISSION_SEQ and, unless
// nesting is allowed, MEMO_ENABLE_COLLAB_TOOLS=0, else SUBDASH_SOCKET (this
// host's control socket, whatever the host's own environment said), and
// SUBDASH_RUNNER with a runner other than local. The runner adds them to
// the environment it gives the submission (the local runner: the host's).
func (s *Supervisor) submissionVars(a *agent, sub *submission) []string {
	vars := []string{
		"SUBDASH_AGENT_ID=" + a.id,
		"SUBDASH_SUBMISSION_ID=" + sub.id,
		"SUBDASH_SUBMISSION_SEQ=" + strconv.Itoa(sub.seq),
	}
	if !s.cfg.AllowNested {
		vars = append(vars, "MEMO_ENABLE_COLLAB_TOOLS=0")
	} else if s.cfg.Socket != "" {
		vars = append(vars, socket.Env+"="+s.cfg.Socket) // its ctl and mcp reach this host
	}
	if s.cfg.RunnerName != runner.Local && s.cfg.RunnerName != "" { // where it runs (a pod), for the built-in agent's split
		vars = append(vars, runner.EnvRunner+"="+s.cfg.RunnerName)
	}
	if sub.memo != nil {
		vars = append(vars, "MEMO_HOME="+sub.memo.home)
	}
	return append(vars, steerVars(a, sub)...)
}
