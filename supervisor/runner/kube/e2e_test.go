package kube

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
)

// End-to-end tests against a real cluster: they run only when KUBECONFIG
// names a reachable cluster (../shared/tools/k8s builds one on this kind
// of machine) and are skipped with the reason otherwise, also under
// SUBDASH_REQUIRE_TOOLS=1: CI has no cluster. SUBDASH_KUBE_TEST_IMAGE and
// SUBDASH_KUBE_TEST_NODE default to the test cluster's image and node.

func init() { runner.Register(runner.Kubernetes, Factory) }

// evalCommand runs the message's first line as a shell script; the rest of
// stdin (EOF) is the script's.
const evalCommand = `IFS= read -r m; eval "$m"`

// testCluster skips t unless KUBECONFIG names a reachable cluster, and
// returns the image and node to use.
func testCluster(t testing.TB) (image, node string) {
	t.Helper()
	if os.Getenv("KUBECONFIG") == "" {
		t.Skip("KUBECONFIG is not set: the Kubernetes end-to-end tests need a cluster (see ../shared/tools/k8s)")
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		t.Skipf("KUBECONFIG names no usable cluster (%v): skipping the Kubernetes end-to-end tests", err)
	}
	rc.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(rc)
	if err == nil {
		_, err = cs.Discovery().ServerVersion()
	}
	if err != nil {
		t.Skipf("the cluster of KUBECONFIG is not reachable (%v): skipping the Kubernetes end-to-end tests", err)
	}
	image, node = os.Getenv("SUBDASH_KUBE_TEST_IMAGE"), os.Getenv("SUBDASH_KUBE_TEST_NODE")
	if image == "" {
		image = "localhost/busybox:local"
	}
	if node == "" {
		if _, err := cs.CoreV1().Nodes().Get(context.Background(), "k8s-test-node", metav1.GetOptions{}); err == nil {
			node = "k8s-test-node"
		}
	}
	return image, node
}

