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
	"github.com/subdash/subdash/supervisor/proto"
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
