package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// The many-agents benchmark: what
// an agent costs a host (serve, the dashboard at 160x45 or
// SUBDASH_BENCH_SIZE, a viewer of it) at 10, 100 and 1,000 agents each
// printing a short line a second, and how long a host takes to stop them
// all.
//
//	SUBDASH_BENCH=1 go test -run 'TestBenchThousand$' -count=1 -v -timeout 60m ./e2e/
//
// SUBDASH_BENCH_AGENTS lists the counts (default 10,100,1000),
// SUBDASH_BENCH_SIZE the terminal of the dash part's dashboard and viewer
// (default 160x45),
// SUBDASH_BENCH_RATE the lines per second of each agent (default 1),
// SUBDASH_BENCH_PARTS the parts (default serve,dash,close; quit: only the
// dashboard's quit of dash, without its costs; flood: the four `yes`
// floods, run once whatever the counts), and
// SUBDASH_BENCH_VARIANTS the binaries compared, interleaved in one run:
// "name=binary,VAR=value,…;name=…" (an empty binary is this tree's; a
// variable written viewer:VAR=value is the attached viewer's, the others
// the host's; keys:K types the keys K, e.g. v for the tiles, into the
// dash part's dashboard and viewer once they show the agents).
// SUBDASH_BENCH_PROFILE=dir records, while a dashboard's or a viewer's
// cost is measured, where its CPU goes (perf record -g at 499 Hz, into
// dir/<part>-<agents>-<variant>-<dashboard|viewer>.data; read it with
// perf report -i): the sampling costs a little, so compare figures of
// profiled runs only with each other.

// benchVariant is one binary, with extra environment, of a comparison.
type benchVariant struct {
	name, bin string
	env       []string // the host's
	viewerEnv []string // the viewer's (viewer:VAR=value)
	keys      string   // typed into the dash part's dashboard and viewer first (keys:K)
}

// benchVariants parses SUBDASH_BENCH_VARIANTS (default: this tree's binary).
func benchVariants(t testing.TB) []benchVariant {
	spec := os.Getenv("SUBDASH_BENCH_VARIANTS")
	if spec == "" {
		return []benchVariant{{name: "this", bin: binPath}}
	}
	var out []benchVariant
	for _, v := range strings.Split(spec, ";") {
		name, rest, _ := strings.Cut(v, "=")
		f := strings.Split(rest, ",")
		bv := benchVariant{name: name, bin: f[0]}
		for _, kv := range f[1:] {
			if vkv, ok := strings.CutPrefix(kv, "viewer:"); ok {
				bv.viewerEnv = append(bv.viewerEnv, vkv)
			} else if k, ok := strings.CutPrefix(kv, "keys:"); ok {
				bv.keys = k
			} else {
				bv.env = append(bv.env, kv)
			}
		}
		if bv.bin == "" {
			bv.bin = binPath
		}
		if _, err := os.Stat(bv.bin); err != nil {
			t.Fatalf("SUBDASH_BENCH_VARIANTS: %v", err)
		}
		out = append(out, bv)
	}
	return out
}

// lineCommand is an agent printing a short numbered line rate times a
// second until stopped, in one process (perl: no fork per line, so the
// agents' own cost stays small beside the host's).
func lineCommand(rate float64) string {
	return fmt.Sprintf(`exec perl -e '$|=1; for ($i=1;;$i++) { print "agent $ENV{SUBDASH_AGENT_ID} line $i of a task at work\n"; select(undef,undef,undef,%g) }'`, 1/rate)
}

// hostCost is what a process costs over a window: CPU in cores, and at
// its end the resident memory, threads and open descriptors.
type hostCost struct {
	cores                float64
	rssKiB, threads, fds int
}

func (c hostCost) String() string {
	return fmt.Sprintf("CPU %.3f cores, RSS %.1f MB, %d threads, %d fds", c.cores, float64(c.rssKiB)/1024, c.threads, c.fds)
}

// measure returns pid's cost over window.
func measure(pid int, window time.Duration) hostCost {
	c0, t0 := cpuTicks(pid), time.Now()
	time.Sleep(window)
	c := hostCost{cores: float64(cpuTicks(pid)-c0) / 100 / time.Since(t0).Seconds(), rssKiB: rssKiB(pid)}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Threads:") {
			c.threads, _ = strconv.Atoi(strings.TrimSpace(l[len("Threads:"):]))
		}
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	c.fds = len(fds)
	return c
}

