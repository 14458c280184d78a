package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/subdash/subdash/supervisor/runner"
)

// Start implements runner.Runner: it returns at once; the pod is
// created or reused, and the exec started, in the background.
func (r *Runner) Start(req runner.StartRequest) (runner.Process, error) {
	if r.rc == nil {
		return nil, errors.New("the Kubernetes runner has no cluster connection to run commands in pods")
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{r: r, req: req, ctx: ctx, cancel: cancel,
		exited: make(chan struct{}), streamsDone: make(chan struct{}), execing: make(chan struct{})}
	p.useNonce(newNonce())
	go p.run()
	return p, nil
}

// process is one submission: an exec in its agent's pod
// (runner.Process).
type process struct {
	r      *Runner
	req    runner.StartRequest
	nonce  string
	ctx    context.Context
	cancel context.CancelFunc
	stderr *markerFilter

	exitOnce    sync.Once
	exited      chan struct{}
	exit        runner.Exit
	streamsDone chan struct{} // closed when the exec ended (or never started)
	execing     chan struct{} // closed when the exec starts
	selfEnded   atomic.Bool   // the wrapper reported the main process's end
	left        atomic.Int64  // processes it left, as the wrapper counted
	lastRead    atomic.Int64
	assigned    atomic.Pointer[agentPod] // its pod, once chosen
	pod         atomic.Pointer[agentPod] // its pod, once running
}

func (p *process) out(s runner.Stream, b []byte) {
	p.lastRead.Store(time.Now().UnixNano())
	p.req.Output(s, b)
}

// finish records how the main process ended, once.
func (p *process) finish(e runner.Exit) {
	p.exitOnce.Do(func() {
		p.exit = e
		close(p.exited)
	})
}

// mainEnded handles the wrapper's marker.
func (p *process) mainEnded(status, left int) {
	p.left.Store(int64(left))
	p.selfEnded.Store(true)
	p.finish(exitOf(status))
}

func (p *process) run() {
	defer close(p.streamsDone)
	ap, err := p.r.ensurePod(p.ctx, p.req.AgentID, func(ap *agentPod) {
		p.assigned.Store(ap)
		if p.req.Placed != nil {
			p.req.Placed(runner.Place{Pod: ap.name})
		}
	})
	if err != nil {
		if p.ctx.Err() != nil {
			p.finish(runner.Exit{}) // stopped while its pod was starting
		} else {
			p.finish(runner.Exit{Err: err.Error()})
		}
		return
	}
	p.pod.Store(ap)
	if p.req.Placed != nil {
		p.req.Placed(runner.Place{Pod: ap.name, Node: ap.node})
	}
	go p.label(ap.name)
	close(p.execing)
	err = p.exec(ap)
	p.stderr.flush()
	if status, ok := exitStatus(err); ok {
		p.finish(exitOf(status))
		return
	}
	if p.ctx.Err() != nil {
		p.finish(runner.Exit{})
		return
	}
	if _, gerr := p.r.cs.CoreV1().Pods(p.r.ns).Get(context.Background(), ap.name, metav1.GetOptions{}); apierrors.IsNotFound(gerr) {
		p.r.forget(p.req.AgentID, ap)
		p.finish(runner.Exit{Err: "pod " + ap.name + " is gone (deleted or evicted); the next submission starts a new one"})
		return
	}
	p.finish(runner.Exit{Err: "lost the submission's stream from pod " + ap.name + ": " + err.Error()})
}

// exec runs the submission in pod ap: in the warm exec that came with the
// pod when it has one that is ready, else in an exec of its own; it
// returns how the exec ended (Runner.exec).
func (p *process) exec(ap *agentPod) error {
	stdout := writerFunc(func(b []byte) { p.out(runner.Stdout, b) })
	if we := p.r.takeExec(ap); we != nil {
		p.useNonce(we.nonce)
		if we.claim(p.ctx, stdout, p.stderr) {
			stop := context.AfterFunc(p.ctx, we.cancel)
			defer stop()
			go func() {
				if _, err := io.WriteString(we.stdin, header(p.req.Command, p.req.Vars)); err == nil {
					p.req.Stdin(we.stdin)
				}
			}()
			<-we.done
			return we.err
		}
		p.useNonce(newNonce())
	}
	args := append([]string{"/bin/sh", "-c", wrapper, "subdash-submission", p.nonce, p.req.Command}, p.req.Vars...)
	stdin, feed := io.Pipe()
	go p.req.Stdin(feed)
	defer stdin.Close() //nolint:errcheck // io.PipeReader.Close always returns nil; a feed still writing (approvals) gets an error
	return p.r.exec(p.ctx, ap.name, args, stdin, stdout, p.stderr)
}

// useNonce makes nonce the one of the wrapper's end marker, before the
// exec's stderr is read.
func (p *process) useNonce(nonce string) {
	p.nonce = nonce
	p.stderr = newMarkerFilter([]byte("\x1esubdash:"+nonce+":exit:"), func(b []byte) { p.out(runner.Stderr, b) }, p.mainEnded)
}

// label names the agent (a claimed warm pod has no agent label yet) and
// the running submission on the pod (SPEC §13), best effort.
func (p *process) label(pod string) {
	_ = p.r.label(pod, p.req.AgentID, p.req.SubmissionID)
}

// Exited implements runner.Process.
func (p *process) Exited() <-chan struct{} { return p.exited }

// Exit implements runner.Process.
func (p *process) Exit() runner.Exit {
	select {
	case <-p.exited:
		return p.exit
	default:
		return runner.Exit{}
	}
}

// Lingers reports whether the main process ended but left processes (the
// wrapper counted them) or something still holds the exec's streams.
func (p *process) Lingers() bool {
	if p.left.Load() > 0 {
		return true
	}
	if p.selfEnded.Load() {
		return false // the wrapper, the last holder of the streams, is ending
	}
	select {
	case <-p.streamsDone:
		return false
	default:
		return true
	}
}

// WaitQuiet implements runner.Process.
func (p *process) WaitQuiet(quiet time.Duration) {
	runner.WaitQuiet(&p.lastRead, p.streamsDone, quiet)
}

// Terminate ends every process of the submission in the pod (SPEC §13):
// SIGTERM to all, SIGKILL after grace rounded up to whole seconds (at once
// when cut closes). A submission whose pod is still starting is given up.
// When the pod cannot be reached to do so, the pod itself is deleted (its
// grace period, then SIGKILL), so nothing outlives the submission.
func (p *process) Terminate(grace time.Duration, cut <-chan struct{}) error {
	secs, _ := wholeSeconds(grace)
	return p.end(secs*10, cut)
}

// Kill implements runner.Process: SIGKILL at once to every process of the
// submission in the pod (the killer without its SIGTERM); when the pod
// cannot be reached, the pod is deleted as Terminate deletes it.
func (p *process) Kill() error { return p.end(-1, nil) }

// end ends every process of the submission in the pod: with tenths >= 0,
// SIGTERM, then SIGKILL after tenths of a second (at once when cut
// closes); with tenths < 0, SIGKILL at once (Terminate, Kill).
func (p *process) end(tenths int64, cut <-chan struct{}) error {
	select {
	case <-p.execing:
	default:
		p.cancel()
		select {
		case <-p.execing:
		case <-p.streamsDone:
			return nil
		}
	}
	if p.selfEnded.Load() && p.left.Load() == 0 {
		// ended by itself and left nothing: the streams end with the
		// wrapper
		select {
		case <-p.streamsDone:
			return nil
		case <-time.After(drainWait):
		}
	}
	ap := p.pod.Load()
	res := make(chan error, 2)
	go func() { res <- p.kill(ap.name, tenths) }()
	var err error
	select {
	case err = <-res:
	case <-cut:
		go func() { res <- p.kill(ap.name, min(tenths, 0)) }()
		err = <-res
	}
	if err == nil {
		return nil
	}
	// The pod cannot be reached to signal the processes: delete it.
	p.r.forget(p.req.AgentID, ap)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(p.r.graceSec)*time.Second+deleteWait)
	defer cancel()
	if derr := p.r.deletePod(ctx, ap.name, true); derr != nil {
		return fmt.Errorf("cannot terminate the submission in pod %s (%v), nor delete the pod: %v", ap.name, err, derr)
	}
	return nil
}

