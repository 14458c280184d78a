package supervisor

import (
	"time"

	"github.com/subdash/subdash/supervisor/internal/steer"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// A stop of a submission (interrupt, send with interrupt, close, quit,
// --timeout) takes one road whatever asked for it (SPEC §4): the agent
// CLI's own interrupt first, where it takes one on its stdin, then the
// process group. A signal to the whole group kills the CLI's running tool
// too, and a CLI that outlives it for a moment may send that result to
// the model: claude does on SIGTERM during a long tool call (its Bash tool
// reports "Exit code 137", and the model's reply is billed), while its
// interrupt ends the turn with no further model call. codex's app-server
// takes turn/interrupt (codex.go), which leaves the turn's commands alive
// until the app-server ends: its stdin closes at the interrupted turn's
// end. codex exec, gemini and the built-in agent take SIGTERM as their
// interrupt and start no model call on it.

// stopRequested reports whether a stop (interrupt, close, quit, time limit)
// was requested for sub.
func (sub *submission) stopRequested() bool {
	select {
	case <-sub.stopCh:
		return true
	default:
		return false
	}
}

// requestStop asks the run goroutine of sub to stop it with the given
// reason (SPEC §4): the agent CLI's own interrupt is written at once where
// it takes one (interruptCLILocked), a note marks the stop in the log pane
// and the transcript, and pending approvals are denied; run then
// terminates the process group. The first reason wins, and a submission
// whose main process already ended by itself keeps its own outcome. It
// returns at once.
func (s *Supervisor) requestStop(a *agent, sub *submission, reason string) {
	s.mu.Lock()
	first := sub.reason == "" && sub.endedAt.IsZero() && !sub.exited
	if first {
		sub.reason = reason
		a.updatedAt = time.Now()
	}
	s.mu.Unlock()
	if !first {
		return
	}
	// before the interrupt, so that all its answer comes after the note
	sub.note("stopped ("+reason+"): what follows arrived after the stop", transcript.KindNote)
	s.mu.Lock()
	sub.interrupted = s.interruptCLILocked(a, sub)
	s.mu.Unlock()
	s.denyPending(a, sub, reason)
	close(sub.stopCh)
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
}

// cliInterrupted reports whether the agent CLI of sub was sent its own
// interrupt (requestStop).
func (s *Supervisor) cliInterrupted(sub *submission) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sub.interrupted
}

// interruptCLILocked asks the agent CLI of sub to stop its turn with its
// own interrupt on its stdin and ends that stdin, so that the CLI ends
// without starting another model call; it reports whether the interrupt
// was written. claude takes one (transcript.ClaudeInterrupt), and codex's
// app-server (appserver.Driver.Interrupt: turn/interrupt, stdin closing at
// the turn's end); a submission whose stdin closed already (its last turn
// ended: the CLI is ending by itself) gets none. The steer book closes too, so a message
// steered from now on is queued, not written behind the interrupt. Call
// with s.mu held (Steer writes stdin under it).
func (s *Supervisor) interruptCLILocked(a *agent, sub *submission) bool {
	if sub.codex != nil { // turn/interrupt, stdin closing at the turn's end
		sub.steer.book.Close()
		return sub.codex.Interrupt()
	}
	q := sub.stdinQueue()
	if q == nil || a.preset.name() != "claude" {
		return false
	}
	if sub.steer != nil {
		sub.steer.book.Close()
	}
	ok := q.Write(transcript.ClaudeInterrupt("subdash-stop-" + sub.id))
	q.Close()
	return ok
}

// stdinQueue is the stream-json stdin of sub (steering, approvals: one
// queue when both), nil for a submission whose stdin takes only its
// message.
func (sub *submission) stdinQueue() *steer.Stdin {
	switch {
	case sub.steer != nil:
		return sub.steer.stdin
	case sub.appr != nil:
		return sub.appr.stdin
	}
	return nil
}

// terminate ends what sub's process p still runs after a stop (SPEC §4).
// An agent CLI that was sent its own interrupt gets the grace period to
// end by it; what is left of its group then gets SIGTERM for the rest of
// that period, then SIGKILL. A CLI still running when the period ends (or
// SkipGrace cuts it) gets SIGKILL at once, never a SIGTERM it might answer
// with another model call. Any other submission's group gets SIGTERM, and
// SIGKILL after the grace period. The error says what survived.
func (s *Supervisor) terminate(sub *submission, p *proc) error {
	if !s.cliInterrupted(sub) {
		return p.Terminate(s.cfg.Grace, s.cut)
	}
	start := time.Now()
	t := time.NewTimer(s.cfg.Grace)
	defer t.Stop()
	select {
	case <-p.Exited():
		return p.Terminate(max(0, s.cfg.Grace-time.Since(start)), s.cut)
	case <-t.C:
	case <-s.cut:
	}
	return p.Kill()
}
