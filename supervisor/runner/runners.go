package runner

import (
	"sync"
	"time"
)

// The runners of --runner (SPEC §13).
const (
	// Local names the runner of process groups on this machine (SPEC §4,
	// package runner/local), the default. It is also the runner an agent
	// record without one names (records of hosts before SPEC §13).
	Local = "local"
	// Kubernetes names the runner of pods in a Kubernetes cluster
	// (package runner/kube, linked only with -tags kube).
	Kubernetes = "kubernetes"
)

// EnvRunner is the variable naming the runner of a submission that does
// not run on the host's machine (SPEC §2, §13: SUBDASH_RUNNER=kubernetes
// in a pod); unset for the local runner.
const EnvRunner = "SUBDASH_RUNNER"

// DefaultKubeStartTimeout is --kube-start-timeout's default (SPEC §13).
const DefaultKubeStartTimeout = 2 * time.Minute

// KubeOptions are the --kube-* flags of SPEC §2 and §13.
type KubeOptions struct {
	Namespace    string        // --kube-namespace; "" = the configuration's namespace
	Image        string        // --kube-image (required)
	Node         string        // --kube-node; "" = the scheduler places pods
	Env          []string      // --kube-env NAME, repeatable: copied from the host's environment
	Secrets      []string      // --kube-secret NAME, repeatable: Secrets mounted as environment
	StartTimeout time.Duration // --kube-start-timeout; 0 = DefaultKubeStartTimeout
}

// Given reports whether any --kube-* flag was given (a --kube-start-timeout
// equal to its default counts as not given).
func (k KubeOptions) Given() bool {
	return k.Namespace != "" || k.Image != "" || k.Node != "" || len(k.Env) > 0 || len(k.Secrets) > 0 ||
		k.StartTimeout != 0 && k.StartTimeout != DefaultKubeStartTimeout
}

// Host is what a runner knows of the host that creates it, to label what it
// starts and to find what hosts that are gone left behind (SPEC §13).
type Host struct {
	RunID string // this run's id, e.g. 20261201T091200Z-a1b2c3
	PID   int    // this process
}

// Settings are what a runner is created with (Factory): the host's
// configuration as plain values, so that no runner imports the engine.
type Settings struct {
	// Environ is the host's environment, NAME=value: the local runner
	// starts every submission with it plus the submission's variables.
	Environ []string
	// Grace is --grace, the time between SIGTERM and SIGKILL (SPEC §4),
	// positive: the engine applies its default before it creates a runner.
	Grace time.Duration
	Kube  KubeOptions // the --kube-* flags, with --runner kubernetes
	Host  Host        // this run and process, to label what it starts (SPEC §13)
}

// Factory creates a runner for the host (the engine's New calls it). An
// error says, in words, why the runner cannot work (SPEC §13: no cluster,
// no namespace, missing permission), and the host does not start.
type Factory func(s Settings) (Runner, error)

var (
	factoriesMu sync.Mutex
	factories   = map[string]Factory{}
)

// Register makes --runner name available. The engine registers the local
// runner; the Kubernetes runner registers itself from a file of package
// main built with -tags kube, so that binaries without it do not carry
// client-go (docs/kubernetes.md).
func Register(name string, f Factory) {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	factories[name] = f
}

// Lookup returns the factory Register gave for name, and whether there is
// one.
func Lookup(name string) (Factory, bool) {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	f, ok := factories[name]
	return f, ok
}
