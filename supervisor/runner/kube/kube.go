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
// costs every process memory and start-up time (BENCHMARKS.md). Only a
// binary built with `-tags kube` links it (main_kube.go registers the
// runner), so `subdash ctl`, `subdash agent`, viewers and local hosts
// built the usual way do not pay for it.
//
// It implements the interfaces of package runner and imports no other
// subdash package: main_kube.go registers Factory (runner.Register); only
// its tests drive it through the engine.
package kube

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/subdash/subdash/supervisor/runner"
)

// Labels and annotations of the pods this runner creates (SPEC §13: labels
// naming the host, agent and submission).
const (
	LabelManagedBy  = "app.kubernetes.io/managed-by" // "subdash"
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
	killWait = runner.KillWait
	// clientQPS and clientBurst are the client-side request rate limit
	// (requests per second, and at once) unless the kubeconfig sets one.
	clientQPS, clientBurst = 100, 200
	// deleteWait bounds the wait for this host's pods to be gone at Close,
	// beyond their grace period.
	deleteWait = 15 * time.Second
)

// Factory creates the Kubernetes runner for the host's settings
// (runner.Factory): the cluster of KUBECONFIG or the in-cluster
// configuration, checked now.
func Factory(set runner.Settings) (runner.Runner, error) {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, configError(err, os.Getenv("KUBECONFIG"))
	}
	ns := set.Kube.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	// client-go's default client-side limit (5 requests/s, bursts of 10)
	// would queue the requests of agents spawned together: each agent's
	// first submission makes four (create, watch, label patch, exec), so
	// 50 spawns would wait about 40 s. The server's priority and fairness
	// still protects the cluster.
	if rc.QPS == 0 {
		rc.QPS, rc.Burst = clientQPS, clientBurst
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("--runner kubernetes: %v", err)
	}
	r, err := newRunner(cs, rc, ns, set, os.Getenv)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	r.keepWarmPods()
	return r, nil
}

// init sends client-go's own log lines (klog: websocket pings of streams
// that just closed, retried watches) nowhere instead of to stderr, where
// they would be drawn over the dashboard. Every failure that matters to a
// submission comes back from client-go as an error, and the runner puts it
// in words into the submission's last_error or the host's notes. klog
// wants its logger set before anything logs, hence at initialisation.
func init() { klog.SetLogger(logr.Discard()) }

// configError words a cluster configuration that cannot be loaded; kc is
// $KUBECONFIG. client-go names an empty configuration with a hint about
// KUBERNETES_MASTER, a variable nobody sets any more.
func configError(err error, kc string) error {
	switch {
	case clientcmd.IsEmptyConfig(err) && kc != "":
		return fmt.Errorf("--runner kubernetes: no cluster configuration: KUBECONFIG=%s names no kubeconfig file that exists; point it at the cluster's kubeconfig", kc)
	case clientcmd.IsEmptyConfig(err):
		return fmt.Errorf("--runner kubernetes: no cluster configuration: KUBECONFIG is not set, there is no ~/.kube/config, and this host does not run inside a cluster; set KUBECONFIG to the cluster's kubeconfig file")
	}
	return fmt.Errorf("--runner kubernetes: cannot load the cluster configuration: %v; check KUBECONFIG", err)
}

// Runner runs submissions in pods (runner.Runner).
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
	host         runner.Host
	suffix       string // from the run id, so pod names of hosts differ

	warmPods bool // keep a warm pod for the next agent (pods.go)
	podSeq   atomic.Int64
	ctx      context.Context // ends at Close: stops a warm pod's start
	stop     context.CancelFunc

	mu         sync.Mutex
	pods       map[string]*agentPod // by agent id
	warm       *agentPod            // running or starting, claimed by the next new agent
	warmFailed bool                 // the last warm pod could not start
	closed     bool                 // Close began: no new pods
	bg         sync.WaitGroup       // pod starts and deletions in the background
}

func newRunner(cs kubernetes.Interface, rc *rest.Config, ns string, set runner.Settings, getenv func(string) string) (*Runner, error) {
	k, host := set.Kube, set.Host
	r := &Runner{cs: cs, rc: rc, ns: ns, image: k.Image, node: k.Node, secrets: k.Secrets,
		startTimeout: k.StartTimeout, host: host, pods: map[string]*agentPod{}}
	r.ctx, r.stop = context.WithCancel(context.Background())
	if r.startTimeout <= 0 {
		r.startTimeout = runner.DefaultKubeStartTimeout
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
	r.graceSec, r.graceNote = wholeSeconds(set.Grace)
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
// periods are (SPEC §13), and says so when it changed it. The engine gives
// a positive grace (its --grace default applied: runner.Settings).
func wholeSeconds(grace time.Duration) (int64, string) {
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
