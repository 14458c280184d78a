// Package kube is the Kubernetes runner of SPEC §13: an agent's submissions
// run in a pod of a cluster instead of process groups on this machine, with
// the same operations, statuses, logs and errors.
//
// Design: one pod per agent, one exec per submission. The pod is the
// agent's sandbox: it is created at the agent's first submission and lives
// until its host ends, so the agent CLI's session store (in the container's
// home) survives between submissions and a preset continues its
// conversation, as SPEC §13 asks; a pod per submission would lose it unless
// every user put the store on a volume, and would pay the pod start-up
// (scheduling, image, container) at every submission instead of once. The
// cost: an idle pod per open agent, deleted when the host ends.
//
// Each submission is an exec of a small POSIX sh wrapper in the pod (so it
// needs only /bin/sh, tr and grep in the image) that runs the agent command
// with the submission's variables. Because the exec's own end waits for
// every holder of its stdout and stderr (a grandchild left in the
// background), the wrapper reports the main process's end itself, in a
// marker with a per-submission random nonce on stderr that the runner
// removes from the stream; the submission then ends at once, as SPEC §4
// asks. Processes of a submission carry its SUBDASH_SUBMISSION_ID in their
// environment wherever they moved (setsid, daemons), so terminating a
// submission is a second exec that sends SIGTERM to every process of the
// container with that variable (not only the exec's first process),
// SIGKILL after the grace period, and returns when none is left. Deleting
// the pod would signal its PID 1 only, and would lose the session store.
//
// This package carries k8s.io/client-go, whose package initialisation alone
// costs every process about +16 MB RSS and +7 ms start-up. Only a binary
// built with `-tags kube` links it (main_kube.go registers the runner), so
// `subdash ctl`, `subdash agent`, viewers and local hosts built the usual
// way do not pay for it (figures in BENCHMARKS.md).
package kube

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"

	authv1 "k8s.io/api/authorization/v1"

	"github.com/subdash/subdash/supervisor"
)

// Labels and annotations of the pods this runner creates (SPEC §13: labels
// naming the host, agent and submission).
const (
	LabelManagedBy  = "app.kubernetes.io/managed-by"
	managedBy       = "subdash"
	LabelMachine    = "subdash.io/machine"    // the host's machine (its host name)
	LabelRun        = "subdash.io/run"        // the host's run id
	LabelAgent      = "subdash.io/agent"      // the agent id
	LabelSubmission = "subdash.io/submission" // the submission running or last run
	AnnotationPID   = "subdash.io/host-pid"   // the host's process id on its machine
	container       = "agent"
)

const (
	// connectTimeout bounds the checks at start (SPEC §13: no cluster is
	// an error at start, not at the first spawn).
	connectTimeout = 10 * time.Second
	// drainWait bounds the wait for the exec's streams to end after
	// everything of the submission was terminated.
	drainWait = 3 * time.Second
	// killWait bounds the wait for processes to vanish after SIGKILL.
	killWait = 10 * time.Second
	// deleteWait bounds the wait for this host's pods to be gone at Close,
	// beyond their grace period.
	deleteWait = 15 * time.Second
)

// Factory creates the Kubernetes runner for cfg (supervisor.RunnerFactory):
// the cluster of KUBECONFIG or the in-cluster configuration, checked now.
func Factory(cfg supervisor.Config, host supervisor.Host) (supervisor.Runner, error) {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--runner kubernetes: no cluster configuration (%v); set KUBECONFIG to a kubeconfig file, or run the host inside a cluster", err)
	}
	ns := cfg.Kube.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("--runner kubernetes: %v", err)
	}
	r, err := newRunner(cs, rc, ns, cfg, host, os.Getenv)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Runner runs submissions in pods (supervisor.Runner).
type Runner struct {
	cs           kubernetes.Interface
	rc           *rest.Config // nil with a fake clientset: no exec
	ns           string
	image        string
	node         string
	env          []corev1.EnvVar
	secrets      []string
	startTimeout time.Duration
	graceSec     int64 // the grace period in whole seconds, rounded up
	graceNote    string
	machine      string
	host         supervisor.Host
	suffix       string // from the run id, so pod names of hosts differ

	mu   sync.Mutex
	pods map[string]*agentPod // by agent id
	bg   sync.WaitGroup       // deletions in the background
}

// agentPod is an agent's pod (its sandbox).
type agentPod struct {
	name  string
	ready chan struct{} // closed once it runs or failed to
	err   error         // why it cannot run; set before ready is closed
	node  string
}

