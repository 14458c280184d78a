package local_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

// floodChild writes 256 MiB of 56-byte lines to stdout. Override with
// SUBDASH_BENCH_CHILD to measure another producer.
func floodChild() string {
	if c := os.Getenv("SUBDASH_BENCH_CHILD"); c != "" {
		return c
	}
	return "yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c 268435456"
}

// The local runner's benchmarks drive it through a host (the engine), as
// the Kubernetes runner's do (runner/kube/bench_test.go): what they measure
// is the whole path of a submission's output and end.

// BenchmarkFlood measures a child flooding stdout through the supervisor
// against the same child writing to /dev/null without it, and against the
// physical floor of keeping every byte: the same child through a
// pipe, copied by cat into a file. All three run in every iteration. It
// reports the ratio of the wall times to /dev/null (goal: ≤ 1.5 for
// producers slower than the kernel's pipe), the ratio to the floor over all
// iterations, its lowest, median and highest single iteration (goal: ≤ 1.5;
// the median is least moved by an iteration another process slowed), the
// supervisor's throughput, the CPU seconds this process spent per GB
// delivered to the log file (user + system, getrusage(2)), and the peak
// resident memory of this process during the flood (VmHWM, reset before each
// run).
//
// The host has the default --max-log-size and the free-space floor, as
// `subdash` has; SUBDASH_BENCH_MAX_LOG sets another cap ("64MiB", "0").
// Bytes the cap dropped count as delivered: the pipeline handled them.
//
//	go test -run '^$' -bench BenchmarkFlood -benchtime 5x ./supervisor/runner/local/
func BenchmarkFlood(b *testing.B) {
	child := floodChild()
	dir := b.TempDir()
	maxLog := int64(supervisor.DefaultMaxLogSize)
	if v := os.Getenv("SUBDASH_BENCH_MAX_LOG"); v != "" {
		n, err := proto.ParseSize(v)
		if err != nil {
			b.Fatal(err)
		}
		maxLog = n
	}
	s, err := supervisor.New(supervisor.Config{Command: child, MaxAgents: 4, Dir: dir, StateDir: filepath.Join(dir, "state"),
		Grace: supervisor.DefaultGrace, Scrollback: supervisor.DefaultScrollback, Environ: os.Environ(), MaxLogSize: maxLog})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Shutdown(context.Background()) //nolint:errcheck // cleanup of the benchmark's supervisor
	var direct, floor, through, cpu time.Duration
	var peak, delivered int64
	var ratios []float64
	floorFile := filepath.Join(dir, "floor.log")
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if out, err := exec.Command("/bin/sh", "-c", child+" > /dev/null").CombinedOutput(); err != nil {
			b.Fatalf("standalone: %v %s", err, out)
		}
		direct += time.Since(start)

		start = time.Now()
		if out, err := exec.Command("/bin/sh", "-c", "("+child+") | cat > "+floorFile).CombinedOutput(); err != nil {
			b.Fatalf("floor: %v %s", err, out)
		}
		floorTime := time.Since(start)
		floor += floorTime
		os.Remove(floorFile) //nolint:errcheck // a scratch file, measured already

		resetPeakRSS()
		cpuStart := selfCPU()
		start = time.Now()
		res, err := s.Spawn(b.Context(), "flood")
		if err != nil {
			b.Fatal(err)
		}
		ms := proto.MaxWaitTimeoutMS
		w, err := s.Wait(context.Background(), []string{res.AgentID}, &ms)
		took := time.Since(start)
		through += took
		cpu += selfCPU() - cpuStart
		if err != nil || w.Status[res.AgentID] != proto.StatusCompleted {
			b.Fatalf("flood: %+v %v", w, err)
		}
		ratios = append(ratios, float64(took)/float64(floorTime))
		peak = max(peak, peakRSS())
		p, _ := s.LogPath(res.AgentID, 0)
		parts, _ := filepath.Glob(p + "*")
		for _, part := range parts {
			if fi, err := os.Stat(part); err == nil {
				delivered += fi.Size()
				os.Remove(part) //nolint:errcheck // a scratch file, measured already
			}
		}
		if l, err := s.List(b.Context()); err == nil {
			for _, a := range l.Agents {
				if a.AgentID == res.AgentID {
					delivered += a.LogDropped
				}
			}
		}
	}
	b.ReportMetric(float64(through)/float64(direct), "ratio")
	b.ReportMetric(float64(through)/float64(floor), "ratio-to-floor")
	b.ReportMetric(slices.Min(ratios), "floor-min")
	b.ReportMetric(slices.Max(ratios), "floor-max")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "floor-median") // an iteration another process slowed moves it least
	b.ReportMetric(cpu.Seconds()/(float64(delivered)/1e9), "cpu-s/GB")
	b.ReportMetric(float64(delivered)/through.Seconds()/(1<<20), "MiB/s")
	b.ReportMetric(float64(peak)/(1<<20), "peakRSS-MiB")
	b.ReportMetric(0, "ns/op")
}

// selfCPU returns the user plus system CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkExitToWait measures the time from a child's exit to Wait
// returning: the child prints its clock just before exiting and the
// benchmark subtracts it from the moment Wait returns. It reports the median
// and the 90th percentile (goal: median under 5 ms; Memo polls every 100 ms).
//
//	go test -run '^$' -bench BenchmarkExitToWait -benchtime 200x ./supervisor/runner/local/
func BenchmarkExitToWait(b *testing.B) {
	dir := b.TempDir()
	// sleep first so that Wait is already waiting when the child exits
	child := `sleep 0.02; date +%s%N`
	s, err := supervisor.New(supervisor.Config{Command: child, MaxAgents: 4, Dir: dir, StateDir: filepath.Join(dir, "state"),
		Grace: supervisor.DefaultGrace, Scrollback: supervisor.DefaultScrollback, Environ: os.Environ()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Shutdown(context.Background()) //nolint:errcheck // cleanup of the benchmark's supervisor
	lat := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		res, err := s.Spawn(b.Context(), "x")
		if err != nil {
			b.Fatal(err)
		}
		w, err := s.Wait(context.Background(), []string{res.AgentID}, nil)
		now := time.Now()
		if err != nil || w.TimedOut {
			b.Fatal(w, err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(*w.Details[res.AgentID].LastOutput), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, now.Sub(time.Unix(0, ns)))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "median-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10])/1e6, "p90-ms")
	b.ReportMetric(0, "ns/op")
}

// resetPeakRSS resets this process's peak resident set size (proc(5),
// /proc/pid/clear_refs value 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS returns VmHWM from /proc/self/status in bytes.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
