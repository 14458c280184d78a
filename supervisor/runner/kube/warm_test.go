package kube

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The warm pod (pods.go) on client-go's fake clientset: which pods exist
// in the namespace after each step, as `kubectl get pods` would show them.

func podNames(t *testing.T, cs *fake.Clientset) string {
	t.Helper()
	l, err := cs.CoreV1().Pods("agents").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range l.Items {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// podCreations counts the pod creations the cluster was asked for.
func podCreations(cs *fake.Clientset) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "pods" && a.GetSubresource() == "" {
			n++
		}
	}
	return n
}

// warmReady waits until r has a warm pod that runs.
func warmReady(t *testing.T, r *Runner) *agentPod {
	t.Helper()
	var w *agentPod
	testkit.Eventually(t, 5*time.Second, "a warm pod that runs", func() bool {
		r.mu.Lock()
		w = r.warm
		r.mu.Unlock()
		if w == nil {
			return false
		}
		select {
		case <-w.ready:
			return w.err == nil
		default:
			return false
		}
	})
	return w
}

func TestWarmPodServesTheFirstSubmission(t *testing.T) {
	r, cs := fakeRunner(t, running(), "node-7", time.Minute)
	r.keepWarmPods()
	warm := warmReady(t, r)
	if got := podNames(t, cs); got != "subdash-a1b2c3-1" {
		t.Fatalf("pods before any agent: %q; want the warm pod subdash-a1b2c3-1", got)
	}
	id := "4a1e7c2b-0000-4000-8000-000000000011"
	p, err := r.ensurePod(context.Background(), id, nil)
	if err != nil || p != warm || p.node != "node-7" {
		t.Fatalf("first agent got %+v, %v; want the warm pod on node-7", p, err)
	}
	if err := r.label(p.name, id, "sub-1"); err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods("agents").Get(context.Background(), p.name, metav1.GetOptions{})
	if err != nil || pod.Labels[LabelAgent] != id || pod.Labels[LabelSubmission] != "sub-1" || pod.Labels[LabelRun] != "20261201T091200Z-a1b2c3" {
		t.Fatalf("labels of the claimed pod: %v (%v)", pod.Labels, err)
	}
	// the next agent finds a new warm pod
	next := warmReady(t, r)
	if again, _ := r.ensurePod(context.Background(), id, nil); again != p {
		t.Fatalf("the agent's second submission got pod %s; want its own %s", again.name, p.name)
	}
	other, err := r.ensurePod(context.Background(), "4a1e7c2b-0000-4000-8000-000000000012", nil)
	if err != nil || other != next || other.name != "subdash-a1b2c3-2" {
		t.Fatalf("second agent got %+v, %v; want the new warm pod subdash-a1b2c3-2", other, err)
	}
	warmReady(t, r)
	if got := podNames(t, cs); got != "subdash-a1b2c3-1 subdash-a1b2c3-2 subdash-a1b2c3-3" {
		t.Fatalf("pods: %q; want two agents' and a warm one", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := podNames(t, cs); got != "" {
		t.Fatalf("pods after Close: %q; want none (nothing outlives the host)", got)
	}
	if _, err := r.ensurePod(context.Background(), "4a1e7c2b-0000-4000-8000-000000000013", nil); err == nil {
		t.Fatal("a pod was started after Close")
	}
	if n := podCreations(cs); n != 3 {
		t.Fatalf("%d pod creations; want 3", n)
	}
}

func TestWarmPodThatCannotStart(t *testing.T) {
	r, cs := fakeRunner(t, pullBackOff(), "", time.Minute)
	r.keepWarmPods()
	testkit.Eventually(t, 5*time.Second, "the warm pod failed and gone", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.warmFailed && r.warm == nil
	})
	for i, id := range []string{"4a1e7c2b-0000-4000-8000-000000000021", "4a1e7c2b-0000-4000-8000-000000000022"} {
		_, err := r.ensurePod(context.Background(), id, nil)
		if err == nil || !strings.Contains(err.Error(), "image registry.example/agent:missing cannot be pulled (ImagePullBackOff)") {
			t.Fatalf("agent %d: %v; want the reason its own pod cannot start", i+1, err)
		}
	}
	// the warm pod and one pod per agent, and no new warm pod per spawn
	if n := podCreations(cs); n != 3 {
		t.Fatalf("%d pod creations; want 3", n)
	}
	testkit.Eventually(t, 5*time.Second, "every pod deleted", func() bool { return podNames(t, cs) == "" })
}

func TestCloseStopsAWarmPodStillStarting(t *testing.T) {
	r, cs := fakeRunner(t, corev1.PodStatus{Phase: corev1.PodPending}, "", time.Hour)
	r.keepWarmPods()
	testkit.Eventually(t, 5*time.Second, "the warm pod subdash-a1b2c3-1 created", func() bool { return podNames(t, cs) == "subdash-a1b2c3-1" })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := podNames(t, cs); got != "" {
		t.Fatalf("pods after Close: %q; want none", got)
	}
}