func newRunner(cs kubernetes.Interface, rc *rest.Config, ns string, cfg supervisor.Config, host supervisor.Host, getenv func(string) string) (*Runner, error) {
	k := cfg.Kube
	r := &Runner{cs: cs, rc: rc, ns: ns, image: k.Image, node: k.Node, secrets: k.Secrets,
		startTimeout: k.StartTimeout, host: host, pods: map[string]*agentPod{}}
	if r.startTimeout <= 0 {
		r.startTimeout = supervisor.DefaultKubeStartTimeout
	}
	for _, name := range k.Env {
		v, ok := os.LookupEnv(name)
		if getenv != nil {
			v = getenv(name)
			ok = v != ""
		}
		if !ok {
			return nil, fmt.Errorf("--kube-env %s: %s is not set in this environment; set it or leave the flag out", name, name)
		}
		r.env = append(r.env, corev1.EnvVar{Name: name, Value: v})
	}
	r.graceSec, r.graceNote = wholeSeconds(cfg.Grace)
	hn, _ := os.Hostname()
	r.machine = labelValue(hn)
	r.suffix = labelValue(host.RunID)
	if i := strings.LastIndexByte(r.suffix, '-'); i >= 0 {
		r.suffix = r.suffix[i+1:]
	}
	r.suffix = strings.ToLower(r.suffix)
	return r, nil
}

// wholeSeconds rounds grace up to whole seconds, as Kubernetes grace
// periods are (SPEC §13), and says so when it changed it.
func wholeSeconds(grace time.Duration) (int64, string) {
	if grace <= 0 {
		grace = supervisor.DefaultGrace
	}
	s := int64(math.Ceil(grace.Seconds()))
	if time.Duration(s)*time.Second == grace {
		return s, ""
	}
	return s, fmt.Sprintf("Kubernetes runner: grace period %s rounded up to %ds (Kubernetes grace periods are whole seconds)", grace, s)
}

var labelBad = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// labelValue turns s into a valid label value: at most 63 of
// [A-Za-z0-9_.-], starting and ending alphanumeric.
func labelValue(s string) string {
	s = labelBad.ReplaceAllString(s, "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-_.")
}

// check answers, at start, whether the cluster is reachable and the host
// may do what it needs in the namespace (SPEC §13: errors in words at the
// right time).
func (r *Runner) check(ctx context.Context) error {
	if _, err := r.cs.Discovery().ServerVersion(); err != nil {
		host := ""
		if r.rc != nil {
			host = " at " + r.rc.Host
		}
		return fmt.Errorf("--runner kubernetes: cannot reach the cluster%s: %v; check KUBECONFIG and that the cluster is up", host, err)
	}
	// A dry run of a real pod answers for the namespace, the permission to
	// create pods and the admission of its spec at once.
	probe := r.podSpec("00000000-0000-0000-0000-000000000000", nil)
	_, err := r.cs.CoreV1().Pods(r.ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case err == nil, isQuota(err):
	case apierrors.IsNotFound(err):
		return fmt.Errorf("--runner kubernetes: namespace %q does not exist; create it (kubectl create namespace %s) or pass another --kube-namespace", r.ns, r.ns)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("--runner kubernetes: not allowed to create pods in namespace %q: %v; grant the host the Role in README (Running subagents on Kubernetes)", r.ns, apiMessage(err))
	default:
		return fmt.Errorf("--runner kubernetes: cannot create pods in namespace %q: %v", r.ns, apiMessage(err))
	}
	for _, need := range requiredAccess {
		ok, known := r.allowed(ctx, need)
		if known && !ok {
			return fmt.Errorf("--runner kubernetes: not allowed to %s %s in namespace %q; grant the host the Role in README (Running subagents on Kubernetes)", need.verb, need.resource, r.ns)
		}
	}
	return nil
}

// access is one verb on one resource of the core group.
type access struct{ verb, resource, sub string }

// requiredAccess is what the host does in its namespace; README's Role
// grants exactly these (pods: create, get, list, watch, patch, delete;
// pods/exec: create).
var requiredAccess = []access{
	{"get", "pods", ""}, {"list", "pods", ""}, {"watch", "pods", ""}, {"patch", "pods", ""},
	{"delete", "pods", ""}, {"create", "pods/exec", "exec"},
}

