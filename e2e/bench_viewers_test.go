package e2e

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestBenchViewersFlood (20 viewers on a four-flood host, goal host CPU
// per GB ≤ 1.3× none), run only with SUBDASH_BENCH=1:
// `subdash serve` with four agents flooding with `yes` (no log cap, so
// bytes in the log files measure what the host handled); the host's CPU
// per GB over 8 s with no viewer, then with SUBDASH_BENCH_VIEWERS (default
// 20) viewers attached in tmux at 160x45, then with only their event
// streams (read and dropped), then with none again. SUBDASH_BENCH_VARIANTS
// (as TestBenchThousand's) runs that sequence for each binary in turn,
// host and viewers of the same binary.
//
//	SUBDASH_BENCH=1 SUBDASH_BENCH_VIEWERS=20 go test -run 'TestBenchViewersFlood$' -count=1 -v ./e2e/
func TestBenchViewersFlood(t *testing.T) {
	benchSeconds(t)
	n := 20
	if v := os.Getenv("SUBDASH_BENCH_VIEWERS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("SUBDASH_BENCH_VIEWERS=%q: give a number of viewers", v)
		}
	}
	for _, v := range benchVariants(t) {
		t.Run(v.name, func(t *testing.T) { viewersFlood(t, v, n) })
	}
}

// viewersFlood is TestBenchViewersFlood's sequence for one variant.
func viewersFlood(t *testing.T, bv benchVariant, n int) {
	const window = 8 * time.Second
	w := newWorkspace(t)
	cmd := exec.Command(bv.bin, append([]string{"serve", "--command", floodCommand, "--max-agents", "4", "--max-log-size", "0"}, w.flags()...)...)
	cmd.Env = append(testEnv(), bv.env...)
	host := startCmd(t, cmd)
	waitListening(t, host, w.socket)
	spawnFloods(t, w)
	hpid := host.cmd.Process.Pid
	perGB := func() (cores, perGB float64) {
		c0, b0, t0 := cpuTicks(hpid), logBytes(w.state), time.Now()
		time.Sleep(window)
		cpu := float64(cpuTicks(hpid)-c0) / 100
		return cpu / time.Since(t0).Seconds(), cpu / (float64(logBytes(w.state)-b0) / 1e9)
	}
	c1, g1 := perGB()
	var vs []*dash
	for range n {
		v := startViewerOf(t, w, bv.bin, "attach", "--socket", w.socket)
		v.waitText("spam ")
		vs = append(vs, v)
	}
	cn, gn := perGB()
	var vcpu float64
	for _, v := range vs {
		p := v.dashPID()
		c0, t0 := cpuTicks(p), time.Now()
		time.Sleep(200 * time.Millisecond)
		vcpu += float64(cpuTicks(p)-c0) / 100 / time.Since(t0).Seconds()
	}
	for _, v := range vs {
		v.keys("q")
		v.waitExit()
	}
	// Their event streams alone (read and dropped: no screen, no window
	// fetches, no CPU taken from the host by drawing).
	stop := eventStreams(t, w.socket, n)
	cs, gs := perGB()
	stop()
	c2, g2 := perGB()
	base := (g1 + g2) / 2
	t.Logf("four yes floods, serve: no viewer %.3f cores %.2f CPU s/GB; %d viewers %.3f cores %.2f CPU s/GB (the viewers ~%.2f cores together); their %d event streams only %.3f cores %.2f CPU s/GB; no viewer again %.3f cores %.2f CPU s/GB; CPU per GB over none: viewers %.2f, streams %.2f",
		c1, g1, n, cn, gn, vcpu, n, cs, gs, c2, g2, gn/base, gs/base)
}
