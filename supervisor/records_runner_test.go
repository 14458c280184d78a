package supervisor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
)

// podRunner stands in for the Kubernetes runner: it counts the
// submissions given to it and starts none (the pod would say why).
type podRunner struct {
	starts atomic.Int32
	vars   atomic.Pointer[[]string] // of the latest submission
}

func (r *podRunner) Start(req runner.StartRequest) (runner.Process, error) {
	r.starts.Add(1)
	r.vars.Store(&req.Vars)
	return nil, errors.New("no pod in this test")
}
func (r *podRunner) Sweep(string) string             { return "" }
func (r *podRunner) Close(ctx context.Context) error { return nil }

// A restored agent of another runner is refused at the send, with the
// runner to start the host with, before a submission takes its mailbox
// (it was started, errored at once, and took the mailbox along); one of a
// host with --runner kubernetes is not looked for on this machine's PATH,
// as the pod's image holds its CLI (SPEC §10, §13).
func TestRestoredAgentOfAnotherRunner(t *testing.T) {
	start, _ := hostOf(t, evalCommand)
	s1 := start()
	id := spawn(t, s1, "sleep 30")
	if _, err := s1.Queue(t.Context(), id, "keep me"); err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Interrupt(t.Context(), id); err != nil { // keeps the queued message
		t.Fatal(err)
	}
	shutdownNow(t, s1)

	pods := &podRunner{}
	inPods := func(c *Config) {
		c.RunnerName, c.Runner, c.Command = runner.Kubernetes, pods, "agent-cli-only-in-the-image --fast"
	}
	s2 := start(inPods)
	_, err := s2.Send(t.Context(), id, "y", false)
	want := "agent " + id + " runs on the local runner; start the host with --runner local to continue it"
	if err == nil || err.Error() != want || proto.CodeOf(err) != proto.CodeInvalid {
		t.Fatalf("send to a local agent on a kubernetes host: %v, want %q", err, want)
	}
	info, _ := s2.Agent(id)
	if len(info.Submissions) != 1 || len(info.QueuedMessages) != 1 || pods.starts.Load() != 0 {
		t.Fatalf("after the refused send: %d submissions, queued %q, %d starts", len(info.Submissions), info.QueuedMessages, pods.starts.Load())
	}

	k := spawn(t, s2, "z") // errored: no pod
	waitFinal(t, s2, k)
	shutdownNow(t, s2)
	s3 := start(inPods)
	if _, err := s3.Send(t.Context(), k, "again", false); err != nil || pods.starts.Load() != 2 {
		t.Fatalf("send to a restored agent of the kubernetes runner: %v, %d starts (want it to reach the runner)", err, pods.starts.Load())
	}
	if d := waitFinal(t, s3, k); !strings.Contains(strOf(d.LastError), "no pod in this test") {
		t.Fatalf("last_error %q", strOf(d.LastError))
	}
}

// A submission on a runner other than local is told which (SPEC §2:
// SUBDASH_RUNNER), so the built-in agent's split says that its host is out
// of reach instead of asking for --allow-nested.
func TestSubmissionOnAnotherRunnerIsToldWhich(t *testing.T) {
	pods := &podRunner{}
	s := newTestSupervisor(t, "true", func(c *Config) { c.RunnerName, c.Runner = runner.Kubernetes, pods })
	waitFinal(t, s, spawn(t, s, "x"))
	if v := *pods.vars.Load(); !slices.Contains(v, "SUBDASH_RUNNER=kubernetes") {
		t.Fatalf("vars %q", v)
	}
	local := newTestSupervisor(t, "echo \"[$SUBDASH_RUNNER]\"")
	if d := waitFinal(t, local, spawn(t, local, "x")); strOf(d.LastOutput) != "[]" {
		t.Fatalf("on the local runner: %q", strOf(d.LastOutput))
	}
}
