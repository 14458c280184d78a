package kube

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/runner"
)

// Benchmarks against the cluster of KUBECONFIG (skipped without one, as
// the end-to-end tests are); figures and how they were taken are in
// BENCHMARKS.md ("Kubernetes runner"):
//
//	go test -run '^$' -bench 'PodStart|Exec|SpawnFirstLine' -benchtime 5x ./supervisor/runner/kube/

// firstByte is an io.Writer that records when its first byte came.
type firstByte struct {
	once sync.Once
	at   time.Time
}

func (f *firstByte) Write(b []byte) (int, error) {
	f.once.Do(func() { f.at = time.Now() })
	return len(b), nil
}

// phases are the times from a pod's creation request, in milliseconds.
type phases struct{ created, scheduled, running, ready, firstByte float64 }

// BenchmarkPodStart splits a pod's start into its phases, as the cluster
// reports them: creation answered, PodScheduled, container running (the
// kubelet's status), Ready, and the first byte of an exec of `echo` right
// after it runs; the runner without a warm pod pays all of them.
func BenchmarkPodStart(b *testing.B) {
	image, node := testCluster(b)
	r := benchRunner(b, image, node)
	var all []phases
	for i := 0; i < b.N; i++ {
		all = append(all, podStartPhases(b, r, fmt.Sprintf("subdash-bench-%d-%d", os.Getpid(), i)))
	}
	report(b, all)
}

func podStartPhases(b *testing.B, r *Runner, name string) phases {
	pods := r.cs.CoreV1().Pods(r.ns)
	ms := func(t0, t time.Time) float64 { return float64(t.Sub(t0).Microseconds()) / 1000 }
	t0 := time.Now()
	created, err := pods.Create(context.Background(), r.podSpec(name, ""), metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		zero := int64(0)
		_ = pods.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	}()
	ph := phases{created: ms(t0, time.Now())}
	w, err := pods.Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: created.ResourceVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	type stamped struct {
		at  time.Time
		pod *corev1.Pod
	}
	events := make(chan stamped, 64) // stamped on arrival, while the exec runs
	go func() {
		defer close(events)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				events <- stamped{time.Now(), p}
			}
		}
	}()
	for ph.ready == 0 {
		ev, ok := <-events
		if !ok {
			b.Fatal("watch ended")
		}
		p, now := ev.pod, ms(t0, ev.at)
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && ph.scheduled == 0 {
				ph.scheduled = now
			}
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ph.ready = now
			}
		}
		if podState(p).running && ph.running == 0 {
			ph.running = now
			out := &firstByte{}
			if err := r.exec(context.Background(), name, []string{"echo", "x"}, nil, out, io.Discard); err != nil {
				b.Fatal(err)
			}
			ph.firstByte = ms(t0, out.at)
		}
	}
	return ph
}

// BenchmarkExec is an exec of `echo` in a running pod: the time to its
// first byte and to its end, what a submission to an agent with its pod
// (or a warm pod) costs before the agent command runs.
func BenchmarkExec(b *testing.B) {
	image, node := testCluster(b)
	r := benchRunner(b, image, node)
	p := r.newPod()
	r.start(context.Background(), p, "")
	if p.err != nil {
		b.Fatal(p.err)
	}
	defer r.deletePod(context.Background(), p.name, false) //nolint:errcheck // cleanup of the benchmark's pod
	var first, end []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		out := &firstByte{}
		if err := r.exec(context.Background(), p.name, []string{"echo", "x"}, nil, out, io.Discard); err != nil {
			b.Fatal(err)
		}
		end = append(end, float64(time.Since(t0).Microseconds())/1000)
		first = append(first, float64(out.at.Sub(t0).Microseconds())/1000)
	}
	b.ReportMetric(median(first), "ms-first-byte")
	b.ReportMetric(median(end), "ms-end")
}

