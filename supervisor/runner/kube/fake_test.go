package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/runner"
)

// Pod statuses as clusters record them for pods that cannot start. The
// test cluster of ../shared/tools/k8s cannot produce these (one node, no
// scheduler, no registry), so the reasons are checked on recorded statuses
// with client-go's fake clientset (SPEC §13).

func unschedulable() corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
	}}}
}

func pullBackOff() corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: container, Image: "registry.example/agent:missing",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
			Message: `Back-off pulling image "registry.example/agent:missing": ErrImagePull: not found`}},
	}}}
}

func missingSecret() corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: container, Image: "agent:1",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError",
			Message: `secret "agent-keys" not found`}},
	}}}
}

func running() corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: container, Image: "agent:1", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	}}}
}

// fakeRunner returns a runner over a fake clientset whose created pods get
// status (and node) at once, as the cluster would record them.
func fakeRunner(t *testing.T, status corev1.PodStatus, node string, timeout time.Duration) (*Runner, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset()
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		pod.Status = status
		if node != "" {
			pod.Spec.NodeName = node
		}
		return false, nil, nil // the tracker stores the pod as changed here
	})
	set := runner.Settings{Grace: 1500 * time.Millisecond, Kube: runner.KubeOptions{Image: "agent:1", StartTimeout: timeout},
		Host: runner.Host{RunID: "20261201T091200Z-a1b2c3", PID: 1}}
	r, err := newRunner(cs, nil, "agents", set, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return r, cs
}

func TestStartReasonsOnRecordedStatuses(t *testing.T) {
	cases := []struct {
		name    string
		status  corev1.PodStatus
		timeout time.Duration
		want    []string
	}{
		{"image pull back-off", pullBackOff(), time.Minute,
			[]string{"cannot start", "image registry.example/agent:missing cannot be pulled (ImagePullBackOff)", "not found"}},
		{"missing secret", missingSecret(), time.Minute,
			[]string{"cannot start", "CreateContainerConfigError", `secret "agent-keys" not found`}},
		{"unschedulable until the start timeout", unschedulable(), 300 * time.Millisecond,
			[]string{"did not start within --kube-start-timeout 300ms", "unschedulable: 0/3 nodes are available: 3 Insufficient cpu"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, cs := fakeRunner(t, c.status, "", c.timeout)
			_, err := r.ensurePod(context.Background(), "4a1e7c2b-0000-4000-8000-000000000001", nil)
			if err == nil {
				t.Fatal("the pod started; want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			// the pod that cannot start is deleted, and the next
			// submission tries again
			testkit.Eventually(t, 5*time.Second, "the pod that cannot start deleted", func() bool {
				l, _ := cs.CoreV1().Pods("agents").List(context.Background(), metav1.ListOptions{})
				return len(l.Items) == 0
			})
		})
	}
}

func TestQuotaRefusalIsTheReason(t *testing.T) {
	r, cs := fakeRunner(t, running(), "n1", time.Minute)
	cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "subdash-x",
			errorString(`exceeded quota: agents-quota, requested: pods=1, used: pods=10, limited: pods=10`))
	})
	_, err := r.ensurePod(context.Background(), "4a1e7c2b-0000-4000-8000-000000000002", nil)
	if err == nil || !strings.Contains(err.Error(), "exceeded quota: agents-quota") {
		t.Fatalf("error %v; want the quota's message", err)
	}
}

func TestRunningPodIsPlacedAndReused(t *testing.T) {
	r, cs := fakeRunner(t, running(), "node-7", time.Minute)
	id := "4a1e7c2b-0000-4000-8000-000000000003"
	p, err := r.ensurePod(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.node != "node-7" || p.name != "subdash-a1b2c3-1" {
		t.Fatalf("pod %s on %s", p.name, p.node)
	}
	again, err := r.ensurePod(context.Background(), id, nil)
	if err != nil || again != p {
		t.Fatalf("second submission got %v, %v; want the same pod", again, err)
	}
	pod, err := cs.CoreV1().Pods("agents").Get(context.Background(), p.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{LabelAgent: id, LabelRun: "20261201T091200Z-a1b2c3", LabelManagedBy: "subdash"} {
		if pod.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, pod.Labels[k], v)
		}
	}
	c := pod.Spec.Containers[0]
	var env []string
	for _, e := range c.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	if len(env) != 0 {
		t.Errorf("pod environment %v; want none without --kube-env (never the host's; each exec brings the submission's)", env)
	}
	if *pod.Spec.TerminationGracePeriodSeconds != 2 || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("grace %d s (want 1.5 s rounded up to 2), service account token mounted %v",
			*pod.Spec.TerminationGracePeriodSeconds, *pod.Spec.AutomountServiceAccountToken)
	}
}