// newHost starts a host with the Kubernetes runner and ends it (deleting
// its pods) when the test ends.
func newHost(t testing.TB, command, image, node string, grace time.Duration) *supervisor.Supervisor {
	t.Helper()
	s, err := supervisor.New(hostConfig(t.TempDir(), command, image, node, grace))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

func hostConfig(state, command, image, node string, grace time.Duration) supervisor.Config {
	return supervisor.Config{Command: command, StateDir: state, Dir: state, Grace: grace, MaxAgents: 60,
		Environ: os.Environ(), RunnerName: runner.Kubernetes,
		Kube: runner.KubeOptions{Image: image, Node: node, StartTimeout: time.Minute}}
}

func waitFinal(t *testing.T, s *supervisor.Supervisor, id string) proto.WaitDetail {
	t.Helper()
	ms := proto.MaxWaitTimeoutMS
	res, err := s.Wait(context.Background(), []string{id}, &ms)
	if err != nil || res.TimedOut {
		t.Fatalf("wait %s: %v, timed out %v", id, err, res.TimedOut)
	}
	return res.Details[id]
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// waitLogs polls the latest submission's log of id until it holds want.
func waitLogs(t *testing.T, s *supervisor.Supervisor, id, want string, d time.Duration) {
	t.Helper()
	testkit.Poll(t, d, fmt.Sprintf("%q in the log", want), func() (string, bool) {
		got, _ := s.Logs(id, 0)
		return got, strings.Contains(got, want)
	})
}

// leftInPod counts the live processes of submission subID in agent id's
// pod, as the killer finds them.
func leftInPod(t *testing.T, s *supervisor.Supervisor, id, subID string) int {
	t.Helper()
	r := s.Config().Runner.(*Runner)
	info, _ := s.Agent(id)
	var out bytes.Buffer
	script := `n=0; for d in /proc/[0-9]*; do s=; { read -r s < $d/stat; } 2>/dev/null || continue; case ${s##*) } in Z*|X*) continue;; esac; tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qx "SUBDASH_SUBMISSION_ID=$1" && n=$((n+1)); done; echo $n`
	if err := r.exec(context.Background(), info.Pod, []string{"/bin/sh", "-c", script, "count", subID}, nil, &out, os.Stderr); err != nil {
		t.Fatalf("counting processes in pod %s: %v", info.Pod, err)
	}
	var n int
	_, _ = fmt.Sscan(out.String(), &n)
	return n
}

func latest(t *testing.T, s *supervisor.Supervisor, id string) proto.SubmissionInfo {
	t.Helper()
	info, ok := s.Agent(id)
	if !ok || len(info.Submissions) == 0 {
		t.Fatalf("agent %s has no submission", id)
	}
	return info.Submissions[len(info.Submissions)-1]
}

// TestCasesOnKubernetes runs the process cases H08–H13 and H15 of
// ../shared/cases/README.md as submissions of one agent in its pod, and the
// operations around them: spawn, wait, send with and without interrupt,
// close, resume.
func TestCasesOnKubernetes(t *testing.T) {
	image, node := testCluster(t)
	s := newHost(t, evalCommand, image, node, time.Second)

	// H08: last line without newline; exit 3 → errored
	sp, err := s.Spawn(t.Context(), `printf 'partial-line-no-newline'; sleep 3; printf ' ...finished'; exit 3`)
	if err != nil {
		t.Fatal(err)
	}
	id := sp.AgentID
	waitLogs(t, s, id, "partial-line-no-newline", 60*time.Second)
	if info, _ := s.Agent(id); info.Status != proto.StatusRunning || info.Pod == "" || info.Node == "" {
		t.Fatalf("while it sleeps: status %s, pod %q, node %q; want running in a named pod and node", info.Status, info.Pod, info.Node)
	}
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusErrored || str(d.LastOutput) != "partial-line-no-newline ...finished" ||
		str(d.LastError) != "submission failed with exit code 3" {
		t.Fatalf("H08: %s, last_output %q, last_error %q", d.Status, str(d.LastOutput), str(d.LastError))
	}

	// H09: a child that ignores SIGTERM is SIGKILLed after the grace
	// period; nothing of it is left; interrupted
	if _, err := s.Send(t.Context(), id, `trap '' TERM INT; echo ignoring-term; sleep 60`, false); err != nil {
		t.Fatal(err)
	}
	waitLogs(t, s, id, "ignoring-term", 30*time.Second)
	if _, err := s.Send(t.Context(), id, "echo too-soon", false); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("send without interrupt to a running agent: %v; want busy", err)
	}
	sub := latest(t, s, id)
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if sub = latest(t, s, id); sub.Signal != "SIGKILL" || str(sub.LastError) != "interrupted" {
		t.Fatalf("H09: signal %q, last_error %q; want SIGKILL after the grace period, interrupted", sub.Signal, str(sub.LastError))
	}
	if n := leftInPod(t, s, id, sub.ID); n != 0 {
		t.Fatalf("H09: %d process(es) of the interrupted submission left in the pod", n)
	}

	// H10: the leader exits on TERM, a member ignores it: SIGKILL still
	// reaches it, via send with interrupt. The interrupt waits until the
	// member has set its trap (it says so) and both processes are there.
	if _, err := s.Send(t.Context(), id, `trap 'echo leader-exiting; exit 0' TERM; sh -c 'trap "" TERM; echo member-ignores-term; exec sleep 300' & wait`, false); err != nil {
		t.Fatal(err)
	}
	waitForRunningSub(t, s, id, 3)
	h10 := latest(t, s, id)
	waitLogs(t, s, id, "member-ignores-term", 30*time.Second)
	waitForProcesses(t, s, id, h10.ID, 2)
	if _, err := s.Send(t.Context(), id, `sleep 300 & sleep 301 & echo started; wait`, true); err != nil { // H11 next
		t.Fatal(err)
	}
	if got, _ := s.Logs(id, 3); !strings.Contains(got, "leader-exiting") {
		t.Errorf("H10: no leader-exiting in %q", got)
	}
	if n := leftInPod(t, s, id, h10.ID); n != 0 {
		t.Fatalf("H10: %d process(es) left after send with interrupt", n)
	}

	// H11: grandchildren are gone after the interrupt (close here), and
	// the agent takes new input after resume
	waitLogs(t, s, id, "started", 30*time.Second)
	h11 := latest(t, s, id)
	if r, err := s.Close(t.Context(), id); err != nil || r.Status != proto.StatusClosed {
		t.Fatalf("close: %v %v", r, err)
	}
	if n := leftInPod(t, s, id, h11.ID); n != 0 {
		t.Fatalf("H11: %d grandchild(ren) left after close", n)
	}
	if r, err := s.Resume(t.Context(), id); err != nil || r.Status != proto.StatusErrored {
		t.Fatalf("resume: %v %v; want errored (interrupted)", r, err)
	}

	// H12: a grandchild holding the pipes after the shell exits: completed
	// at once, not after the sleep; the sleep is terminated
	if _, err := s.Send(t.Context(), id, `sleep 30 & echo started`, false); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d = waitFinal(t, s, id)
	h12 := latest(t, s, id)
	if d.Status != proto.StatusCompleted || str(d.LastOutput) != "started" || time.Since(start) > 20*time.Second {
		t.Fatalf("H12: %s %q after %s", d.Status, str(d.LastOutput), time.Since(start))
	}
	waitForProcesses(t, s, id, h12.ID, 0)

	// H13: stdin is closed after the message
	if _, err := s.Send(t.Context(), id, `cat > /dev/null; echo got-eof`, false); err != nil {
		t.Fatal(err)
	}
	if d = waitFinal(t, s, id); d.Status != proto.StatusCompleted || str(d.LastOutput) != "got-eof" {
		t.Fatalf("H13: %s %q", d.Status, str(d.LastOutput))
	}

	// H15: a stderr flood is drained, every byte logged
	if _, err := s.Send(t.Context(), id, `printf '%0200000d' 0 >&2; echo stdout-done`, false); err != nil {
		t.Fatal(err)
	}
	if d = waitFinal(t, s, id); d.Status != proto.StatusCompleted || !strings.Contains(str(d.LastOutput), "stdout-done") {
		t.Fatalf("H15: %s %q", d.Status, str(d.LastOutput))
	}
	raw, err := os.ReadFile(latest(t, s, id).LogPath)
	if err != nil || bytes.Count(raw, []byte("0")) != 200000 || !bytes.Contains(raw, []byte("stdout-done\n")) {
		t.Fatalf("H15: log has %d zeros (want 200000), err %v", bytes.Count(raw, []byte("0")), err)
	}
}

func waitForRunningSub(t *testing.T, s *supervisor.Supervisor, id string, n int) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, fmt.Sprintf("submission %d of %s running", n, id), func() bool {
		info, _ := s.Agent(id)
		return len(info.Submissions) >= n && info.Running()
	})
}

