package ui

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor"
)

// cpuSeconds returns this process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// TestBenchFloodShare splits the dashboard's CPU use during four `yes`
// floods between the supervisor (reading and converting the pipes) and the
// ui (Update and View of every forwarded message). Run it with
// SUBDASH_BENCH=1, under -cpuprofile for the exact split (see BENCHMARKS.md).
func TestBenchFloodShare(t *testing.T) {
	if os.Getenv("SUBDASH_BENCH") != "1" {
		t.Skip("set SUBDASH_BENCH=1 to run the flood benchmark")
	}
	const flood = 8 * time.Second
	for _, withUI := range []bool{false, true} {
		dir := t.TempDir()
		s, err := supervisor.New(supervisor.Config{Command: "exec yes 'spam spam spam spam spam spam spam spam'",
			MaxAgents: 4, Dir: dir, StateDir: filepath.Join(dir, "state"), Environ: os.Environ()})
		if err != nil {
			t.Fatal(err)
		}
		sub := s.Subscribe()
		ctx, cancel := context.WithCancel(context.Background())
		msgs := make(chan tea.Msg, 1)
		go Forward(ctx, sub, func(msg tea.Msg) { msgs <- msg }, 0)
		m := New(s, Options{})
		m.tickFn = func() tea.Cmd { return nil }
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
		m = nm.(Model)
		for i := 0; i < 4; i++ {
			if _, err := s.Spawn(ctx, "flood"); err != nil {
				t.Fatal(err)
			}
		}
		frames, ui := 0, time.Duration(0)
		c0, w0 := cpuSeconds(), time.Now()
		for time.Since(w0) < flood {
			msg := <-msgs
			if !withUI {
				continue
			}
			st := time.Now()
			nm, _ := m.Update(msg)
			m = nm.(Model)
			_ = m.View()
			ui += time.Since(st)
			frames++
		}
		el := time.Since(w0).Seconds()
		cancel()
		sub.Close()
		_ = s.Shutdown(context.Background())
		if withUI {
			t.Logf("supervisor+ui: %.2f cores; %d frames (%.0f/s); Update+View wall time %.3f s/s",
				(cpuSeconds()-c0)/el, frames, float64(frames)/el, ui.Seconds()/el)
		} else {
			t.Logf("supervisor alone: %.2f cores", (cpuSeconds()-c0)/el)
		}
	}
}
