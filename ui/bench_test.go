package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

// benchModel returns a dashboard at 160x45 (colour on) over a real
// supervisor whose one agent printed lines lines, all kept in scrollback.
func benchModel(b *testing.B, lines int) (Model, string) {
	b.Helper()
	dir := b.TempDir()
	s, err := supervisor.New(supervisor.Config{
		Command:    fmt.Sprintf("seq 1 %d | sed 's/^/output line /'", lines),
		MaxAgents:  4,
		Dir:        dir,
		StateDir:   filepath.Join(dir, "state"),
		Scrollback: lines,
		Environ:    os.Environ(),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	r, err := s.Spawn(b.Context(), "print")
	if err != nil {
		b.Fatal(err)
	}
	ms := proto.MaxWaitTimeoutMS
	if _, err := s.Wait(context.Background(), []string{r.AgentID}, &ms); err != nil {
		b.Fatal(err)
	}
	if w, _ := s.Window(b.Context(), r.AgentID, 0, 0, 0); w.Total != int64(lines) {
		b.Fatalf("scrollback holds %d lines, want %d", w.Total, lines)
	}
	st := theme.New(theme.Options{Profile: colorprofile.ANSI256, Dark: true})
	m := New(s, Options{Styles: &st, Now: func() time.Time { return t0 }})
	m.tickFn = func() tea.Cmd { return nil }
	nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
	return nm.(Model), r.AgentID
}

// BenchmarkView measures one redraw after the shown log changed (the log
// pane fetches and renders its rows again) and one after a scroll, with
// 100 and 1,000,000 lines in the selected submission's scrollback. The
// cost must not depend on the scrollback's size.
func BenchmarkView(b *testing.B) {
	for _, lines := range []int{100, 1_000_000} {
		m, id := benchModel(b, lines)
		change := ChangesMsg{Changes: []proto.Change{{AgentID: id, Output: true}}}
		b.Run(fmt.Sprintf("output/lines=%d", lines), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				nm, _ := m.Update(change)
				m = nm.(Model)
				_ = m.View()
			}
		})
		b.Run(fmt.Sprintf("scroll/lines=%d", lines), func(b *testing.B) {
			up, down := keyMsg("K"), keyMsg("J")
			m.log.GotoItem(int64(lines / 2))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k := up
				if i%2 == 1 {
					k = down
				}
				nm, _ := m.Update(k)
				m = nm.(Model)
				_ = m.View()
			}
		})
		b.Run(fmt.Sprintf("wrap/lines=%d", lines), func(b *testing.B) {
			m.log.SetWrap(true)
			m.log.GotoBottom()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				nm, _ := m.Update(change)
				m = nm.(Model)
				_ = m.View()
			}
			m.log.SetWrap(false)
		})
	}
}
