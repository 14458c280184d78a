package kube

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1 "k8s.io/api/authorization/v1"
)

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
	probe := r.podSpec("subdash-dry-run", "")
	_, err := r.cs.CoreV1().Pods(r.ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case err == nil, isQuota(err):
	case apierrors.IsNotFound(err):
		return fmt.Errorf("--runner kubernetes: namespace %q does not exist; create it (kubectl create namespace %s) or pass another --kube-namespace", r.ns, r.ns)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("--runner kubernetes: not allowed to create pods in namespace %q: %v; grant the host the Role in docs/kubernetes.md", r.ns, apiMessage(err))
	default:
		return fmt.Errorf("--runner kubernetes: cannot create pods in namespace %q: %v", r.ns, apiMessage(err))
	}
	for _, need := range requiredAccess {
		ok, known := r.allowed(ctx, need)
		if known && !ok {
			return fmt.Errorf("--runner kubernetes: not allowed to %s %s in namespace %q; grant the host the Role in docs/kubernetes.md", need.verb, need.resource, r.ns)
		}
	}
	return nil
}

// access is one verb on one resource of the core group.
type access struct{ verb, resource, sub string }

// requiredAccess is what the host does in its namespace; docs/kubernetes.md's Role
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