// allowed asks the cluster whether this user may do a; known is false when
// the cluster does not answer (the question itself forbidden).
func (r *Runner) allowed(ctx context.Context, a access) (ok, known bool) {
	res := strings.TrimSuffix(a.resource, "/"+a.sub)
	rev := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authv1.ResourceAttributes{Namespace: r.ns, Verb: a.verb, Resource: res, Subresource: a.sub},
	}}
	got, err := r.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, rev, metav1.CreateOptions{})
	if err != nil {
		return false, false
	}
	return got.Status.Allowed, true
}

func isQuota(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota")
}

// apiMessage is the message of a status error, without its Go wrapping.
func apiMessage(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) && se.Status().Message != "" {
		return se.Status().Message
	}
	return err.Error()
}

// podName names agent's pod on this host: subdash-<agent id>-<run suffix>.
func (r *Runner) podName(agentID string) string {
	n := "subdash-" + strings.ToLower(agentID)
	if r.suffix != "" {
		n += "-" + r.suffix
	}
	return n
}

// podSpec is agent's pod: the image's working directory, no service
// account token (the agent gets no access to the cluster), PID 1 a shell
// that only waits, and only the environment the user named (SPEC §13).
func (r *Runner) podSpec(agentID string, vars []string) *corev1.Pod {
	env := append([]corev1.EnvVar(nil), r.env...)
	for _, kv := range vars {
		// MEMO_ENABLE_COLLAB_TOOLS is the host's setting for every
		// submission; the submission's own ids are set per exec.
		if k, v, _ := strings.Cut(kv, "="); k == "MEMO_ENABLE_COLLAB_TOOLS" {
			env = append(env, corev1.EnvVar{Name: k, Value: v})
		}
	}
	var from []corev1.EnvFromSource
	for _, s := range r.secrets {
		from = append(from, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s}}})
	}
	no := false
	grace := r.graceSec
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      r.podName(agentID),
			Namespace: r.ns,
			Labels: map[string]string{LabelManagedBy: managedBy, LabelMachine: r.machine, LabelRun: labelValue(r.host.RunID),
				LabelAgent: labelValue(agentID)},
			Annotations: map[string]string{AnnotationPID: strconv.Itoa(r.host.PID)},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			NodeName:                      r.node,
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name:    container,
				Image:   r.image,
				Command: []string{"/bin/sh", "-c", keeper},
				Env:     env,
				EnvFrom: from,
			}},
		},
	}
}

// keeper is the pod's PID 1: it waits (reaping what submissions left
// behind) and exits at once on SIGTERM, so deleting the pod is quick.
const keeper = `trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done`

// Sweep deletes, in the background, the pods that hosts on this machine
// left behind when they were killed (their process is gone), as the
// orphan sweep does for process groups (SPEC §13), and returns a note
// saying so and how the grace period was rounded.
func (r *Runner) Sweep(string) string {
	var notes []string
	if r.graceNote != "" {
		notes = append(notes, r.graceNote)
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	list, err := r.cs.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{
		LabelSelector: LabelManagedBy + "=" + managedBy + "," + LabelMachine + "=" + r.machine})
	if err != nil {
		notes = append(notes, "Kubernetes runner: cannot list the pods of earlier hosts: "+apiMessage(err))
		return strings.Join(notes, "; ")
	}
	var stale []string
	for _, p := range list.Items {
		if p.Labels[LabelRun] == labelValue(r.host.RunID) || p.DeletionTimestamp != nil {
			continue
		}
		if pid, err := strconv.Atoi(p.Annotations[AnnotationPID]); err == nil && pid > 0 && hostAlive(pid) {
			continue
		}
		stale = append(stale, p.Name)
	}
	if len(stale) > 0 {
		notes = append(notes, fmt.Sprintf("deleting %d pod(s) in namespace %s left by an earlier subdash on this machine that did not exit cleanly: %s",
			len(stale), r.ns, strings.Join(stale, ", ")))
		for _, name := range stale {
			r.bg.Add(1)
			go func() {
				defer r.bg.Done()
				_ = r.deletePod(context.Background(), name, true)
			}()
		}
	}
	return strings.Join(notes, "; ")
}

