package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

// hostAlive reports whether process pid of this machine is alive: it
// exists and has not exited. A host killed with SIGKILL stays a zombie
// until its parent reaps it, which a parent that is not a shell may do
// seconds later (a container's PID 1); its pods are left all the same.
// (runner/local's ProcessAlive says the same of process groups' members;
// this package imports no other subdash package.)
func hostAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) // gone meanwhile; no /proc: kill said alive
	}
	// pid (comm) state ...: comm may hold spaces and parentheses
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z' && b[i+2] != 'X'
	}
	return true
}

// Close deletes this host's pods, the agents' and the warm one (their
// grace period, then SIGKILL), stops a pod start under way (deleting that
// pod too), and returns once they are gone or ctx ends (SPEC §13: nothing
// outlives its host).
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.stop()
	var names []string
	for id, p := range r.pods {
		names = append(names, p.name)
		delete(r.pods, id)
	}
	if r.warm != nil {
		names = append(names, r.warm.name)
		r.warm = nil
	}
	r.mu.Unlock()
	type result struct {
		name string
		err  error
	}
	res := make(chan result, len(names))
	for _, name := range names {
		go func() { res <- result{name, r.deletePod(ctx, name, true)} }()
	}
	var out, terminating []string
	for range names {
		switch x := <-res; {
		case errors.Is(x.err, errTerminating):
			terminating = append(terminating, x.name)
		case x.err != nil:
			out = append(out, x.err.Error())
		}
	}
	if n := len(terminating); n > 0 {
		sort.Strings(terminating)
		if n > 5 {
			terminating = append(terminating[:5], fmt.Sprintf("and %d more", n-5))
		}
		out = append(out, fmt.Sprintf("%d pod(s) in namespace %s still terminating when the host ended (deleted; the cluster removes them): %s",
			n, r.ns, strings.Join(terminating, ", ")))
	}
	done := make(chan struct{})
	go func() { r.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		out = append(out, "pods of this host were still being started or deleted when the host ended: "+ctx.Err().Error())
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
			return fmt.Errorf("pod %s: %w", name, errTerminating)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("pod %s did not go away within %s: %w", name, time.Duration(grace)*time.Second+deleteWait, errTerminating)
}

// errTerminating says that a deleted pod was still terminating when the
// wait for it ended.
var errTerminating = errors.New("still terminating")