// waitForProcesses polls until submission subID has n live processes in
// the pod.
func waitForProcesses(t *testing.T, s *supervisor.Supervisor, id, subID string, n int) {
	t.Helper()
	testkit.Poll(t, 30*time.Second, fmt.Sprintf("%d process(es) of submission %s in its pod", n, subID), func() (int, bool) {
		got := leftInPod(t, s, id, subID)
		return got, got == n
	})
}

// TestSessionStoreSurvivesBetweenSubmissions: a stand-in agent keeps its
// state in a file under its home, as agent CLIs keep their session stores;
// its second submission finds it (SPEC §13).
func TestSessionStoreSurvivesBetweenSubmissions(t *testing.T) {
	image, node := testCluster(t)
	s := newHost(t, evalCommand, image, node, time.Second)
	sp, err := s.Spawn(t.Context(), `mkdir -p "$HOME/.agent" && echo "session-$SUBDASH_AGENT_ID" > "$HOME/.agent/state" && echo saved`)
	if err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, sp.AgentID); d.Status != proto.StatusCompleted {
		t.Fatalf("first submission: %s %q %q", d.Status, str(d.LastOutput), str(d.LastError))
	}
	if _, err := s.Send(t.Context(), sp.AgentID, `cat "$HOME/.agent/state"; echo "seq $SUBDASH_SUBMISSION_SEQ"`, false); err != nil {
		t.Fatal(err)
	}
	want := "session-" + sp.AgentID + "\nseq 2"
	if d := waitFinal(t, s, sp.AgentID); d.Status != proto.StatusCompleted || str(d.LastOutput) != want {
		t.Fatalf("second submission: %s %q, want %q", d.Status, str(d.LastOutput), want)
	}
}

// TestMissingImageIsErroredWithTheReason: a pod whose image is not present
// makes the submission errored with the cluster's reason, in words.
func TestMissingImageIsErroredWithTheReason(t *testing.T) {
	_, node := testCluster(t)
	s := newHost(t, "echo never", "localhost/subdash-no-such-image:v0", node, time.Second)
	sp, err := s.Spawn(t.Context(), "task")
	if err != nil {
		t.Fatal(err)
	}
	d := waitFinal(t, s, sp.AgentID)
	if d.Status != proto.StatusErrored || !strings.Contains(str(d.LastError), "image localhost/subdash-no-such-image:v0") {
		t.Fatalf("%s, last_error %q; want errored naming the image", d.Status, str(d.LastError))
	}
}