// kill runs the killer in the pod with the grace period in tenths of a
// second (below 0: SIGKILL at once); an error means the pod could not be
// reached, or processes survived SIGKILL.
func (p *process) kill(pod string, tenths int64) error {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(max(tenths, 0))*100*time.Millisecond+killWait+connectTimeout)
	defer cancel()
	err := p.r.exec(ctx, pod, []string{"/bin/sh", "-c", killer, "subdash-terminate", p.req.SubmissionID, strconv.FormatInt(tenths, 10)},
		nil, &out, io.Discard)
	if err != nil {
		if _, gerr := p.r.cs.CoreV1().Pods(p.r.ns).Get(context.Background(), pod, metav1.GetOptions{}); apierrors.IsNotFound(gerr) {
			return nil // the pod is gone, and with it every process
		}
		return err
	}
	if s := strings.TrimSpace(out.String()); s != "" {
		return fmt.Errorf("processes %s of the submission in pod %s survived SIGKILL", strings.TrimPrefix(s, "survived "), pod)
	}
	return nil
}

// TerminateEscapees is 0: Terminate reaches every process of the
// submission in the container, whatever its process group.
func (p *process) TerminateEscapees(time.Duration, <-chan struct{}) int { return 0 }

// Drain waits for the exec's streams to end, for at most drainWait: after
// Terminate nothing of the submission holds them.
func (p *process) Drain() {
	select {
	case <-p.streamsDone:
	case <-time.After(drainWait):
		p.cancel()
		<-p.streamsDone
	}
	p.cancel()
}

// Place implements runner.Process.
func (p *process) Place() runner.Place {
	if ap := p.pod.Load(); ap != nil {
		return runner.Place{Pod: ap.name, Node: ap.node}
	}
	if ap := p.assigned.Load(); ap != nil {
		return runner.Place{Pod: ap.name} // starting: no node yet
	}
	return runner.Place{}
}
