package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// The renderer's benchmark of BENCHMARKS.md ("A key answered", "Four
// agents flooding", "Bytes to the terminal"): how soon a key shows, what a
// flood costs, and how many bytes the dashboard writes to its terminal.
//
//	SUBDASH_BENCH=1 SUBDASH_BENCH_VARIANTS='v1=/tmp/subdash-v1;v2=' \
//	    go test -run 'TestBenchRender$' -count=1 -v -timeout 60m ./e2e/
//
// SUBDASH_BENCH_VARIANTS names the binaries compared, interleaved in one
// run (see bench_thousand_test.go); SUBDASH_BENCH_ROUNDS how many times
// each part runs for each (default 1); SUBDASH_BENCH_PARTS which parts
// (default floor,rest,flood,follow; viewer on demand):
//
//   - floor: what any program in a tmux pane pays here, the same way: a
//     key typed into `cat` (stty raw -echo: cat itself echoes it) at
//     160x45, at a random phase, polled every millisecond, until its echo
//     shows; run once a round, not per variant.
//   - rest: the host dashboard at 160x45 with four agents that ended;
//     for 20 s j and k are pressed in turn, each after a random pause of
//     0-50 ms (a random phase against a renderer's frame clock: a fixed
//     gap lines up with it and measures one phase only), and timed until
//     the selection moved, the screen polled every millisecond through
//     one tmux control client; the dashboard's CPU over the same time.
//   - flood: the same keys while four agents flood with `yes`; the
//     dashboard's CPU seconds per GB delivered to the log files.
//   - follow: one agent running `yes | cat -n`, its log followed, the
//     dashboard in script(1) in tmux: the bytes it writes to its terminal
//     per second over 10 s, its CPU, and the tmux server's CPU with a
//     client attached (a real one, in script(1) at 160x45); then the same
//     for a viewer attached to it.
//   - viewer: `subdash serve` whose four agents flood with `yes`, and a
//     viewer of it at 160x45 (a variant's viewer:VAR=value is its
//     environment): the keys of rest on the viewer, the viewer's CPU per
//     GB the host delivered, and the host's.
func TestBenchRender(t *testing.T) {
	if os.Getenv("SUBDASH_BENCH") != "1" {
		t.Skip("set SUBDASH_BENCH=1 to run the renderer benchmark")
	}
	parts := os.Getenv("SUBDASH_BENCH_PARTS")
	if parts == "" {
		parts = "floor,rest,flood,follow"
	}
	rounds := 1
	if v := os.Getenv("SUBDASH_BENCH_ROUNDS"); v != "" {
		rounds, _ = strconv.Atoi(v)
	}
	variants := benchVariants(t)
	for r := 1; r <= rounds; r++ {
		for _, part := range strings.Split(parts, ",") {
			if part == "floor" {
				t.Run(fmt.Sprintf("floor/%d", r), benchKeyFloor)
				continue
			}
			for _, v := range variants {
				t.Run(fmt.Sprintf("%s/%d/%s", part, r, v.name), func(t *testing.T) {
					switch part {
					case "rest":
						benchKeysAtRest(t, v)
					case "flood":
						benchKeysInFloods(t, v)
					case "follow":
						benchFollowBytes(t, v)
					case "viewer":
						benchViewerInFloods(t, v)
					default:
						t.Fatalf("SUBDASH_BENCH_PARTS: no part %q", part)
					}
				})
			}
		}
	}
}

// keyWindow is how long keys are pressed in each part.
const keyWindow = 20 * time.Second