// TestPodsOfAKilledHostAreDeletedByTheNext: a host killed with SIGKILL
// leaves its agent's pod; the next host in the namespace deletes it.
func TestPodsOfAKilledHostAreDeletedByTheNext(t *testing.T) {
	if os.Getenv("SUBDASH_KUBE_TEST_HOST") != "" {
		runChildHost()
		return
	}
	image, node := testCluster(t)
	state := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run", "^TestPodsOfAKilledHostAreDeletedByTheNext$")
	child.Env = append(os.Environ(), "SUBDASH_KUBE_TEST_HOST="+state, "SUBDASH_KUBE_TEST_IMAGE="+image, "SUBDASH_KUBE_TEST_NODE="+node)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if pod, ok := strings.CutPrefix(sc.Text(), "pod "); ok {
				lines <- pod
			}
		}
	}()
	var pod string
	select {
	case pod = <-lines:
	case <-time.After(90 * time.Second):
		_ = child.Process.Kill()
		t.Fatal("the child host did not start an agent within 90s")
	}
	// the agent's pod and the warm pod the child kept for its next agent
	childRun := waitPods(t, pod)
	_ = child.Process.Signal(syscall.SIGKILL)
	_ = child.Wait()

	s := newHost(t, evalCommand, image, node, time.Second)
	r := s.Config().Runner.(*Runner)
	if notes := strings.Join(s.Config().Notes, "\n"); !strings.Contains(notes, pod) {
		t.Errorf("the host's notes do not name the leftover pod %s: %q", pod, notes)
	}
	testkit.Poll(t, 60*time.Second, "no pod of the killed host left", func() (string, bool) {
		l, err := r.cs.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{LabelSelector: LabelRun + "=" + childRun})
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("%d pod(s)", len(l.Items)), len(l.Items) == 0
	})
}

// waitPods waits until the host that runs pod has two pods, its agent's
// and a running warm one, and returns the host's run label.
func waitPods(t *testing.T, pod string) string {
	t.Helper()
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(rc)
	ns, _, _ := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).Namespace()
	p, err := cs.CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run := p.Labels[LabelRun]
	testkit.Poll(t, 60*time.Second, "the child host's two running pods, its agent's and the warm one", func() (string, bool) {
		l, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: LabelRun + "=" + run})
		if err != nil {
			return err.Error(), false
		}
		running := 0
		for _, p := range l.Items {
			if podState(&p).running {
				running++
			}
		}
		return fmt.Sprintf("%d running pod(s)", running), running == 2
	})
	return run
}

// runChildHost is the host that TestPodsOfAKilledHostAreDeletedByTheNext
// kills: it spawns an agent, prints its pod, and waits to be killed.
func runChildHost() {
	cfg := hostConfig(os.Getenv("SUBDASH_KUBE_TEST_HOST"), "echo running; sleep 600",
		os.Getenv("SUBDASH_KUBE_TEST_IMAGE"), os.Getenv("SUBDASH_KUBE_TEST_NODE"), time.Second)
	s, err := supervisor.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sp, err := s.Spawn(context.Background(), "task")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for {
		if info, _ := s.Agent(sp.AgentID); info.Pod != "" && info.Node != "" {
			fmt.Printf("pod %s\n", info.Pod)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(10 * time.Minute)
}

// TestCallersOfTheHostAreNotSubagents: while an agent runs in its pod, a
// program of this machine (here this test process, whose ancestors may
// sit in session 0) may still spawn agents: only the host's own
// subagents are refused (SPEC §2), and a pod's submission has no process
// here.
func TestCallersOfTheHostAreNotSubagents(t *testing.T) {
	image, node := testCluster(t)
	s := newHost(t, evalCommand, image, node, time.Second)
	sp, err := s.Spawn(t.Context(), "echo running; sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	waitLogs(t, s, sp.AgentID, "running", 60*time.Second)
	if err := s.CheckNesting(os.Getpid()); err != nil {
		t.Fatalf("a caller of this machine is taken for a subagent: %v", err)
	}
}

// TestShutdownOutOfTimeStillDeletesThePods: when the host's shutdown runs
// out of time with a submission still running (here at once), the host
// still deletes its pods before it returns, and with them what ran in
// them (SPEC §13: nothing outlives the host).
func TestShutdownOutOfTimeStillDeletesThePods(t *testing.T) {
	image, node := testCluster(t)
	s, err := supervisor.New(hostConfig(t.TempDir(), evalCommand, image, node, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := s.Spawn(t.Context(), "trap '' TERM; echo ignoring; sleep 600")
	if err != nil {
		t.Fatal(err)
	}
	waitLogs(t, s, sp.AgentID, "ignoring", 60*time.Second)
	r := s.Config().Runner.(*Runner)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Shutdown(ctx); err == nil {
		t.Fatal("shutdown with no time left returned no error")
	}
	l, err := r.cs.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{LabelSelector: LabelRun + "=" + labelValue(r.host.RunID)})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("%d pod(s) of the host left after its shutdown (err %v)", len(l.Items), err)
	}
}
