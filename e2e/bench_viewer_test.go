package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/server"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/ui"
)

// viewerOf returns a viewer's dashboard (ui.Model over client.Remote, as
// `subdash attach` runs it) of a host in this process whose one agent
// printed lines lines, sized 160x45 with its pending fetches answered.
func viewerOf(b *testing.B, lines int) ui.Model {
	b.Helper()
	base := b.TempDir()
	dir := filepath.Join(base, "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	cfg, err := supervisor.Resolve(supervisor.Options{Command: fmt.Sprintf("seq %d", lines), Dir: dir, StateDir: filepath.Join(base, "state"),
		Socket: filepath.Join(base, "s.sock"), Scrollback: lines + 1, LineMemory: -1}, supervisor.SystemEnvironment())
	if err != nil {
		b.Fatal(err)
	}
	s, err := supervisor.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.Listen(s)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = srv.Serve(ctx) }()
	b.Cleanup(func() { cancel(); _ = srv.Close(); _ = s.Shutdown(context.Background()) })
	sp, err := s.Spawn(ctx, "count")
	if err != nil {
		b.Fatal(err)
	}
	timeout := 60000
	if _, err := s.Wait(ctx, []string{sp.AgentID}, &timeout); err != nil {
		b.Fatal(err)
	}
	r, err := client.Attach(ctx, srv.Path(), dir, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(r.Detach)
	var m tea.Model = ui.New(r, ui.Options{})
	m = settle(m, tea.WindowSizeMsg{Width: 160, Height: 45})
	if v := m.View().Content; !strings.Contains(v, fmt.Sprint(lines)) {
		b.Fatalf("the viewer does not show line %d:\n%s", lines, v)
	}
	return m.(ui.Model)
}

// settle gives msg to m and runs the commands that follow, as Bubble Tea
// would, until none is left (the clock's ticks are not run).
func settle(m tea.Model, msg tea.Msg) tea.Model {
	queue := []tea.Msg{msg}
	for len(queue) > 0 {
		msg, queue = queue[0], queue[1:]
		switch msg := msg.(type) {
		case nil:
			continue
		case tea.BatchMsg:
			for _, c := range msg {
				if c != nil {
					queue = append(queue, c())
				}
			}
			continue
		}
		if fmt.Sprintf("%T", msg) == "ui.tickMsg" {
			continue
		}
		var cmd tea.Cmd
		m, cmd = m.Update(msg)
		if cmd != nil {
			queue = append(queue, cmd())
		}
	}
	return m
}

// BenchmarkViewerView (SPEC §9, BENCHMARKS.md): a viewer's cost to answer
// a key in the log pane (scroll one line up, then down: Update, the window
// fetched from the host over the socket when the pane needs it, and View)
// and to draw (View alone), with 100 and with 1,000,000 lines in the shown
// submission. The two viewers take turns within each iteration, so the
// ratios (1,000,000 over 100) are measured in the same run.
//
//	go test -run '^$' -bench BenchmarkViewerView -benchtime 3000x .
func BenchmarkViewerView(b *testing.B) {
	up, down := tea.KeyPressMsg{Code: 'K', Text: "K"}, tea.KeyPressMsg{Code: 'J', Text: "J"}
	small, big := tea.Model(viewerOf(b, 100)), tea.Model(viewerOf(b, 1_000_000))
	var key, view [2]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := up
		if i%2 == 1 {
			k = down
		}
		for j, m := range []*tea.Model{&small, &big} {
			t0 := time.Now()
			*m = settle(*m, k)
			_ = (*m).View()
			t1 := time.Now()
			_ = (*m).View()
			key[j] += t1.Sub(t0)
			view[j] += time.Since(t1)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(key[0].Microseconds())/n, "µs/key-100")
	b.ReportMetric(float64(key[1].Microseconds())/n, "µs/key-1M")
	b.ReportMetric(float64(key[1])/float64(key[0]), "key-ratio")
	b.ReportMetric(float64(view[0].Microseconds())/n, "µs/view-100")
	b.ReportMetric(float64(view[1].Microseconds())/n, "µs/view-1M")
	b.ReportMetric(float64(view[1])/float64(view[0]), "view-ratio")
}

// floodCommand is the agent command of the viewer flood benchmarks: `yes`
// whose lines name their agent.
const floodCommand = `exec yes "spam $SUBDASH_AGENT_ID spam spam spam spam spam spam"`

func benchSeconds(t *testing.T) time.Duration {
	t.Helper()
	if os.Getenv("SUBDASH_BENCH") != "1" {
		t.Skip("set SUBDASH_BENCH=1 to run the viewer flood benchmarks")
	}
	if os.Getenv("SUBDASH_FLOOD_SECONDS") != "" {
		return floodSeconds()
	}
	return 20 * time.Second
}

func spawnFloods(t *testing.T, w workspace) []string {
	t.Helper()
	var ids []string
	for i := 0; i < 4; i++ {
		var sp proto.SpawnResult
		ctlOK(t, w, &sp, "spawn", fmt.Sprintf("flood %d", i))
		ids = append(ids, sp.AgentID)
	}
	return ids
}

