package supervisor

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// RunnerKubernetes names the runner of pods in a Kubernetes cluster
// (SPEC §13, package supervisor/kube).
const RunnerKubernetes = "kubernetes"

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

// set reports whether any --kube-* flag was given.
func (k KubeOptions) set() bool {
	return k.Namespace != "" || k.Image != "" || k.Node != "" || len(k.Env) > 0 || len(k.Secrets) > 0 ||
		k.StartTimeout != 0 && k.StartTimeout != DefaultKubeStartTimeout
}

// Host is what a runner knows of the host that creates it, to label what it
// starts and to find what hosts that are gone left behind (SPEC §13).
type Host struct {
	RunID string // this run's id, e.g. 20261201T091200Z-a1b2c3
	PID   int    // this process
}

// RunnerFactory creates a runner for cfg (New calls it). An error says, in
// words, why the runner cannot work (SPEC §13: no cluster, no namespace,
// missing permission), and the host does not start.
type RunnerFactory func(cfg Config, host Host) (Runner, error)

var (
	factoriesMu sync.Mutex
	factories   = map[string]RunnerFactory{
		RunnerLocal: func(cfg Config, _ Host) (Runner, error) { return LocalRunner(cfg.Environ), nil },
	}
)

// RegisterRunner makes --runner name available. The Kubernetes runner
// registers itself from a file of package main built with -tags kube, so
// that binaries without it do not carry client-go (README: Kubernetes).
func RegisterRunner(name string, f RunnerFactory) {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	factories[name] = f
}

func runnerFactory(name string) (RunnerFactory, bool) {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	f, ok := factories[name]
	return f, ok
}

// resolveRunner checks --runner and the --kube-* flags (SPEC §13).
func resolveRunner(c *Config, o Options) error {
	name := strings.TrimSpace(o.Runner)
	if name == "" {
		name = RunnerLocal
	}
	c.RunnerName = name
	c.Kube = o.Kube
	switch name {
	case RunnerLocal:
		if o.Kube.set() {
			return fmt.Errorf("--kube-* flags need --runner %s", RunnerKubernetes)
		}
		return nil
	case RunnerKubernetes:
		if strings.TrimSpace(o.Kube.Image) == "" {
			return fmt.Errorf("--runner %s needs --kube-image IMAGE: the container image that holds the agent command and /bin/sh", RunnerKubernetes)
		}
		if o.Kube.StartTimeout < 0 {
			return fmt.Errorf("invalid --kube-start-timeout %s: must not be negative", o.Kube.StartTimeout)
		}
		if c.Kube.StartTimeout == 0 {
			c.Kube.StartTimeout = DefaultKubeStartTimeout
		}
		for _, n := range o.Kube.Env {
			if n == "" || strings.ContainsAny(n, "= ") {
				return fmt.Errorf("invalid --kube-env %q: give the name of a variable of this environment, without =value", n)
			}
		}
		if _, ok := runnerFactory(name); !ok {
			return fmt.Errorf("this subdash binary was built without the Kubernetes runner; build it with `go build -tags kube` (README: Running subagents on Kubernetes)")
		}
		return nil
	}
	return fmt.Errorf("unknown --runner %q: use %s or %s", name, RunnerLocal, RunnerKubernetes)
}