// measureProfiled is measure, with where pid's CPU goes recorded over
// the window when SUBDASH_BENCH_PROFILE names a directory (into
// name.data there).
func measureProfiled(t *testing.T, pid int, window time.Duration, name string) hostCost {
	dir := os.Getenv("SUBDASH_BENCH_PROFILE")
	if dir == "" {
		return measure(pid, window)
	}
	out := filepath.Join(dir, name+".data")
	perf := exec.Command(requireTool(t, "perf"), "record", "-q", "-F", "499", "-g", "-p", strconv.Itoa(pid), "-o", out,
		"--", "sleep", strconv.Itoa(int(window.Seconds())))
	var stderr bytes.Buffer
	perf.Stderr = &stderr
	if err := perf.Start(); err != nil {
		t.Fatalf("SUBDASH_BENCH_PROFILE: perf record: %v", err)
	}
	c := measure(pid, window)
	if err := perf.Wait(); err != nil {
		t.Errorf("SUBDASH_BENCH_PROFILE: perf record: %v %s", err, stderr.Bytes())
	}
	return c
}

// spawnMany spawns n agents on the host at socket, eight requests at a
// time, and returns their ids. It speaks to the host as hostCall does, so
// a host of either protocol takes them.
func spawnMany(t *testing.T, socket string, n int) []string {
	t.Helper()
	hc := hostHTTP(socket)
	defer hc.CloseIdleConnections()
	ids := make([]string, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n || firstErr != nil {
					return
				}
				var sp struct {
					AgentID string `json:"agent_id"`
				}
				err := hostCall(hc, http.MethodPost, "/v1/agents", map[string]string{"message": fmt.Sprintf("task %d", i)}, &sp)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				ids[i] = sp.AgentID
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("spawning %d agents: %v", n, firstErr)
	}
	return ids
}

// hostHTTP is an HTTP client of the control socket at socket, which
// speaks to the host without this tree's client: a benchmark compares a
// binary of another protocol too (SUBDASH_BENCH_VARIANTS), which that
// client refuses.
func hostHTTP(socket string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		},
		MaxIdleConnsPerHost: 8,
	}}
}

// hostCall makes the request method path with body in JSON and decodes
// its answer into out: JSON whose names (spawn's message and agent_id,
// close's all and closed) every protocol of the control socket shares. An
// answer other than 2xx is the error, with its body.
func hostCall(hc *http.Client, method, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, "http://subdash"+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() //nolint:errcheck // a response body: its Close cannot lose data
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	return json.Unmarshal(data, out)
}

// waitWriting waits until n log files under state hold output.
func waitWriting(t *testing.T, state string, n int) {
	t.Helper()
	testkit.Poll(t, 5*time.Minute, fmt.Sprintf("%d agents to print", n), func() (int, bool) {
		got := 0
		_ = filepath.WalkDir(state, func(p string, e os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".log") {
				if fi, err := e.Info(); err == nil && fi.Size() > 0 {
					got++
				}
			}
			return nil
		})
		return got, got >= n
	})
}

// agentProcs returns the live processes whose environment names one of
// ids (SUBDASH_AGENT_ID), reading each /proc entry once.
func agentProcs(ids []string) []string {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	key := []byte("SUBDASH_AGENT_ID=")
	var left []string
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if bytes.HasPrefix(kv, key) && want[string(kv[len(key):])] {
				stat, _ := os.ReadFile(strings.TrimSuffix(p, "environ") + "stat")
				if f := strings.Fields(string(stat)); len(f) > 2 && f[2] != "Z" {
					left = append(left, filepath.Base(filepath.Dir(p)))
				}
				break
			}
		}
	}
	return left
}