// renderDash starts variant v's host dashboard at 160x45 in a tmux server
// of its own with args (after its workspace's flags); wrap, when set,
// runs it under script(1) writing to that typescript file.
func renderDash(t *testing.T, v benchVariant, typescript string, args ...string) *dash {
	t.Helper()
	requireTool(t, "tmux")
	base := t.TempDir()
	d := &dash{t: t, server: fmt.Sprintf("subdash-render-%d-%d", os.Getpid(), time.Now().UnixNano()), bin: v.bin,
		dir: filepath.Join(base, "work"), state: filepath.Join(base, "state"), socket: filepath.Join(base, "s.sock"), w: 160, h: 45}
	if err := os.Mkdir(d.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args = append([]string{"--dir", d.dir, "--state-dir", d.state, "--socket", d.socket}, args...)
	if typescript == "" {
		d.run(nil, v.env, args...)
		return d
	}
	d.bin = requireTool(t, "script")
	d.run([][]string{{"-g", "window-size", "manual"}}, v.env, "-q", "-f", "-c", shellLine(v.bin, args), typescript)
	return d
}

// shellLine is bin args… as one shell command line.
func shellLine(bin string, args []string) string {
	q := []string{shellQuote(bin)}
	for _, a := range args {
		q = append(q, shellQuote(a))
	}
	return strings.Join(q, " ")
}

// keysAtRandomPhase presses j and k in turn for window through ctl, each
// after a random pause of up to 50 ms, and returns how long each took to
// move the selection (the screen polled every millisecond).
func keysAtRandomPhase(ctl *tmuxCtl, window time.Duration) []time.Duration {
	rng := rand.New(rand.NewPCG(27, 43))
	var lat []time.Duration
	for i, t0 := 0, time.Now(); time.Since(t0) < window; i++ {
		key := "j"
		if i%2 == 1 {
			key = "k"
		}
		before := selectedID(ctl.screen())
		time.Sleep(time.Duration(rng.Int64N(int64(50 * time.Millisecond))))
		lat = append(lat, ctl.answerEvery(key, time.Millisecond, func(s string) bool { r := selectedID(s); return r != "" && r != before }))
	}
	return lat
}

// benchKeyFloor: keys typed into cat in a tmux pane at 160x45.
func benchKeyFloor(t *testing.T) {
	d := &dash{t: t, server: fmt.Sprintf("subdash-render-floor-%d-%d", os.Getpid(), time.Now().UnixNano()), w: 160, h: 45,
		tmux: requireTool(t, "tmux")}
	if out, err := d.tm("new-session", "-d", "-s", "dash", "-x", "160", "-y", "45", "stty raw -echo; exec cat"); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	t.Cleanup(func() { _, _ = d.tm("kill-server") })
	ctl := d.control()
	rng := rand.New(rand.NewPCG(27, 43))
	var lat []time.Duration
	for i, t0 := 0, time.Now(); time.Since(t0) < keyWindow; i++ {
		key := "j"
		if i%2 == 1 {
			key = "k"
		}
		echoed := func(s string) int { return strings.Count(s, "j") + strings.Count(s, "k") }
		before := echoed(ctl.screen())
		time.Sleep(time.Duration(rng.Int64N(int64(50 * time.Millisecond))))
		lat = append(lat, ctl.answerEvery(key, time.Millisecond, func(s string) bool { return echoed(s) > before }))
	}
	med, p95, worst := stats(lat)
	t.Logf("floor, cat in tmux 160x45: %d keys: median %v p95 %v max %v",
		len(lat), med.Round(100*time.Microsecond), p95.Round(100*time.Microsecond), worst.Round(100*time.Microsecond))
}

// benchKeysAtRest: keys on a dashboard whose agents all ended.
func benchKeysAtRest(t *testing.T, v benchVariant) {
	d := renderDash(t, v, "", "--command", "echo done", "--spawn", "a", "--spawn", "b", "--spawn", "c", "--spawn", "d")
	d.waitFor("four agents done", func(s string) bool { return strings.Contains(s, "4 completed") })
	pid := d.dashPID()
	ctl := d.control()
	time.Sleep(time.Second)
	c0, t0 := cpuTicks(pid), time.Now()
	lat := keysAtRandomPhase(ctl, keyWindow)
	cores := float64(cpuTicks(pid)-c0) / 100 / time.Since(t0).Seconds()
	med, p95, worst := stats(lat)
	idle := measure(pid, 5*time.Second)
	t.Logf("at rest, dashboard 160x45: %d keys: median %v p95 %v max %v; dashboard %.3f cores while keys, %.3f cores idle",
		len(lat), med.Round(100*time.Microsecond), p95.Round(100*time.Microsecond), worst.Round(100*time.Microsecond), cores, idle.cores)
	ctl.keys("q")
	d.waitExit()
}

// benchKeysInFloods: keys while four agents flood with `yes`, and the
// dashboard's CPU per GB delivered.
func benchKeysInFloods(t *testing.T, v benchVariant) {
	d := renderDash(t, v, "", "--command", `exec yes 'spam spam spam spam spam spam spam spam'`, "--max-log-size", "0",
		"--spawn", "a", "--spawn", "b", "--spawn", "c", "--spawn", "d")
	d.waitFor("four floods", func(s string) bool { return strings.Contains(s, "4/4 running") && strings.Contains(s, "spam") })
	pid := d.dashPID()
	ctl := d.control()
	c0, b0, t0 := cpuTicks(pid), logBytes(d.state), time.Now()
	lat := keysAtRandomPhase(ctl, keyWindow)
	wall := time.Since(t0)
	cpu := float64(cpuTicks(pid)-c0) / 100
	gb := float64(logBytes(d.state)-b0) / 1e9
	med, p95, worst := stats(lat)
	t.Logf("four yes floods, dashboard 160x45: %.2f cores, %.2f GB (%.0f MB/s), %.2f CPU s per GB; %d keys: median %v p95 %v max %v",
		cpu/wall.Seconds(), gb, gb*1e3/wall.Seconds(), cpu/gb, len(lat), med.Round(100*time.Microsecond), p95.Round(100*time.Microsecond), worst.Round(100*time.Microsecond))
	ctl.keys("q")
	d.waitText("Quit?")
	ctl.keys("y")
	d.waitExit()
}

// benchViewerInFloods: keys on a viewer of `subdash serve` while its four
// agents flood with `yes`; the viewer's and the host's CPU per GB the host
// delivered to the log files.
func benchViewerInFloods(t *testing.T, v benchVariant) {
	requireTool(t, "tmux")
	w := newWorkspace(t)
	cmd := exec.Command(v.bin, append([]string{"serve", "--command", floodCommand, "--max-log-size", "0", "--max-agents", "4"}, w.flags()...)...)
	cmd.Env = append(testEnv(), v.env...)
	host := startCmd(t, cmd)
	waitListening(t, host, w.socket)
	spawnFloods(t, w)
	d := &dash{t: t, server: fmt.Sprintf("subdash-render-viewer-%d-%d", os.Getpid(), time.Now().UnixNano()), bin: v.bin,
		dir: w.dir, state: w.state, socket: w.socket, w: 160, h: 45}
	d.run(nil, v.viewerEnv, "attach", "--socket", w.socket)
	d.waitFor("four floods", func(s string) bool { return strings.Contains(s, "4/4 running") && strings.Contains(s, "spam") })
	vpid, hpid := d.dashPID(), host.cmd.Process.Pid
	ctl := d.control()
	time.Sleep(time.Second)
	v0, h0, b0, t0 := cpuTicks(vpid), cpuTicks(hpid), logBytes(w.state), time.Now()
	lat := keysAtRandomPhase(ctl, keyWindow)
	wall := time.Since(t0)
	vcpu, hcpu := float64(cpuTicks(vpid)-v0)/100, float64(cpuTicks(hpid)-h0)/100
	gb := float64(logBytes(w.state)-b0) / 1e9
	med, p95, worst := stats(lat)
	t.Logf("viewer of four yes floods, 160x45: viewer %.3f cores, %.3f CPU s per GB; host %.2f cores, %.2f CPU s per GB; %.2f GB (%.0f MB/s); %d keys: median %v p95 %v max %v",
		vcpu/wall.Seconds(), vcpu/gb, hcpu/wall.Seconds(), hcpu/gb, gb, gb*1e3/wall.Seconds(), len(lat),
		med.Round(100*time.Microsecond), p95.Round(100*time.Microsecond), worst.Round(100*time.Microsecond))
	ctl.keys("q")
	d.waitExit()
	_ = host.cmd.Process.Signal(syscall.SIGTERM)
	host.wait(t)
}

// benchFollowBytes: the bytes a dashboard and a viewer following a
// `yes | cat -n` flood write to their terminals, and what that costs them
// and their tmux servers with a client attached.
func benchFollowBytes(t *testing.T, v benchVariant) {
	ts := filepath.Join(t.TempDir(), "host.typescript")
	d := renderDash(t, v, ts, "--command", "yes | cat -n", "--max-log-size", "0", "--spawn", "flood")
	d.waitFor("the flood followed", func(s string) bool { return strings.Contains(s, "following") && strings.Contains(s, "1/4 running") })
	host := descendant(t, d.dashPID(), v.bin)
	hostCost := followCost(t, d, host, ts)

	vts := filepath.Join(t.TempDir(), "viewer.typescript")
	vw := &dash{t: t, server: fmt.Sprintf("subdash-render-view-%d-%d", os.Getpid(), time.Now().UnixNano()),
		dir: d.dir, state: d.state, socket: d.socket, w: 160, h: 45, bin: requireTool(t, "script")}
	vw.run([][]string{{"-g", "window-size", "manual"}}, v.viewerEnv, "-q", "-f", "-c", shellLine(v.bin, []string{"attach", "--socket", d.socket}), vts)
	vw.waitFor("the viewer following", func(s string) bool { return strings.Contains(s, "following") && strings.Contains(s, "1/4 running") })
	viewer := descendant(t, vw.dashPID(), v.bin)
	viewerCost := followCost(t, vw, viewer, vts)
	t.Logf("following yes | cat -n, 160x45: host %s; viewer %s", hostCost, viewerCost)
	vw.keys("q")
	d.keys("q")
	d.waitText("Quit?")
	d.keys("y")
}

// followed is what following a flood cost over a window.
type followed struct {
	bytesPerSec        float64 // written to the terminal
	logPerSec          float64 // the flood's bytes into its log file
	cores, tmuxCores   float64 // the subdash process; its tmux server, a client attached
	tmuxIdleClientless float64 // the same tmux server before the client attached
}

func (f followed) String() string {
	return fmt.Sprintf("%.3f MB/s to the terminal, %.3f cores (the flood %.0f MB/s), its tmux server %.3f cores with a client attached (%.3f without)",
		f.bytesPerSec/1e6, f.cores, f.logPerSec/1e6, f.tmuxCores, f.tmuxIdleClientless)
}

// followCost measures pid (a dashboard or viewer in d's pane, under
// script writing typescript ts): the bytes it writes per second and its
// CPU over 10 s, its tmux server's CPU without a client, then with one
// attached.
func followCost(t *testing.T, d *dash, pid int, ts string) followed {
	t.Helper()
	const window = 10 * time.Second
	server, _ := strconv.Atoi(strings.TrimSpace(must(d.tm("display", "-p", "-t", "dash", "#{pid}"))))
	time.Sleep(2 * time.Second)
	var f followed
	s0, c0, l0, t0 := fileSize(ts), cpuTicks(pid), logBytes(d.state), time.Now()
	f.tmuxIdleClientless = measure(server, window).cores
	wall := time.Since(t0).Seconds()
	f.bytesPerSec = float64(fileSize(ts)-s0) / wall
	f.logPerSec = float64(logBytes(d.state)-l0) / wall
	f.cores = float64(cpuTicks(pid)-c0) / 100 / wall

	// A client at 160x45 in a pty of script(1), drawing what tmux sends.
	client := exec.Command(requireTool(t, "script"), "-q", "-c",
		fmt.Sprintf("stty cols 160 rows 45; exec %s -L %s -f /dev/null attach -t dash", shellQuote(d.tmux), shellQuote(d.server)), "/dev/null")
	client.Env = append(testEnv(), "TERM=xterm-256color")
	stdin, err := client.StdinPipe() // open until the end: script ends at its input's end
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = client.Process.Kill()
		_ = stdin.Close()
		_ = client.Wait()
	}()
	testkit.Poll(t, dashWait, "the tmux client attached", func() (string, bool) {
		out, _ := d.tm("list-clients", "-F", "#{client_width}x#{client_height}")
		return out, strings.Contains(out, "160x")
	})
	time.Sleep(time.Second)
	f.tmuxCores = measure(server, window).cores
	return f
}

// descendant returns the process under root (itself or a child, at any
// depth) whose executable is exe; it fails the test when none is.
func descendant(t *testing.T, root int, exe string) int {
	t.Helper()
	return testkit.Poll(t, dashWait, exe+" under "+strconv.Itoa(root), func() (int, bool) {
		queue := []int{root}
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			if p, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); p == exe {
				return pid, true
			}
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
			for _, f := range strings.Fields(string(b)) {
				c, _ := strconv.Atoi(f)
				queue = append(queue, c)
			}
		}
		return 0, false
	})
}

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// must returns s, ignoring err: for tmux queries whose failure shows as
// an empty answer.
func must(s string, _ error) string { return s }
