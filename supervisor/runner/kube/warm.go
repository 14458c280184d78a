package kube

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
	"time"
)

// keepWarmPods makes the runner keep one warm pod from now on: a pod of
// the agent image, started before any agent needs it, so that an agent's
// first submission needs only its exec (about 0.1 s on the test cluster)
// instead of a pod start (scheduling, image, container; 0.3–5 s there and
// longer where images are pulled). One, not a pool of several: it covers
// agents spawned one at a time, as people and orchestrators mostly do, for
// the price of one idle pod per host; agents spawned faster than a pod
// starts get pods of their own, as without it. The warm pod carries the
// host's labels and annotation, so Close and the sweep of a later host
// delete it like an agent's pod (SPEC §13: nothing outlives the host).
func (r *Runner) keepWarmPods() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warmPods = true
	r.keepWarm()
}

// keepWarm starts a warm pod unless there is one, the runner keeps none or
// is closed, or the last warm pod could not start and no pod started since
// (a wrong image would otherwise cost a second failing pod per spawn).
// Called with r.mu held.
func (r *Runner) keepWarm() {
	if r.warm != nil || !r.warmPods || r.warmFailed || r.closed {
		return
	}
	p := r.newPod()
	r.warm = p
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		r.start(r.ctx, p, "")
	}()
}

// warmExec is an exec of the wrapper (exec.go) opened in the warm pod
// before any submission needs it: the exec's way through the API server,
// the kubelet and the container runtime takes 0.2–0.8 s on the test
// cluster, so the submission that claims the warm pod finds its streams
// open and the wrapper waiting for its header on stdin. Until claimed, its
// output is held (there is none: the wrapper only waits).
type warmExec struct {
	nonce  string
	stdin  *io.PipeWriter
	stdout *relay
	stderr *relay
	ready  chan struct{} // closed when the wrapper's ready token came
	done   chan struct{} // closed when the exec ended; err is then set
	err    error
	cancel context.CancelFunc
}

// warmExecWait bounds how long a submission waits for a claimed warm exec
// to be ready before it opens an exec of its own.
const warmExecWait = connectTimeout

// openWarmExec opens a warm exec in pod; it ends when the runner closes,
// or when the submission that claims it cancels it.
func (r *Runner) openWarmExec(pod string) *warmExec {
	ctx, cancel := context.WithCancel(r.ctx)
	stdin, w := io.Pipe()
	we := &warmExec{nonce: newNonce(), stdin: w, ready: make(chan struct{}), done: make(chan struct{}), cancel: cancel}
	we.stdout = &relay{token: []byte("\x1esubdash:" + we.nonce + ":ready\x1e"), onToken: func() { close(we.ready) }}
	we.stderr = &relay{}
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		we.err = r.exec(ctx, pod, []string{"/bin/sh", "-c", wrapper, "subdash-submission", we.nonce}, stdin, we.stdout, we.stderr)
		_ = stdin.Close() // a header or message still being written gets an error
		cancel()
		close(we.done)
	}()
	return we
}

// claim waits until the warm exec is ready and hands it to a submission:
// stdout and stderr go to its writers from now on. It reports false, and
// ends the exec, when it ended or was not ready within warmExecWait or
// before ctx ended: nothing of the submission ran in it, so the caller
// opens an exec of its own.
func (we *warmExec) claim(ctx context.Context, stdout, stderr io.Writer) bool {
	t := time.NewTimer(warmExecWait)
	defer t.Stop()
	select {
	case <-we.ready:
	case <-we.done:
	case <-t.C:
	case <-ctx.Done():
	}
	select {
	case <-we.done: // first: a select picks at random among closed channels
		return false
	default:
	}
	select {
	case <-we.ready:
		if ctx.Err() == nil {
			we.stdout.setTarget(stdout)
			we.stderr.setTarget(stderr)
			return true
		}
	default:
	}
	we.cancel()
	return false
}

func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// relay passes an exec's stream to its target once one is set, holding
// what came before. With a token, the stream's first bytes must be it: they
// are removed and onToken is called; any other first bytes are output.
type relay struct {
	mu      sync.Mutex
	token   []byte
	seen    int
	onToken func()
	target  io.Writer
	held    []byte
}

// Write implements io.Writer; it never fails.
func (r *relay) Write(b []byte) (int, error) {
	n := len(b)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen < len(r.token) {
		k := min(len(b), len(r.token)-r.seen)
		if !bytes.Equal(b[:k], r.token[r.seen:r.seen+k]) {
			r.held = append(r.held, r.token[:r.seen]...) // not the token after all
			r.token = nil
		} else {
			r.seen += k
			b = b[k:]
			if r.seen == len(r.token) {
				r.onToken()
			}
		}
	}
	if r.target == nil {
		r.held = append(r.held, b...)
		return n, nil
	}
	if len(b) > 0 {
		_, _ = r.target.Write(b)
	}
	return n, nil
}

// setTarget sends what was held, then every later write, to w.
func (r *relay) setTarget(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.target = w
	if len(r.held) > 0 {
		_, _ = w.Write(r.held)
		r.held = nil
	}
}