func TestKubeEnvAndSecretsOnly(t *testing.T) {
	cs := fake.NewClientset()
	env := map[string]string{"ANTHROPIC_API_KEY": "k-1"}
	set := runner.Settings{Grace: 1500 * time.Millisecond, Kube: runner.KubeOptions{Image: "agent:1", Env: []string{"ANTHROPIC_API_KEY"}, Secrets: []string{"agent-keys"}},
		Host: runner.Host{RunID: "r-1"}}
	r, err := newRunner(cs, nil, "agents", set, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	c := r.podSpec("subdash-x-1", "a").Spec.Containers[0]
	if len(c.Env) != 1 || c.Env[0].Name != "ANTHROPIC_API_KEY" || c.Env[0].Value != "k-1" {
		t.Errorf("env %v", c.Env)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef.Name != "agent-keys" {
		t.Errorf("envFrom %v", c.EnvFrom)
	}
	set.Kube.Env = []string{"NOT_SET_HERE"}
	if _, err := newRunner(cs, nil, "agents", set, func(k string) string { return env[k] }); err == nil ||
		!strings.Contains(err.Error(), "--kube-env NOT_SET_HERE: NOT_SET_HERE is not set") {
		t.Errorf("missing --kube-env variable: %v", err)
	}
}

func TestCheckSaysWhatIsMissing(t *testing.T) {
	cases := []struct {
		name  string
		react func(k8stesting.Action) (bool, runtime.Object, error)
		want  string
	}{
		{"namespace missing", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
				return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "agents")
			}
			return false, nil, nil
		}, `namespace "agents" does not exist`},
		{"create forbidden", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errorString(`User "dev" cannot create resource "pods" in API group "" in the namespace "agents"`))
			}
			return false, nil, nil
		}, `not allowed to create pods in namespace "agents"`},
		{"exec forbidden", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetResource().Resource == "selfsubjectaccessreviews" {
				rev := a.(k8stesting.CreateAction).GetObject().(interface{ DeepCopyObject() runtime.Object }).DeepCopyObject()
				return true, allowUnlessExec(rev), nil
			}
			return false, nil, nil
		}, `not allowed to create pods/exec in namespace "agents"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, cs := fakeRunner(t, running(), "n", time.Minute)
			cs.PrependReactor("*", "*", c.react)
			err := r.check(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("check: %v; want %q", err, c.want)
			}
		})
	}
}

func TestSweepDeletesPodsOfGoneHosts(t *testing.T) {
	r, cs := fakeRunner(t, running(), "n", time.Minute)
	mk := func(name, run, pid string) {
		_, err := cs.CoreV1().Pods("agents").Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{LabelManagedBy: managedBy, LabelMachine: r.machine, LabelRun: run},
			Annotations: map[string]string{AnnotationPID: pid}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	mk("gone-host", "20261130T000000Z-dead00", "999999999")     // its host process is gone
	mk("live-host", "20261130T000000Z-live00", itoa(selfPID())) // another host that still runs
	mk("this-host", "20261201T091200Z-a1b2c3", "999999999")     // ours
	note := r.Sweep("")
	if !strings.Contains(note, "deleting 1 pod(s)") || !strings.Contains(note, "gone-host") {
		t.Errorf("note %q", note)
	}
	r.bg.Wait()
	l, _ := cs.CoreV1().Pods("agents").List(context.Background(), metav1.ListOptions{})
	var left []string
	for _, p := range l.Items {
		left = append(left, p.Name)
	}
	if strings.Join(left, " ") != "live-host this-host" {
		t.Errorf("pods left %v; want live-host this-host", left)
	}
}