// BenchmarkSpawnFirstLine is spawn → the first line in the agent's log,
// through the supervisor's operations, for the local runner and the
// Kubernetes runner with its warm pod and without one (every agent's first
// submission then starts its pod), in one run. Each iteration spawns one
// agent and waits for the warm pod to be back before the next.
func BenchmarkSpawnFirstLine(b *testing.B) {
	image, node := testCluster(b)
	for _, c := range []struct {
		name string
		warm bool
		kube bool
	}{{"local", false, false}, {"kubernetes-warm-pod", true, true}, {"kubernetes-no-warm-pod", false, true}} {
		b.Run(c.name, func(b *testing.B) {
			var s *supervisor.Supervisor
			if c.kube {
				s = newHost(b, evalCommand, image, node, time.Second)
				if !c.warm {
					noWarmPod(s.Config().Runner.(*Runner))
				}
			} else {
				cfg := hostConfig(b.TempDir(), evalCommand, "", "", time.Second)
				cfg.RunnerName, cfg.Kube = runner.Local, runner.KubeOptions{}
				var err error
				if s, err = supervisor.New(cfg); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			}
			var got []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if c.warm {
					waitWarm(b, s.Config().Runner.(*Runner))
				}
				b.StartTimer()
				t0 := time.Now()
				sp, err := s.Spawn(b.Context(), "echo first-line; sleep 30")
				if err != nil {
					b.Fatal(err)
				}
				for {
					if l, _ := s.Logs(sp.AgentID, 0); strings.Contains(l, "first-line") {
						break
					}
					if time.Since(t0) > time.Minute {
						b.Fatal("no first line within a minute")
					}
					time.Sleep(2 * time.Millisecond)
				}
				got = append(got, float64(time.Since(t0).Microseconds())/1000)
				b.StopTimer()
				_, _ = s.Close(b.Context(), sp.AgentID)
				b.StartTimer()
			}
			b.ReportMetric(median(got), "ms-median")
			b.ReportMetric(maxOf(got), "ms-max")
		})
	}
}

// benchRunner is a runner of the cluster of KUBECONFIG, without a warm pod.
func benchRunner(b *testing.B, image, node string) *Runner {
	cfg := hostConfig(b.TempDir(), "true", image, node, time.Second)
	run, err := Factory(runner.Settings{Environ: cfg.Environ, Grace: cfg.Grace, Kube: cfg.Kube,
		Host: runner.Host{RunID: fmt.Sprintf("bench-%x", time.Now().UnixNano()), PID: os.Getpid()}})
	if err != nil {
		b.Fatal(err)
	}
	r := run.(*Runner)
	noWarmPod(r)
	b.Cleanup(func() { _ = r.Close(context.Background()) })
	return r
}

// noWarmPod stops r keeping a warm pod and deletes the one it has.
func noWarmPod(r *Runner) {
	r.mu.Lock()
	r.warmPods = false
	w := r.warm
	r.warm = nil
	r.mu.Unlock()
	if w != nil {
		<-w.ready
		_ = r.deletePod(context.Background(), w.name, false)
	}
}

// waitWarm waits until r's warm pod runs and its warm exec is ready, as
// for an agent spawned a few seconds after the one before.
func waitWarm(b *testing.B, r *Runner) {
	b.Helper()
	testkit.Eventually(b, time.Minute, "a warm pod with a ready warm exec", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.warm == nil || r.warm.exec == nil {
			return false
		}
		select {
		case <-r.warm.exec.ready:
			return true
		default:
			return false
		}
	})
}

func report(b *testing.B, all []phases) {
	pick := func(f func(phases) float64) float64 {
		var v []float64
		for _, p := range all {
			v = append(v, f(p))
		}
		return median(v)
	}
	b.ReportMetric(pick(func(p phases) float64 { return p.created }), "ms-created")
	b.ReportMetric(pick(func(p phases) float64 { return p.scheduled }), "ms-scheduled")
	b.ReportMetric(pick(func(p phases) float64 { return p.running }), "ms-running")
	b.ReportMetric(pick(func(p phases) float64 { return p.ready }), "ms-ready")
	b.ReportMetric(pick(func(p phases) float64 { return p.firstByte }), "ms-exec-first-byte")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