// hostAlive reports whether process pid of this machine is alive.
func hostAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Close deletes this host's pods (their grace period, then SIGKILL) and
// returns once they are gone or ctx ends (SPEC §13: nothing outlives its
// host).
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	var names []string
	for id, p := range r.pods {
		names = append(names, p.name)
		delete(r.pods, id)
	}
	r.mu.Unlock()
	errs := make(chan error, len(names))
	for _, name := range names {
		go func() { errs <- r.deletePod(ctx, name, true) }()
	}
	var out []string
	for range names {
		if err := <-errs; err != nil {
			out = append(out, err.Error())
		}
	}
	done := make(chan struct{})
	go func() { r.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	if len(out) > 0 {
		return errors.New(strings.Join(out, "; "))
	}
	return nil
}

// deletePod deletes pod name with the grace period and, when wait is set,
// returns once it is gone (or after its grace plus deleteWait).
func (r *Runner) deletePod(ctx context.Context, name string, wait bool) error {
	grace := r.graceSec
	err := r.cs.CoreV1().Pods(r.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot delete pod %s: %s", name, apiMessage(err))
	}
	if !wait {
		return nil
	}
	deadline := time.Now().Add(time.Duration(grace)*time.Second + deleteWait)
	for time.Now().Before(deadline) {
		_, err := r.cs.CoreV1().Pods(r.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pod %s was still terminating when the host ended", name)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("pod %s did not go away within %s", name, time.Duration(grace)*time.Second+deleteWait)
}

// ensurePod returns agent's running pod, creating it and waiting for it to
// run the first time (SPEC §13: a pod that cannot start is an error with
// the cluster's reason within --kube-start-timeout).
func (r *Runner) ensurePod(ctx context.Context, agentID string, vars []string) (*agentPod, error) {
	r.mu.Lock()
	p := r.pods[agentID]
	if p != nil {
		select {
		case <-p.ready:
			if p.err != nil {
				p = nil // failed: try again
			}
		default:
		}
	}
	creator := p == nil
	if creator {
		p = &agentPod{name: r.podName(agentID), ready: make(chan struct{})}
		r.pods[agentID] = p
	}
	r.mu.Unlock()
	if creator {
		p.node, p.err = r.startPod(ctx, agentID, vars)
		if p.err != nil {
			r.mu.Lock()
			if r.pods[agentID] == p {
				delete(r.pods, agentID)
			}
			r.mu.Unlock()
		}
		close(p.ready)
	}
	select {
	case <-p.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.err != nil {
		return nil, p.err
	}
	return p, nil
}

// forget drops agent's pod p after it was found gone, so that the next
// submission creates a new one.
func (r *Runner) forget(agentID string, p *agentPod) {
	r.mu.Lock()
	if r.pods[agentID] == p {
		delete(r.pods, agentID)
	}
	r.mu.Unlock()
}

// startPod creates agent's pod and waits until its container runs; it
// returns the node, or the reason in words. A pod that cannot start is
// deleted.
func (r *Runner) startPod(ctx context.Context, agentID string, vars []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.startTimeout)
	defer cancel()
	spec := r.podSpec(agentID, vars)
	pods := r.cs.CoreV1().Pods(r.ns)
	w, werr := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + spec.Name})
	if werr == nil {
		defer w.Stop()
	}
	created, err := pods.Create(ctx, spec, metav1.CreateOptions{})
	if err != nil {
		return "", createError(err, r.ns)
	}
	fail := func(reason string) (string, error) {
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			_ = r.deletePod(context.Background(), spec.Name, false)
		}()
		return "", errors.New(reason)
	}
	pending := "waiting to be scheduled"
	st := podState(created)
	for {
		switch {
		case st.fatal != "":
			return fail("pod " + spec.Name + " cannot start: " + st.fatal)
		case st.running:
			return st.node, nil
		case st.pending != "":
			pending = st.pending
		}
		var next *corev1.Pod
		if werr == nil {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					werr = errors.New("watch ended")
					continue
				}
				if pod, isPod := ev.Object.(*corev1.Pod); isPod && pod.Name == spec.Name {
					next = pod
				}
			case <-ctx.Done():
			}
		} else {
			// no watch (forbidden or ended): look every 200 ms
			select {
			case <-time.After(200 * time.Millisecond):
				next, _ = pods.Get(ctx, spec.Name, metav1.GetOptions{})
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fail(fmt.Sprintf("pod %s did not start within --kube-start-timeout %s: %s", spec.Name, r.startTimeout, pending))
			}
			return fail(ctx.Err().Error())
		}
		if next != nil {
			st = podState(next)
		}
	}
}

