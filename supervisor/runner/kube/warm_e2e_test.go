package kube

import (
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

// End-to-end tests of the warm pod's exec (warm.go), against the cluster of
// KUBECONFIG as in e2e_test.go.

// readyWarmExec waits until s's runner has a warm pod whose warm exec is
// ready, and returns both.
func readyWarmExec(t *testing.T, s *supervisor.Supervisor) (*agentPod, *warmExec) {
	t.Helper()
	r := s.Config().Runner.(*Runner)
	w := testkit.Poll(t, 60*time.Second, "a warm pod with a ready warm exec", func() (*agentPod, bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.warm == nil || r.warm.exec == nil {
			return nil, false
		}
		select {
		case <-r.warm.exec.ready:
			return r.warm, true
		default:
			return nil, false
		}
	})
	return w, w.exec
}

// TestWarmExecCarriesTheSubmission: a new agent's first submission runs in
// the warm pod's exec that was open before it came; the command (with a
// backslash and a newline), the submission's variables and the message
// (every byte, then EOF) reach it as through an exec of its own.
func TestWarmExecCarriesTheSubmission(t *testing.T) {
	image, node := testCluster(t)
	command := "cat; printf '%s|%s|%s\\n' \"$SUBDASH_AGENT_ID\" \"$SUBDASH_SUBMISSION_SEQ\" \"$MEMO_ENABLE_COLLAB_TOOLS\"\necho 'back\\nslash \\\\ two'; exit 4"
	s := newHost(t, command, image, node, time.Second)
	warm, we := readyWarmExec(t, s)
	message := "first line\nsecond \\n line with a backslash"
	sp, err := s.Spawn(t.Context(), message)
	if err != nil {
		t.Fatal(err)
	}
	d := waitFinal(t, s, sp.AgentID)
	want := message + "\n" + sp.AgentID + "|1|0\nback\\nslash \\\\ two"
	if got, _ := s.Logs(sp.AgentID, 0); d.Status != proto.StatusErrored || got != want+"\n" || str(d.LastError) != "submission failed with exit code 4" {
		t.Fatalf("status %s, last_error %q, log %q; want errored with exit code 4 and log %q", d.Status, str(d.LastError), got, want+"\n")
	}
	if info, _ := s.Agent(sp.AgentID); info.Pod != warm.name {
		t.Fatalf("the agent runs in pod %s, not in the warm pod %s", info.Pod, warm.name)
	}
	we.stdout.mu.Lock()
	claimed := we.stdout.target != nil
	we.stdout.mu.Unlock()
	if !claimed {
		t.Fatal("the submission did not run in the warm exec")
	}
}

// TestLostWarmExecFallsBack: a warm exec that ended before the spawn (a
// dropped connection) is not used; the submission opens its own exec in
// the warm pod and runs normally.
func TestLostWarmExecFallsBack(t *testing.T) {
	image, node := testCluster(t)
	s := newHost(t, evalCommand, image, node, time.Second)
	warm, we := readyWarmExec(t, s)
	we.cancel()
	<-we.done
	sp, err := s.Spawn(t.Context(), "echo own-exec")
	if err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, sp.AgentID); d.Status != proto.StatusCompleted || str(d.LastOutput) != "own-exec" {
		t.Fatalf("status %s, last_output %q, last_error %q; want completed with own-exec", d.Status, str(d.LastOutput), str(d.LastError))
	}
	if info, _ := s.Agent(sp.AgentID); info.Pod != warm.name {
		t.Fatalf("the agent runs in pod %s, not in the warm pod %s", info.Pod, warm.name)
	}
}