// keyAnswer presses j (k k k to go round) on d to select next and returns
// how long until the table's selection, then the log pane's lines, are
// next's (polled every 2 ms).
func keyAnswer(t *testing.T, d *dash, i int, next string) (sel, log time.Duration) {
	t.Helper()
	key := "j"
	if i%4 == 3 {
		d.keys("k", "k")
		key = "k"
	}
	start := time.Now()
	d.keys(key)
	for deadline := start.Add(dashWait); ; {
		s := d.screen()
		if sel == 0 && strings.Contains(tableRow(s, next), "›") {
			sel = time.Since(start)
		}
		if sel != 0 && strings.Count(s, "spam "+next) >= 30 {
			return sel, time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's log never showed:\n%s", next[:8], s)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stats is a latency sample's median, p95 and max.
func stats(l []time.Duration) (med, p95, maxi time.Duration) {
	s := slices.Clone(l)
	slices.Sort(s)
	return median(s), s[min(len(s)-1, len(s)*95/100)], s[len(s)-1]
}

// TestBenchViewerKeys is the viewer's key answer of BENCHMARKS.md, run
// only with SUBDASH_BENCH=1: a host dashboard with four agents flooding
// with `yes` and a viewer attached to it, both in tmux at 160x45; for
// SUBDASH_FLOOD_SECONDS (default 20) j/k is pressed on each in turn and
// timed until its table's selection, then its log pane, show the other
// agent, so the viewer's figures and the host's are measured in the same
// run and their ratio is the viewer's cost.
func TestBenchViewerKeys(t *testing.T) {
	secs := benchSeconds(t)
	host := startDash(t, 160, 45, nil, "--command", floodCommand, "--max-agents", "4")
	w := workspace{dir: host.dir, state: host.state, socket: host.socket}
	host.waitText("no agents yet")
	ids := spawnFloods(t, w)
	v := startViewer(t, w, "attach", "--socket", w.socket)
	host.waitText("spam " + ids[0])
	v.waitText("spam " + ids[0])
	// The floor: a terminal program that answers at once (cat, its tty
	// echoing the key), measured the same way in the same flood: two tmux
	// commands and the polling, tmux itself, and the scheduler's wait.
	floor := &dash{t: t, tmux: requireTool(t, "tmux"), server: fmt.Sprintf("subdash-floor-%d-%d", os.Getpid(), time.Now().UnixNano()), w: 160, h: 45}
	if out, err := floor.tm("new-session", "-d", "-s", "dash", "-x", "160", "-y", "45", "cat"); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _, _ = floor.tm("kill-server") })
	var lat [2][2][]time.Duration // [host, viewer][selection, log]
	var echo []time.Duration
	for i, t0 := 0, time.Now(); time.Since(t0) < secs; i++ {
		for j, d := range []*dash{host, v} {
			sel, log := keyAnswer(t, d, i, ids[(i+1)%4])
			lat[j][0] = append(lat[j][0], sel)
			lat[j][1] = append(lat[j][1], log)
		}
		if i%100 == 99 {
			floor.keys("Enter")
		}
		want := strings.Count(floor.screen(), "x") + 1
		start := time.Now()
		floor.keys("x")
		for strings.Count(floor.screen(), "x") < want && time.Since(start) < dashWait {
			time.Sleep(2 * time.Millisecond)
		}
		echo = append(echo, time.Since(start))
	}
	fm, fp, fx := stats(echo)
	t.Logf("floor (cat in tmux, same polling; %d keys): median %v p95 %v max %v", len(echo), fm.Round(100*time.Microsecond), fp.Round(100*time.Microsecond), fx.Round(100*time.Microsecond))
	for k, what := range []string{"selection shown", "the other agent's log shown"} {
		hm, hp, hx := stats(lat[0][k])
		vm, vp, vx := stats(lat[1][k])
		t.Logf("%s (%d keys each): host dashboard median %v p95 %v max %v; viewer median %v p95 %v max %v; viewer/host median %.2f, max %.2f; over the floor's median: host %.2f, viewer %.2f",
			what, len(lat[0][k]), hm.Round(100*time.Microsecond), hp.Round(100*time.Microsecond), hx.Round(100*time.Microsecond),
			vm.Round(100*time.Microsecond), vp.Round(100*time.Microsecond), vx.Round(100*time.Microsecond), float64(vm)/float64(hm), float64(vx)/float64(hx),
			float64(hm)/float64(fm), float64(vm)/float64(fm))
	}
	v.keys("q")
	v.waitExit()
	host.keys("q")
	host.waitText("Quit?")
	host.keys("y")
	host.waitExit()
}

// TestBenchViewerFlood is the viewer's cost during a flood of
// BENCHMARKS.md, run only with SUBDASH_BENCH=1: `subdash serve` with four
// agents flooding with `yes`; the host's CPU (and CPU per GB delivered to
// the log files) over 8 s with no viewer, then with one viewer in tmux at
// 160x45 (whose CPU and RSS are measured over the same 8 s), then with
// three, then with none again.
func TestBenchViewerFlood(t *testing.T) {
	benchSeconds(t)
	const window = 8 * time.Second
	w := newWorkspace(t)
	host := serveWith(t, w, nil, "--command", floodCommand, "--max-agents", "4")
	ids := spawnFloods(t, w)
	hpid := host.cmd.Process.Pid
	// The host's CPU per GB it delivered to the log files: on two cores
	// that the flood fills, viewers take CPU from the host and so lower its
	// CPU and its throughput together; the cost per byte is what they add.
	type hostUse struct{ cores, perGB float64 }
	hostCPU := func(also func()) hostUse {
		c0, b0, t0 := cpuTicks(hpid), logBytes(w.state), time.Now()
		time.Sleep(window)
		if also != nil {
			also()
		}
		cpu := float64(cpuTicks(hpid)-c0) / 100
		return hostUse{cpu / time.Since(t0).Seconds(), cpu / (float64(logBytes(w.state)-b0) / 1e9)}
	}
	none1 := hostCPU(nil)

	v := startViewer(t, w, "attach", "--socket", w.socket)
	v.waitText("spam " + ids[0])
	vpid := v.dashPID()
	vc0, vt0 := cpuTicks(vpid), time.Now()
	var vcpu float64
	one := hostCPU(func() { vcpu = float64(cpuTicks(vpid)-vc0) / 100 / time.Since(vt0).Seconds() })
	vrss := rssKiB(vpid)

	more := []*dash{startViewer(t, w, "attach", "--socket", w.socket), startViewer(t, w, "attach", "--socket", w.socket)}
	for _, d := range more {
		d.waitText("spam ")
	}
	three := hostCPU(nil)
	for _, d := range append(more, v) {
		d.keys("q")
		d.waitExit()
	}
	// What three viewers cost the host, taken apart: their event streams
	// alone (read here and dropped: no window fetches, no screen), and
	// their share of the two cores alone (three goroutines here, each busy
	// as much as the viewer measured above, talking to nobody).
	streams := hostCPU(eventStreams(t, w.socket, 3))
	burn := hostCPU(burners(3, vcpu, false))
	memBurn := hostCPU(burners(3, vcpu, true))
	none2 := hostCPU(nil)

	t.Logf("viewer CPU %.3f cores, RSS %d KiB", vcpu, vrss)
	mean := (none1.perGB + none2.perGB) / 2
	t.Logf("host with three event streams only: %.3f cores %.2f CPU s/GB (%.2f); with three burners of %.3f core each: %.3f cores %.2f CPU s/GB (%.2f); with three memory burners: %.3f cores %.2f CPU s/GB (%.2f)",
		streams.cores, streams.perGB, streams.perGB/mean, vcpu, burn.cores, burn.perGB, burn.perGB/mean, memBurn.cores, memBurn.perGB, memBurn.perGB/mean)
	base := (none1.perGB + none2.perGB) / 2
	t.Logf("host: no viewer %.3f cores %.2f CPU s/GB; one viewer %.3f cores %.2f CPU s/GB; three viewers %.3f cores %.2f CPU s/GB; no viewer again %.3f cores %.2f CPU s/GB; CPU per GB over none: one %.2f, three %.2f",
		none1.cores, none1.perGB, one.cores, one.perGB, three.cores, three.perGB, none2.cores, none2.perGB, one.perGB/base, three.perGB/base)
}

// eventStreams opens n viewers' event streams on socket and reads them
// until the returned function is called (it closes them).
func eventStreams(t *testing.T, socket string, n int) func() {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.Dial("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, "GET /v1/events?viewer=1 HTTP/1.1\r\nHost: subdash\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = io.Copy(io.Discard, c) }()
		conns = append(conns, c)
	}
	return func() {
		for _, c := range conns {
			c.Close() //nolint:errcheck // cleanup of the benchmark's viewers: nothing is left to read
		}
	}
}

// burners starts n goroutines each busy for share of a core (busy, then
// idle, in 10 ms periods) until the returned function is called. With
// mem, the busy time copies 8 MiB buffers (using the caches and memory as
// a program drawing a screen does) instead of spinning.
func burners(n int, share float64, mem bool) func() {
	stop := make(chan struct{})
	for range n {
		go func() {
			const period = 10 * time.Millisecond
			busy := time.Duration(share * float64(period))
			var a, b []byte
			if mem {
				a, b = make([]byte, 8<<20), make([]byte, 8<<20)
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				for start := time.Now(); time.Since(start) < busy; {
					if mem {
						for off := 0; off < len(a); off += 256 << 10 {
							copy(b[off:off+256<<10], a[off:off+256<<10])
						}
					}
				}
				time.Sleep(period - busy)
			}
		}()
	}
	return func() { close(stop) }
}
