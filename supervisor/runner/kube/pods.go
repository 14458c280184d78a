package kube

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// agentPod is a pod of this host: an agent's sandbox, or the warm pod that
// waits, running, for the next agent.
type agentPod struct {
	name  string
	ready chan struct{} // closed once it runs or failed to
	err   error         // why it cannot run; set before ready is closed
	node  string
	exec  *warmExec // the warm pod's exec waiting for a submission; r.mu
}

// newPod names a new pod of this host: subdash-<run suffix>-<n>. The name
// carries no agent id because the warm pod is named before any agent
// claims it; its LabelAgent says whose it is.
func (r *Runner) newPod() *agentPod {
	n := "subdash-"
	if r.suffix != "" {
		n += r.suffix + "-"
	}
	return &agentPod{name: n + strconv.FormatInt(r.podSeq.Add(1), 10), ready: make(chan struct{})}
}

// podSpec is a pod named name for agentID ("" for the warm pod): the
// image's working directory, no service account token (the agent gets no
// access to the cluster), PID 1 a shell that only waits, and only the
// environment the user named (SPEC §13); the submission's own variables
// come with each exec.
func (r *Runner) podSpec(name, agentID string) *corev1.Pod {
	env := append([]corev1.EnvVar(nil), r.env...)
	var from []corev1.EnvFromSource
	for _, s := range r.secrets {
		from = append(from, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s}}})
	}
	labels := map[string]string{LabelManagedBy: managedBy, LabelMachine: r.machine, LabelRun: labelValue(r.host.RunID)}
	if agentID != "" {
		labels[LabelAgent] = labelValue(agentID)
	}
	no := false
	grace := r.graceSec
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   r.ns,
			Labels:      labels,
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

// keeper is the pod's PID 1: it waits, reaping what submissions left
// behind. Deleting the pod sends it SIGTERM (PID 1 alone): it then sends
// SIGTERM (and SIGCONT) to every other process of the container and exits
// once none is left alive, so that what still runs when the host ends
// gets SIGTERM, then SIGKILL from the runtime after the pod's grace
// period, as a submission's processes do (SPEC §4, §13).
const keeper = `stop() {
  kill -TERM -1 2>/dev/null; kill -CONT -1 2>/dev/null
  while :; do
    n=0
    for d in /proc/[0-9]*; do
      [ "$d" = /proc/1 ] && continue
      s=; { read -r s < "$d/stat"; } 2>/dev/null || continue
      case ${s##*) } in Z*|X*) ;; *) n=$((n+1));; esac
    done
    [ "$n" -eq 0 ] && exit 0
    sleep 0.1 2>/dev/null || sleep 1
  done
}
trap stop TERM INT
while :; do sleep 3600 & wait $!; done`

