package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/stall"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/termtext"
)

// notifyTimeout is how long one run of --notify-command may take before
// its process group is killed. A variable only so that a test can lower it.
var notifyTimeout = 10 * time.Second

// Bounds of --notify-command (SPEC §11).
const (
	// notifyOutput is how much of its stdout and stderr reaches the
	// journal, in bytes; the rest is read and counted, not kept.
	notifyOutput = 4 << 10
	// notifyBacklog is how many transitions may wait for the command; more
	// are dropped (and the journal says so) rather than piling up behind a
	// slow command.
	notifyBacklog = 64
)

// notifyJob is one transition to announce.
type notifyJob struct {
	agentID string
	at      proto.Attention
}

// notifier runs --notify-command once per transition, one run at a time,
// off every caller's goroutine: /bin/sh -c CMD in the agents' working
// directory, in its own process group, with SUBDASH_AGENT_ID,
// SUBDASH_STATUS and SUBDASH_MESSAGE (the short cleaned Attention.Text) in
// its environment and never in its command line. Its output goes to the
// journal, cut at notifyOutput bytes; a run is killed after notifyTimeout.
// The first failure reaches the screen as a warning (Config().Warnings and
// a Change carrying it); every failure is in the journal.
type notifier struct {
	s       *Supervisor
	jobs    chan notifyJob
	done    chan struct{}
	stop    context.CancelFunc
	ctx     context.Context
	mu      sync.Mutex
	failed  bool // a failure was reported to the screen
	dropped bool // a dropped transition was reported to the journal
}

func newNotifier(s *Supervisor) *notifier {
	n := &notifier{s: s, jobs: make(chan notifyJob, notifyBacklog), done: make(chan struct{})}
	n.ctx, n.stop = context.WithCancel(context.Background())
	go n.loop()
	return n
}

// notify queues one run for agent id's transition; it never blocks.
func (n *notifier) notify(id string, at *proto.Attention) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ctx.Err() != nil {
		return
	}
	select {
	case n.jobs <- notifyJob{agentID: id, at: *at}:
	default:
		if !n.dropped {
			n.dropped = true
			n.s.journal.Write(journal.Event{Event: "notify_dropped", AgentID: id,
				Note: fmt.Sprintf("more than %d notifications waiting for --notify-command; dropping the newest", notifyBacklog)})
		}
	}
}

// close ends the notifier: a run in progress is killed, waiting ones are
// dropped. It returns once its goroutine ended.
func (n *notifier) close() {
	n.mu.Lock()
	if n.ctx.Err() == nil {
		n.stop()
		close(n.jobs)
	}
	n.mu.Unlock()
	<-n.done
}

func (n *notifier) loop() {
	defer close(n.done)
	for job := range n.jobs {
		if n.ctx.Err() != nil {
			continue
		}
		n.run(job)
	}
}

// run runs the command once for job and records how it went.
func (n *notifier) run(job notifyJob) {
	cfg := n.s.cfg
	cmd := exec.Command("/bin/sh", "-c", cfg.NotifyCommand)
	cmd.Dir = cfg.Dir
	cmd.Env = append(withoutKeys(cfg.Environ, "SUBDASH_AGENT_ID", "SUBDASH_STATUS", "SUBDASH_MESSAGE"),
		"SUBDASH_AGENT_ID="+job.agentID,
		"SUBDASH_STATUS="+job.at.Reason,
		"SUBDASH_MESSAGE="+job.at.Text)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out := &cappedBuffer{max: notifyOutput}
	cmd.Stdout, cmd.Stderr = out, out
	// A background process that keeps the pipes open must not hold us.
	cmd.WaitDelay = time.Second
	ev := journal.Event{Event: "notify_command", AgentID: job.agentID, Status: proto.Status(job.at.Reason), Command: cfg.NotifyCommand}
	var err error
	if err = cmd.Start(); err == nil {
		ev.PID = cmd.Process.Pid
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		timer := time.NewTimer(notifyTimeout)
		select {
		case err = <-waited:
		case <-timer.C:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-waited //nolint:errcheck // SIGKILL's wait status: err says why
			err = fmt.Errorf("still running after %s; killed", notifyTimeout)
		case <-n.ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-waited //nolint:errcheck // SIGKILL's wait status: err says why
			err = errors.New("killed: the host is ending")
		}
		timer.Stop()
		// Whatever it left in its process group goes too.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	ev.Note = out.String()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			code := ee.ExitCode()
			ev.ExitCode = &code
		}
		ev.LastError = err.Error()
	}
	n.s.journal.Write(ev)
	if err != nil && n.ctx.Err() == nil {
		n.reportOnce(err, out.String())
	}
}