// TestBenchThousand: see the comment at the top of this file.
func TestBenchThousand(t *testing.T) {
	if os.Getenv("SUBDASH_BENCH") != "1" {
		t.Skip("set SUBDASH_BENCH=1 to run the many-agents benchmark")
	}
	rate := 1.0
	if v := os.Getenv("SUBDASH_BENCH_RATE"); v != "" {
		rate, _ = strconv.ParseFloat(v, 64)
	}
	parts := os.Getenv("SUBDASH_BENCH_PARTS")
	if parts == "" {
		parts = "serve,dash,close"
	}
	variants := benchVariants(t)
	counts := testkit.EnvInts(t, "SUBDASH_BENCH_AGENTS", "10,100,1000")
	for _, n := range counts {
		for _, part := range strings.Split(parts, ",") {
			if part == "flood" && n != counts[len(counts)-1] {
				continue // four floods once, whatever the counts
			}
			for _, v := range variants {
				t.Run(fmt.Sprintf("%s/%d/%s", part, n, v.name), func(t *testing.T) {
					switch part {
					case "serve":
						benchServeMany(t, v, n, rate)
					case "dash":
						benchDashMany(t, v, n, rate)
					case "close":
						benchCloseMany(t, v, n, rate)
					case "quit":
						benchQuitMany(t, v, n, rate)
					case "flood":
						benchDashFlood(t, v)
					default:
						t.Fatalf("SUBDASH_BENCH_PARTS: no part %q", part)
					}
				})
			}
		}
	}
}

// benchWindow is how long each cost is measured.
const benchWindow = 15 * time.Second

// benchServeMany: `subdash serve` with n agents; its cost, then SIGTERM
// and the time until it exited with nothing left.
func benchServeMany(t *testing.T, v benchVariant, n int, rate float64) {
	w := newWorkspace(t)
	cmd := exec.Command(v.bin, append([]string{"serve", "--command", lineCommand(rate), "--max-agents", strconv.Itoa(n), "--grace", "1s"}, w.flags()...)...)
	cmd.Env = append(testEnv(), v.env...)
	host := startCmd(t, cmd)
	waitListening(t, host, w.socket)
	pid := host.cmd.Process.Pid
	t0 := time.Now()
	ids := spawnMany(t, w.socket, n)
	waitWriting(t, w.state, n)
	up := time.Since(t0)
	time.Sleep(3 * time.Second)
	cost := measure(pid, benchWindow)
	t1 := time.Now()
	_ = syscall.Kill(pid, syscall.SIGTERM)
	code, stderr := host.wait(t)
	stop := time.Since(t1)
	left := agentProcs(ids)
	t.Logf("serve, %d agents × %g lines/s: %v; all printing after %v; SIGTERM -> exit %d after %v (grace 1s), %d processes left",
		n, rate, cost, up.Round(time.Millisecond), code, stop.Round(time.Millisecond), len(left))
	if len(left) > 0 || (code != 0 && code != 128+int(syscall.SIGTERM)) {
		t.Errorf("after SIGTERM: exit %d, processes left %v; stderr: %s", code, left, stderr)
	}
}

// benchCloseMany: `subdash serve` with n agents, then `ctl close --all`
// (one CloseMany call): the time until it returned, and what was left.
func benchCloseMany(t *testing.T, v benchVariant, n int, rate float64) {
	w := newWorkspace(t)
	cmd := exec.Command(v.bin, append([]string{"serve", "--command", lineCommand(rate), "--max-agents", strconv.Itoa(n), "--grace", "1s"}, w.flags()...)...)
	cmd.Env = append(testEnv(), v.env...)
	host := startCmd(t, cmd)
	waitListening(t, host, w.socket)
	ids := spawnMany(t, w.socket, n)
	waitWriting(t, w.state, n)
	time.Sleep(3 * time.Second)
	pid := host.cmd.Process.Pid
	c0, t0 := cpuTicks(pid), time.Now()
	var res struct {
		Closed []json.RawMessage `json:"closed"`
	}
	hc := hostHTTP(w.socket)
	err := hostCall(hc, http.MethodPost, "/v1/close", map[string]bool{"all": true}, &res)
	hc.CloseIdleConnections()
	took, cpu := time.Since(t0), float64(cpuTicks(pid)-c0)/100
	left := agentProcs(ids)
	t.Logf("serve, %d agents × %g lines/s: ctl close --all -> %d closed after %v, the host's CPU %.2f s (grace 1s), %d processes left",
		n, rate, len(res.Closed), took.Round(time.Millisecond), cpu, len(left))
	if err != nil || len(res.Closed) != n || len(left) > 0 {
		t.Errorf("close --all: %d of %d closed, %v; processes left %v", len(res.Closed), n, err, left)
	}
	_ = syscall.Kill(host.cmd.Process.Pid, syscall.SIGTERM)
	host.wait(t)
}

