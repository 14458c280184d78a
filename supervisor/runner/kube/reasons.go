package kube

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/subdash/subdash/supervisor/runner"
)

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

// exitOf maps the status the wrapper shell reports to SPEC §4's terms
// (runner.ExitOf): 128+n, n a signal number (1–64), is signal n, as sh
// reports a child killed by a signal; anything else is an exit code.
func exitOf(status int) runner.Exit {
	if status > 128 && status <= 128+64 {
		return runner.ExitOf(0, syscall.Signal(status-128))
	}
	return runner.ExitOf(status, 0)
}