// createError words a refused pod creation (SPEC §13).
func createError(err error, ns string) error {
	switch {
	case isQuota(err):
		return fmt.Errorf("cannot create the agent's pod: %s", apiMessage(err))
	case apierrors.IsNotFound(err):
		return fmt.Errorf("cannot create the agent's pod: namespace %q does not exist", ns)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("cannot create the agent's pod: not allowed to create pods in namespace %q: %s", ns, apiMessage(err))
	}
	return fmt.Errorf("cannot create the agent's pod: %s", apiMessage(err))
}

// state is what podState reads of a pod.
type state struct {
	running bool   // the agent container runs
	node    string // where it was scheduled
	fatal   string // why it will not start, in words
	pending string // why it has not started yet, in words
}

// podState reads a pod's status: whether its container runs, or why it will
// not (image not present or not pullable, a bad configuration such as a
// missing Secret, the container ended) or has not yet (unschedulable, image
// being pulled). Unschedulable is not final: an autoscaler may add a node
// within --kube-start-timeout.
func podState(p *corev1.Pod) state {
	st := state{node: p.Spec.NodeName}
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		st.fatal = "the pod ended (" + string(p.Status.Phase) + ")"
		if msg := strings.TrimSpace(p.Status.Reason + ": " + p.Status.Message); msg != ":" {
			st.fatal += ": " + strings.Trim(msg, ": ")
		}
		return st
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			st.pending = "unschedulable: " + c.Message
			if c.Reason != "" && c.Reason != corev1.PodReasonUnschedulable {
				st.pending = strings.ToLower(c.Reason) + ": " + c.Message
			}
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != container {
			continue
		}
		switch {
		case cs.State.Running != nil:
			st.running = true
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			st.fatal = fmt.Sprintf("its container ended with exit code %d", t.ExitCode)
			if t.Reason != "" {
				st.fatal += " (" + t.Reason + ")"
			}
			if t.Message != "" {
				st.fatal += ": " + t.Message
			}
		case cs.State.Waiting != nil:
			w := cs.State.Waiting
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff":
				st.fatal = fmt.Sprintf("image %s cannot be pulled (%s): %s", cs.Image, w.Reason, w.Message)
			case "ErrImageNeverPull":
				st.fatal = fmt.Sprintf("image %s is not present on node %s and its pull policy forbids pulling it (%s)", cs.Image, p.Spec.NodeName, w.Reason)
			case "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "RunContainerError", "CrashLoopBackOff":
				st.fatal = fmt.Sprintf("%s: %s", w.Reason, w.Message)
			case "":
			default:
				st.pending = w.Reason
				if w.Message != "" {
					st.pending += ": " + w.Message
				}
			}
		}
	}
	return st
}

