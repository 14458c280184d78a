//go:build kube

package main

// Built with -tags kube only: the Kubernetes runner links k8s.io/client-go,
// whose package initialisation costs every process of this binary memory
// and start-up time (BENCHMARKS.md), so the default build leaves it out
// and `subdash ctl`, `subdash agent`, viewers and local hosts stay light
// (docs/kubernetes.md).

import (
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/runner/kube"
)

func init() { runner.Register(runner.Kubernetes, kube.Factory) }
