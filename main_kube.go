//go:build kube

package main

// Built with -tags kube only: the Kubernetes runner links k8s.io/client-go,
// whose package initialisation costs every process of this binary about
// +16 MB RSS and +7 ms start-up, so the default build leaves it out and
// `subdash ctl`, `subdash agent`, viewers and local hosts stay as light as
// they were (docs/kubernetes.md; BENCHMARKS.md).

import (
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/runner/kube"
)

func init() { runner.Register(runner.Kubernetes, kube.Factory) }