// Start implements supervisor.Runner: it returns at once; the pod is
// created or reused, and the exec started, in the background.
func (r *Runner) Start(req supervisor.StartRequest) (supervisor.Process, error) {
	if r.rc == nil {
		return nil, errors.New("the Kubernetes runner has no cluster connection to run commands in pods")
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{r: r, req: req, nonce: hex.EncodeToString(b[:]), ctx: ctx, cancel: cancel,
		exited: make(chan struct{}), streamsDone: make(chan struct{}), execing: make(chan struct{})}
	p.stderr = newMarkerFilter([]byte("\x1esubdash:"+p.nonce+":exit:"), func(b []byte) { p.out(supervisor.Stderr, b) }, p.mainEnded)
	go p.run()
	return p, nil
}

// wrapper runs the agent command for one submission in the pod. $1 is the
// nonce, $2 the command, then the submission's variables as NAME=value. The
// command runs in a subshell that exports them (so only its processes carry
// SUBDASH_SUBMISSION_ID, not the wrapper); when it ends, the wrapper counts
// the processes it left and writes the marker with the exit status and that
// count to stderr. Exit statuses above 128 are signals, as sh reports them.
const wrapper = `nonce=$1; cmd=$2; shift 2
id=
for kv in "$@"; do case $kv in SUBDASH_SUBMISSION_ID=*) id=${kv#*=};; esac; done
( for kv in "$@"; do export "$kv"; done; exec /bin/sh -c "$cmd" )
st=$?
n=0
for d in /proc/[0-9]*; do
  if tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qx "SUBDASH_SUBMISSION_ID=$id"; then n=$((n+1)); fi
done
printf '\036subdash:%s:exit:%d:%d\036' "$nonce" "$st" "$n" >&2
exit "$st"
`

// killer terminates every process of submission $1 in the container: the
// processes whose environment holds its SUBDASH_SUBMISSION_ID, wherever
// they moved. SIGTERM (and SIGCONT) to all, SIGKILL after $2 tenths of a
// second to what is left, and again until none is left (at most 10 s more);
// it prints "survived <pids>" when some did. Scanning environments forks
// two processes per process of the container, so between scans it only
// watches the pids it signalled, with shell builtins; time comes from
// /proc/uptime (hundredths of a second).
const killer = `id=$1; tenths=$2
scan() { P=; for d in /proc/[0-9]*; do tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qx "SUBDASH_SUBMISSION_ID=$id" && P="$P ${d#/proc/}"; done; }
live() { L=; for q in $P; do s=; { read -r s < /proc/$q/stat; } 2>/dev/null || continue; case ${s##*) } in Z*|X*) ;; *) L="$L $q";; esac; done; }
now() { read -r u _ < /proc/uptime; T=${u%.*}${u#*.}; }
tick() { sleep 0.05 2>/dev/null || sleep 1; }
scan; [ -z "$P" ] && exit 0
kill -TERM $P 2>/dev/null; kill -CONT $P 2>/dev/null
now; end=$((T + tenths * 10))
while :; do
  live; if [ -z "$L" ]; then scan; [ -z "$P" ] && exit 0; kill -TERM $P 2>/dev/null; kill -CONT $P 2>/dev/null; fi
  now; [ "$T" -ge "$end" ] && break
  tick
done
now; end=$((T + 1000))
while :; do
  scan; [ -z "$P" ] && exit 0
  kill -KILL $P 2>/dev/null
  while :; do live; [ -z "$L" ] && break; now; [ "$T" -ge "$end" ] && { echo survived $L; exit 0; }; tick; done
done
`

// exec runs command in pod's agent container with the given streams and
// returns when it ended: nil for exit status 0, an error with ExitStatus()
// for another status, or another error when the stream failed.
func (r *Runner) exec(ctx context.Context, pod string, command []string, stdin io.Reader, stdout, stderr io.Writer) error {
	req := r.cs.CoreV1().RESTClient().Post().Resource("pods").Name(pod).Namespace(r.ns).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command,
			Stdin: stdin != nil, Stdout: stdout != nil, Stderr: stderr != nil}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(r.rc, "POST", req.URL())
	if err != nil {
		return err
	}
	ws, err := remotecommand.NewWebSocketExecutor(r.rc, "GET", req.URL().String())
	if err != nil {
		return err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// exitStatus is the status of an exec that ended with err, or false when
// err is not an exit status.
func exitStatus(err error) (int, bool) {
	if err == nil {
		return 0, true
	}
	var es interface{ ExitStatus() int }
	if errors.As(err, &es) {
		return es.ExitStatus(), true
	}
	return 0, false
}

// exitOf maps a shell's exit status to SPEC §4's terms: above 128 is the
// signal 128 + n (as sh reports a child killed by a signal).
func exitOf(status int) supervisor.Exit {
	if status > 128 && status <= 128+64 {
		if name := unix.SignalName(syscall.Signal(status - 128)); name != "" {
			return supervisor.Exit{Signal: name}
		}
	}
	return supervisor.Exit{Code: &status}
}

// process is one submission: an exec in its agent's pod
// (supervisor.Process).
type process struct {
	r      *Runner
	req    supervisor.StartRequest
	nonce  string
	ctx    context.Context
	cancel context.CancelFunc
	stderr *markerFilter

	exitOnce    sync.Once
	exited      chan struct{}
	exit        supervisor.Exit
	streamsDone chan struct{} // closed when the exec ended (or never started)
	execing     chan struct{} // closed when the exec starts
	selfEnded   atomic.Bool   // the wrapper reported the main process's end
	left        atomic.Int64  // processes it left, as the wrapper counted
	lastRead    atomic.Int64
	pod         atomic.Pointer[agentPod]
}

func (p *process) out(s supervisor.Stream, b []byte) {
	p.lastRead.Store(time.Now().UnixNano())
	p.req.Output(s, b)
}

// finish records how the main process ended, once.
func (p *process) finish(e supervisor.Exit) {
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
	ap, err := p.r.ensurePod(p.ctx, p.req.AgentID, p.req.Vars)
	if err != nil {
		if p.ctx.Err() != nil {
			p.finish(supervisor.Exit{}) // stopped while its pod was starting
		} else {
			p.finish(supervisor.Exit{Err: err.Error()})
		}
		return
	}
	p.pod.Store(ap)
	if p.req.Placed != nil {
		p.req.Placed(supervisor.Place{Pod: ap.name, Node: ap.node})
	}
	go p.label(ap.name)
	args := append([]string{"/bin/sh", "-c", wrapper, "subdash-submission", p.nonce, p.req.Command}, p.req.Vars...)
	close(p.execing)
	stdin, feed := io.Pipe()
	go p.req.Stdin(feed)
	defer stdin.Close() // a feed still writing (approvals) gets an error
	err = p.r.exec(p.ctx, ap.name, args, stdin,
		writerFunc(func(b []byte) { p.out(supervisor.Stdout, b) }), p.stderr)
	p.stderr.flush()
	if status, ok := exitStatus(err); ok {
		p.finish(exitOf(status))
		return
	}
	if p.ctx.Err() != nil {
		p.finish(supervisor.Exit{})
		return
	}
	if _, gerr := p.r.cs.CoreV1().Pods(p.r.ns).Get(context.Background(), ap.name, metav1.GetOptions{}); apierrors.IsNotFound(gerr) {
		p.r.forget(p.req.AgentID, ap)
		p.finish(supervisor.Exit{Err: "pod " + ap.name + " is gone (deleted or evicted); the next submission starts a new one"})
		return
	}
	p.finish(supervisor.Exit{Err: "lost the submission's stream from pod " + ap.name + ": " + err.Error()})
}

// label names the running submission on the pod (SPEC §13), best effort.
func (p *process) label(pod string) {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, LabelSubmission, labelValue(p.req.SubmissionID))
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	_, _ = p.r.cs.CoreV1().Pods(p.r.ns).Patch(ctx, pod, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
}

// Exited implements supervisor.Process.
func (p *process) Exited() <-chan struct{} { return p.exited }

// Exit implements supervisor.Process.
func (p *process) Exit() supervisor.Exit {
	select {
	case <-p.exited:
		return p.exit
	default:
		return supervisor.Exit{}
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

// WaitQuiet implements supervisor.Process.
func (p *process) WaitQuiet(quiet time.Duration) {
	start := time.Now().UnixNano()
	for {
		last := max(p.lastRead.Load(), start)
		wait := quiet - time.Since(time.Unix(0, last))
		if wait <= 0 {
			return
		}
		select {
		case <-p.streamsDone:
			return
		case <-time.After(wait):
		}
	}
}

// Terminate ends every process of the submission in the pod (SPEC §13):
// SIGTERM to all, SIGKILL after grace rounded up to whole seconds (at once
// when cut closes). A submission whose pod is still starting is given up.
// When the pod cannot be reached to do so, the pod itself is deleted (its
// grace period, then SIGKILL), so nothing outlives the submission.
func (p *process) Terminate(grace time.Duration, cut <-chan struct{}) error {
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
	secs, _ := wholeSeconds(grace)
	res := make(chan error, 2)
	go func() { res <- p.kill(ap.name, secs*10) }()
	var err error
	select {
	case err = <-res:
	case <-cut:
		go func() { res <- p.kill(ap.name, 0) }()
		err = <-res
	}
	if err == nil {
		return nil
	}
	// The pod cannot be reached to signal the processes: delete it.
	p.r.forget(p.req.AgentID, ap)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second+deleteWait)
	defer cancel()
	if derr := p.r.deletePod(ctx, ap.name, true); derr != nil {
		return fmt.Errorf("cannot terminate the submission in pod %s (%v), nor delete the pod: %v", ap.name, err, derr)
	}
	return nil
}

// kill runs the killer in the pod with the grace period in tenths of a
// second; an error means the pod could not be reached, or processes
// survived SIGKILL.
func (p *process) kill(pod string, tenths int64) error {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(tenths)*100*time.Millisecond+killWait+connectTimeout)
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

// Place implements supervisor.Process.
func (p *process) Place() supervisor.Place {
	if ap := p.pod.Load(); ap != nil {
		return supervisor.Place{Pod: ap.name, Node: ap.node}
	}
	return supervisor.Place{Pod: p.r.podName(p.req.AgentID)}
}

// writerFunc is an io.Writer that hands each write to a function.
type writerFunc func([]byte)

// Write calls f with b; it never fails.
func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }
