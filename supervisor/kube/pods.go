package kube

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
