package supervisor

import (
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/stall"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
)

// watchStalls applies the stall rule (SPEC §11 "Stalled") every
// stall.Interval to the running submissions, with one reading of /proc
// for all of them where the runner is a runner.CPUMeter, until Shutdown
// ended every submission. New starts it unless --stall-after is 0.
func (s *Supervisor) watchStalls() {
	t := time.NewTicker(stall.Interval(s.cfg.StallAfter))
	defer t.Stop()
	var cpu stall.CPU
	if m, ok := s.cfg.Runner.(runner.CPUMeter); ok {
		cpu = m.GroupCPU
	}
	warned := false // that /proc cannot be read, once
	for {
		select {
		case <-s.stopped:
			return
		case now := <-t.C:
			if err := stall.CheckAll(now, s.cfg.StallAfter, s.watched(), cpu); err != nil && !warned {
				warned = true
				s.warn("the stall rule cannot read the CPU time of process groups (" + err.Error() + "); it counts output and events only")
			}
		}
	}
}

// watched lists the running submissions the stall rule checks: not
// those not started yet, or ending. It takes s.mu.
func (s *Supervisor) watched() []stall.Watched {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ws []stall.Watched
	for _, a := range s.order {
		sub := a.running
		if sub == nil || sub.proc == nil || sub.reason != "" || sub.exited {
			continue
		}
		ws = append(ws, stall.Watched{Clock: sub.clock, PGID: sub.proc.pgid, Paused: sub.appr != nil && len(sub.appr.pending) > 0,
			Stalled: func() { s.stalled(a, sub) }, Cleared: func() { s.unstall(a, sub) }})
	}
	return ws
}

// stalled marks agent a, whose running submission sub just turned
// stalled, as needing you once (reason stalled), unless it already does.
func (s *Supervisor) stalled(a *agent, sub *submission) {
	s.mu.Lock()
	var at *proto.Attention
	if a.running == sub && a.needsYou == nil {
		at = s.needYouLocked(a, proto.ReasonStalled)
	}
	s.mu.Unlock()
	s.journal.Write(journal.Event{Event: "stalled", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq,
		Note: "no output, no event and no CPU time for " + proto.FormatDuration(s.cfg.StallAfter)})
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	s.announce(a.id, at)
}

// unstall says that agent a's stalled submission sub showed a sign of
// life: its clock cleared the mark; the needs-you the stall raised goes.
func (s *Supervisor) unstall(a *agent, sub *submission) {
	s.mu.Lock()
	if a.running == sub && a.needsYou != nil && a.needsYou.Reason == proto.ReasonStalled {
		a.needsYou = nil
	}
	s.mu.Unlock()
	s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
}
