package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control"
	"github.com/subdash/subdash/ui"
)

// viewerOf returns a viewer's dashboard (ui.Model over control.Remote, as
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
	srv, err := control.Listen(s)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = srv.Serve(ctx) }()
	b.Cleanup(func() { cancel(); _ = srv.Close(); _ = s.Shutdown(context.Background()) })
	sp, err := s.Spawn("count")
	if err != nil {
		b.Fatal(err)
	}
	timeout := 60000
	if _, err := s.Wait(ctx, []string{sp.AgentID}, &timeout); err != nil {
		b.Fatal(err)
	}
	r, err := control.Attach(ctx, srv.Path(), dir, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(r.Detach)
	var m tea.Model = ui.New(r, ui.Options{Viewer: true})
	m = settle(m, tea.WindowSizeMsg{Width: 160, Height: 45})
	if v := m.View(); !strings.Contains(v, fmt.Sprint(lines)) {
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
	up, down := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("K")}, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("J")}
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

// TestBenchViewerFlood is the "viewer during a flood" benchmark of
// BENCHMARKS.md, run only with SUBDASH_BENCH=1: `subdash serve` with four
// agents flooding with `yes` (each line names its agent); the host's CPU
// with no viewer, then one viewer in tmux at 160x45 whose key answer (j/k
// until the table's selection and the log pane's lines are the other
// agent's), CPU and RSS are measured for SUBDASH_FLOOD_SECONDS (default
// 20), then the host's CPU with three viewers, then with none again.
func TestBenchViewerFlood(t *testing.T) {
	if os.Getenv("SUBDASH_BENCH") != "1" {
		t.Skip("set SUBDASH_BENCH=1 to run the viewer flood benchmark")
	}
	secs := 20 * time.Second
	if os.Getenv("SUBDASH_FLOOD_SECONDS") != "" {
		secs = floodSeconds()
	}
	const window = 8 * time.Second
	w := newWorkspace(t)
	host := start(t, nil, append([]string{"serve", "--command", `exec yes "spam $SUBDASH_AGENT_ID spam spam spam spam spam spam"`,
		"--max-agents", "4"}, w.flags()...)...)
	waitListening(t, host, w.socket)
	var ids []string
	for i := 0; i < 4; i++ {
		var sp supervisor.SpawnResult
		ctlOK(t, w, &sp, "spawn", fmt.Sprintf("flood %d", i))
		ids = append(ids, sp.AgentID)
	}
	hpid := host.cmd.Process.Pid
	hostCPU := func() float64 {
		c0, t0 := cpuTicks(hpid), time.Now()
		time.Sleep(window)
		return float64(cpuTicks(hpid)-c0) / 100 / time.Since(t0).Seconds()
	}
	none1 := hostCPU()

	v := startViewer(t, w, "attach", "--socket", w.socket)
	v.waitText("spam " + ids[0])
	vpid := v.dashPID()
	c0, t0 := cpuTicks(vpid), time.Now()
	var sel, logs []time.Duration
	for i := 0; time.Since(t0) < secs; i++ {
		next, key := ids[(i+1)%4], "j"
		if (i+1)%4 == 0 {
			v.keys("k", "k")
			key = "k"
		}
		start := time.Now()
		v.keys(key)
		shown := false
		for deadline := start.Add(dashWait); ; {
			s := v.screen()
			if !shown && strings.Contains(tableRow(s, next), "›") {
				shown = true
				sel = append(sel, time.Since(start))
			}
			if shown && strings.Count(s, "spam "+next) >= 30 {
				logs = append(logs, time.Since(start))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the viewer never showed %s's log:\n%s", next[:8], s)
			}
			time.Sleep(time.Millisecond)
		}
	}
	vcpu := float64(cpuTicks(vpid)-c0) / 100 / time.Since(t0).Seconds()
	vrss := rssKiB(vpid)

	more := []*dash{startViewer(t, w, "attach", "--socket", w.socket), startViewer(t, w, "attach", "--socket", w.socket)}
	for _, d := range more {
		d.waitText("spam ")
	}
	three := hostCPU()
	for _, d := range append(more, v) {
		d.keys("q")
		d.waitExit()
	}
	none2 := hostCPU()

	stats := func(l []time.Duration) string {
		s := slices.Clone(l)
		slices.Sort(s)
		return fmt.Sprintf("median %v, p95 %v, max %v (%d keys)", s[len(s)/2].Round(100*time.Microsecond),
			s[min(len(s)-1, len(s)*95/100)].Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond), len(s))
	}
	t.Logf("viewer key answer, selection shown: %s", stats(sel))
	t.Logf("viewer key answer, the other agent's log shown: %s", stats(logs))
	t.Logf("viewer CPU %.3f cores, RSS %d KiB", vcpu, vrss)
	t.Logf("host CPU: no viewer %.3f, three viewers %.3f, no viewer again %.3f cores: ratio %.2f", none1, three, none2, three/((none1+none2)/2))
}
