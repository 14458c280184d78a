package ui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

// BenchmarkManyAgents measures, with 200 and 2,000 agents (one in ten
// errored and needing you) at 80x24 under the filter "errored": one
// snapshot of every agent applied (what each supervisor change costs: rows
// rebuilt, filter and needs-you checks) plus one redraw, and one jump key
// plus redraw. Compare the two sizes in the same run.
func BenchmarkManyAgents(b *testing.B) {
	for _, n := range []int{200, 2000} {
		f := newFake()
		for i := 0; i < n; i++ {
			st := proto.StatusCompleted
			if i%10 == 7 {
				st = proto.StatusErrored
			}
			id := fmt.Sprintf("%08x-0000-4000-8000-%012d", 0xb0000000+i, i)
			f.add(id, fmt.Sprintf("task %04d of the migration", i), st)
			if st == proto.StatusErrored {
				f.agents[len(f.agents)-1].info.NeedsYou = &proto.Attention{Reason: "errored", Seq: uint64(i + 1),
					Since: proto.Time{Time: t0.Add(time.Duration(i) * time.Second)}, Text: "agent errored"}
			}
		}
		st := theme.Plain()
		m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }})
		m.tickFn = func() tea.Cmd { return nil }
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		m = nm.(Model)
		m.filter = parseFilter("errored")
		m.refreshRows()
		agents := f.Agents()
		b.Run(fmt.Sprintf("snapshot+view/%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				nm, _ := m.Update(ChangesMsg{Changes: []proto.Change{{AgentID: agents[0].AgentID, Agent: true, Info: &agents[0]}}})
				_ = nm.(Model).View()
			}
		})
		b.Run(fmt.Sprintf("jump+view/%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				nm, _ := m.Update(keyMsg("a"))
				_ = nm.(Model).View()
			}
		})
	}
}