// reportOnce shows the first failure of the command on every dashboard.
func (n *notifier) reportOnce(err error, output string) {
	n.mu.Lock()
	first := !n.failed
	n.failed = true
	n.mu.Unlock()
	if !first {
		return
	}
	msg := fmt.Sprintf("--notify-command failed: %v", err)
	if o := termtext.OneLine(output, 120); o != "" {
		msg += ": " + o
	}
	msg += "; later failures are only in the journal (" + n.s.runDir + "/journal.jsonl); check the command"
	n.s.warn(msg)
}

// warn adds a warning found while running: Config().Warnings lists it from
// now on, and subscribers get it once in a Change.
func (s *Supervisor) warn(msg string) {
	s.mu.Lock()
	s.warnings = append(s.warnings, msg)
	s.mu.Unlock()
	s.hub.Publish(proto.Change{Warnings: []string{msg}})
}

// spaceChanged is told by the free-space floor that logging paused or
// resumed (SPEC §5): a warning on the host's screen and every viewer's
// (stderr for serve and mcp); each agent's log pane says it too where its
// output is held back.
func (s *Supervisor) spaceChanged(paused bool, why string) {
	if paused {
		s.warn("logging paused: " + why + "; the agents keep running and their output shows on screen, but it is not written to their log files until space returns (free some, or move --state-dir); the journal still writes")
		return
	}
	s.warn("logging resumed: the filesystem of " + s.cfg.StateDir + " has space again; each log pane and log file says how much output is missing")
}

// cappedBuffer keeps the first max bytes written to it and counts the rest.
type cappedBuffer struct {
	mu    sync.Mutex
	b     []byte
	max   int
	extra int64
}

// Write keeps what fits and always reports success, so the writer's pipe
// is drained.
func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - len(c.b)
	if room > len(p) {
		room = len(p)
	}
	c.b = append(c.b, p[:room]...)
	c.extra += int64(len(p) - room)
	return len(p), nil
}

// String returns what was kept, with a note of what was not.
func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.ToValidUTF8(string(c.b), "\uFFFD")
	if c.extra > 0 {
		s += fmt.Sprintf("...[%d more bytes not kept]", c.extra)
	}
	return s
}

// withoutKeys returns env without the variables named keys.
func withoutKeys(env []string, keys ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, key := range keys {
			drop = drop || k == key
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// Attention (SPEC §11): who needs the user; announce runs the notify
// command above.

// needYouLocked marks agent a as needing the user for reason (SPEC §11)
// and returns the attention to announce. Call with s.mu held, then, after
// unlocking, publish a Change for a and call s.announce with the result.
//
// This is the hook for approvals (SPEC §12): a pending approval request
// marks its agent with reason "approval" through it, and the
// dashboards, the status line, the jump key, notifications and
// --notify-command all follow. A host that is shutting down marks nothing.
func (s *Supervisor) needYouLocked(a *agent, reason string) *proto.Attention {
	if s.shutdown {
		return nil
	}
	s.attentionSeq++
	at := &proto.Attention{Reason: reason, Since: proto.Time{Time: time.Now()}, Seq: s.attentionSeq, Text: attentionText(a, reason)}
	a.needsYou = at
	return at
}

// announce runs the notify command for a transition (nil: none).
func (s *Supervisor) announce(id string, at *proto.Attention) {
	if at != nil && s.notifier != nil {
		s.notifier.notify(id, at)
	}
}

// MarkSeen records that the user looked at agent id (selected it in a
// dashboard): it no longer needs you (SPEC §11). Marking an agent that
// does not need you changes nothing. The result is the agent's id and
// status. Errors: "agent not found: <id>".
func (s *Supervisor) MarkSeen(_ context.Context, id string) (proto.StatusResult, error) {
	s.mu.Lock()
	a, err := s.lookup(id)
	if err != nil {
		s.mu.Unlock()
		return proto.StatusResult{}, err
	}
	was := a.needsYou
	a.needsYou = nil
	res := proto.StatusResult{AgentID: a.id, Status: a.status}
	s.mu.Unlock()
	if was != nil {
		s.hub.Publish(proto.Change{AgentID: a.id, Agent: true})
	}
	return res, nil
}

// attentionText is the short summary of why agent a needs you, e.g.
// "agent 3fa2c1d0 errored (submission failed with exit code 2): fix the
// tests". Call with s.mu held.
func attentionText(a *agent, reason string) string {
	head := "agent " + termtext.ShortID(a.id) + " " + reason
	switch {
	case reason == string(proto.StatusErrored) && a.lastError != nil:
		head += " (" + *a.lastError + ")"
	case reason == proto.ReasonStalled:
		head += " (no output, no event and no CPU time)"
	}
	return termtext.OneLine(head+": "+a.lastMessage, proto.MaxAttentionText)
}

func copyAttention(at *proto.Attention) *proto.Attention {
	if at == nil {
		return nil
	}
	v := *at
	return &v
}

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