// benchSize is the terminal of the dash part's dashboard and viewer:
// SUBDASH_BENCH_SIZE, columns x lines (default 160x45).
func benchSize(t *testing.T) (w, h int) {
	v := os.Getenv("SUBDASH_BENCH_SIZE")
	if v == "" {
		return 160, 45
	}
	if _, err := fmt.Sscanf(v, "%dx%d", &w, &h); err != nil || w < 40 || h < 10 {
		t.Fatalf("SUBDASH_BENCH_SIZE=%q: give columns x lines, at least 40x10 (200x60)", v)
	}
	return w, h
}

// benchDashMany: the host dashboard at benchSize with n agents; its cost,
// its keys (j/k, timed through one tmux control client until the
// selection moved), a viewer's cost, then quit and the time until it
// exited with nothing left.
func benchDashMany(t *testing.T, v benchVariant, n int, rate float64) {
	w, h := benchSize(t)
	d := manyDash(t, v, n, rate)
	ids := spawnMany(t, d.socket, n)
	waitWriting(t, d.state, n)
	pid := d.dashPID()
	if v.keys != "" {
		d.waitText(" line ")
		d.typeText(v.keys)
	}
	time.Sleep(3 * time.Second)
	cost := measureProfiled(t, pid, benchWindow, fmt.Sprintf("dash-%d-%s-dashboard", n, v.name))

	ctl := d.control()
	var lat []time.Duration
	for i, t0 := 0, time.Now(); time.Since(t0) < benchWindow; i++ {
		key := "j"
		if i%2 == 1 {
			key = "k"
		}
		before := selectedID(ctl.screen())
		lat = append(lat, ctl.answer(key, func(s string) bool { r := selectedID(s); return r != "" && r != before }))
	}
	med, p95, worst := stats(lat)

	vw := &dash{t: t, server: fmt.Sprintf("subdash-view-%d-%d", os.Getpid(), time.Now().UnixNano()),
		dir: d.dir, state: d.state, socket: d.socket, w: w, h: h, bin: v.bin}
	vw.run(nil, v.viewerEnv, "attach", "--socket", d.socket)
	vw.waitText(" line ")
	if v.keys != "" {
		vw.typeText(v.keys)
	}
	time.Sleep(2 * time.Second)
	vcost := measureProfiled(t, vw.dashPID(), benchWindow, fmt.Sprintf("dash-%d-%s-viewer", n, v.name))
	vw.keys("q")
	vw.waitExit()

	quit, left := quitDash(t, d, ctl, ids)
	t.Logf("dashboard %dx%d, %d agents × %g lines/s: %v; %d keys: median %v p95 %v max %v; viewer: %v; quit -> exited after %v (grace 1s), %d processes left",
		w, h, n, rate, cost, len(lat), med.Round(100*time.Microsecond), p95.Round(100*time.Microsecond), worst.Round(100*time.Microsecond), vcost, quit.Round(time.Millisecond), len(left))
	if len(left) > 0 {
		t.Errorf("after quit: processes left %v", left)
	}
}

// benchQuitMany: the host dashboard at benchSize with n agents, quit at once
// (dash's quit without its costs): the time from the y of "Quit?" until
// it exited, and what was left.
func benchQuitMany(t *testing.T, v benchVariant, n int, rate float64) {
	d := manyDash(t, v, n, rate)
	ids := spawnMany(t, d.socket, n)
	waitWriting(t, d.state, n)
	time.Sleep(3 * time.Second)
	quit, left := quitDash(t, d, d.control(), ids)
	w, h := benchSize(t)
	t.Logf("dashboard %dx%d, %d agents × %g lines/s: quit -> exited after %v (grace 1s), %d processes left",
		w, h, n, rate, quit.Round(time.Millisecond), len(left))
	if len(left) > 0 {
		t.Errorf("after quit: processes left %v", left)
	}
}