// ensurePod returns agent's running pod. The agent's first submission
// takes the warm pod when there is one (it then needs only its exec), or
// else creates a pod of its own and waits for it to run (SPEC §13: a pod
// that cannot start is an error with the cluster's reason within
// --kube-start-timeout); either way a new warm pod is started for the next
// agent. assigned is called with the pod as soon as it is chosen, before
// it runs.
func (r *Runner) ensurePod(ctx context.Context, agentID string, assigned func(*agentPod)) (*agentPod, error) {
	warmOK := true
	for {
		p, claimed, creator := r.podFor(agentID, warmOK)
		if p == nil {
			return nil, errors.New("the host is ending; no new pod is started")
		}
		if assigned != nil {
			assigned(p)
		}
		if creator {
			r.start(ctx, p, agentID)
		}
		select {
		case <-p.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if p.err == nil {
			return p, nil
		}
		r.forget(agentID, p)
		if !claimed {
			return nil, p.err
		}
		// The warm pod could not start after all: the agent's own pod
		// says why, if it is not a passing failure.
		warmOK = false
	}
}

// podFor picks agent's pod: the one it has (running, or starting for
// another of its submissions), else the warm pod (claimed) when warmOK,
// else a new one that the caller starts (creator). It returns nil once the
// runner is closed.
func (r *Runner) podFor(agentID string, warmOK bool) (p *agentPod, claimed, creator bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p = r.pods[agentID]; p != nil {
		return p, false, false
	}
	if r.closed {
		return nil, false, false
	}
	defer r.keepWarm()
	if w := r.warm; warmOK && w != nil {
		r.warm = nil
		r.pods[agentID] = w
		return w, true, false
	}
	p = r.newPod()
	r.pods[agentID] = p
	return p, false, true
}

// start starts pod p for agentID ("" for the warm pod), records its node or
// why it cannot run, and closes p.ready. A warm pod that cannot start is
// dropped: the next new agent starts a pod of its own, which says why.
func (r *Runner) start(ctx context.Context, p *agentPod, agentID string) {
	p.node, p.err = r.startPod(ctx, r.podSpec(p.name, agentID))
	r.mu.Lock()
	switch {
	case p.err == nil:
		r.warmFailed = false
	case agentID == "":
		r.warmFailed = true
	}
	if r.warm == p && p.err != nil {
		r.warm = nil
	}
	if r.warm == p && r.rc != nil {
		p.exec = r.openWarmExec(p.name)
	}
	r.mu.Unlock()
	close(p.ready)
}

// takeExec takes the warm exec that came with pod p, if any.
func (r *Runner) takeExec(p *agentPod) *warmExec {
	r.mu.Lock()
	defer r.mu.Unlock()
	we := p.exec
	p.exec = nil
	return we
}

// forget drops agent's pod p after it failed or was found gone, so that
// the next submission starts another.
func (r *Runner) forget(agentID string, p *agentPod) {
	r.mu.Lock()
	if r.pods[agentID] == p {
		delete(r.pods, agentID)
	}
	r.mu.Unlock()
}

// startPod creates pod spec and waits until its container runs; it returns
// the node, or the reason in words. A pod that cannot start is deleted,
// also when ctx ended while its creation was under way (the cluster may
// have created it).
func (r *Runner) startPod(ctx context.Context, spec *corev1.Pod) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.startTimeout)
	defer cancel()
	fail := func(reason string) (string, error) {
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			_ = r.deletePod(context.Background(), spec.Name, true)
		}()
		return "", errors.New(reason)
	}
	pods := r.cs.CoreV1().Pods(r.ns)
	created, err := pods.Create(ctx, spec, metav1.CreateOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return fail(ctx.Err().Error())
		}
		return "", createError(err, r.ns)
	}
	// Watching from the creation's resource version sees every later
	// change, and the creation is not delayed by the watch's round trip.
	w, werr := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + spec.Name, ResourceVersion: created.ResourceVersion})
	if werr == nil {
		defer w.Stop()
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
		next, werr = r.nextState(ctx, w, werr, spec.Name)
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

// nextState waits for the next state of pod name: its next watch event,
// or without a watch (forbidden or ended: werr) a look after 200 ms. It
// returns nil when there is none to read (ctx ended, an event of another
// kind) and the watch's error, once it ended.
func (r *Runner) nextState(ctx context.Context, w watch.Interface, werr error, name string) (*corev1.Pod, error) {
	if werr != nil {
		select {
		case <-time.After(200 * time.Millisecond):
			p, _ := r.cs.CoreV1().Pods(r.ns).Get(ctx, name, metav1.GetOptions{})
			return p, werr
		case <-ctx.Done():
			return nil, werr
		}
	}
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			return nil, errors.New("watch ended")
		}
		if pod, isPod := ev.Object.(*corev1.Pod); isPod && pod.Name == name {
			return pod, nil
		}
	case <-ctx.Done():
	}
	return nil, nil
}

// label sets the agent and submission labels of pod (SPEC §13) with one
// merge patch.
func (r *Runner) label(pod, agentID, submissionID string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q,%q:%q}}}`, LabelAgent, labelValue(agentID), LabelSubmission, labelValue(submissionID))
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	_, err := r.cs.CoreV1().Pods(r.ns).Patch(ctx, pod, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}