// quitDash quits dashboard d (q, then y to "Quit?") through ctl and
// returns the time from the y until it exited and the processes of ids
// left then.
func quitDash(t *testing.T, d *dash, ctl *tmuxCtl, ids []string) (time.Duration, []string) {
	t.Helper()
	ctl.keys("q")
	d.waitText("Quit?")
	t1 := time.Now()
	ctl.keys("y")
	for !strings.Contains(ctl.screen(), "SUBDASH-EXITED") {
		if time.Since(t1) > 2*time.Minute {
			t.Fatalf("the dashboard did not exit:\n%s", ctl.screen())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(t1), agentProcs(ids)
}

// manyDash starts the host dashboard of variant v at benchSize, for n
// agents printing rate lines a second, grace 1s, and waits for its
// first screen.
func manyDash(t *testing.T, v benchVariant, n int, rate float64) *dash {
	requireTool(t, "tmux")
	base := t.TempDir()
	w, h := benchSize(t)
	d := &dash{t: t, server: fmt.Sprintf("subdash-many-%d-%d", os.Getpid(), time.Now().UnixNano()), bin: v.bin,
		dir: filepath.Join(base, "work"), state: filepath.Join(base, "state"), socket: filepath.Join(base, "s.sock"), w: w, h: h}
	if err := os.Mkdir(d.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d.run(nil, v.env, "--dir", d.dir, "--state-dir", d.state, "--socket", d.socket,
		"--command", lineCommand(rate), "--max-agents", strconv.Itoa(n), "--grace", "1s")
	d.waitText("no agents yet")
	return d
}

// benchDashFlood is TestBenchFlood for a variant, its keys timed through
// one tmux control client: the host dashboard at 160x45 with four agents
// flooding with `yes` for 20 s; its CPU per GB delivered to the log
// files and its keys (j/k until the selection moved).
func benchDashFlood(t *testing.T, v benchVariant) {
	requireTool(t, "tmux")
	base := t.TempDir()
	d := &dash{t: t, server: fmt.Sprintf("subdash-flood-%d-%d", os.Getpid(), time.Now().UnixNano()), bin: v.bin,
		dir: filepath.Join(base, "work"), state: filepath.Join(base, "state"), socket: filepath.Join(base, "s.sock"), w: 160, h: 45}
	if err := os.Mkdir(d.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--dir", d.dir, "--state-dir", d.state, "--socket", d.socket,
		"--command", `exec yes 'spam spam spam spam spam spam spam spam'`, "--spawn", "a", "--spawn", "b", "--spawn", "c", "--spawn", "d"}
	if out, _ := exec.Command(v.bin, "serve", "--help").CombinedOutput(); strings.Contains(string(out), "max-log-size") {
		args = append(args, "--max-log-size", "0") // no cap: the bytes in the log files are what was handled
	} // a subdash from before the log cap has none
	d.run(nil, v.env, args...)
	d.waitFor("four floods", func(s string) bool { return strings.Contains(s, "4/4 running") && strings.Contains(s, "spam") })
	pid := d.dashPID()
	ctl := d.control()
	c0, b0, t0 := cpuTicks(pid), logBytes(d.state), time.Now()
	var lat []time.Duration
	for i := 0; time.Since(t0) < 20*time.Second; i++ {
		key := "j"
		if i%2 == 1 {
			key = "k"
		}
		before := selectedID(ctl.screen())
		lat = append(lat, ctl.answer(key, func(s string) bool { r := selectedID(s); return r != "" && r != before }))
	}
	wall := time.Since(t0)
	cpu := float64(cpuTicks(pid)-c0) / 100
	gb := float64(logBytes(d.state)-b0) / 1e9
	med, p95, worst := stats(lat)
	t.Logf("four yes floods, dashboard 160x45: %.2f cores, %.2f GB (%.0f MB/s), %.2f CPU s per GB; %d keys: median %v p95 %v max %v; RSS %.1f MB",
		cpu/wall.Seconds(), gb, gb*1e3/wall.Seconds(), cpu/gb, len(lat), med.Round(100*time.Microsecond), p95.Round(100*time.Microsecond), worst.Round(100*time.Microsecond), float64(rssKiB(pid))/1024)
	ctl.keys("q")
	d.waitText("Quit?")
	ctl.keys("y")
	d.waitExit()
}
