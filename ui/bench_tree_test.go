package ui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

// treeFake returns n agents in three levels on a host of the tree: n/25
// orchestrators, each with 4 children of 5 grandchildren; one in three
// running, one in ten errored and needing you.
func treeFake(n int) *fakeSup {
	f := newFake()
	f.cfg.Features = []string{proto.FeatureTextMessage, proto.FeatureTree}
	k := 0
	add := func(parent, name string) string {
		st := proto.StatusCompleted
		switch {
		case k%3 == 0:
			st = proto.StatusRunning
		case k%10 == 7:
			st = proto.StatusErrored
		}
		id := fmt.Sprintf("%08x-0000-4000-8000-%012d", 0xc0000000+k, k)
		a := f.child(parent, id, name, fmt.Sprintf("task %04d: audit the %s package", k, name), st)
		if st == proto.StatusErrored {
			a.info.NeedsYou = &proto.Attention{Reason: "errored", Seq: uint64(k + 1), Since: proto.Time{Time: t0.Add(time.Duration(k) * time.Second)}}
		}
		k++
		return id
	}
	for r := 0; r < n/25; r++ {
		root := add("", fmt.Sprintf("audit-%d", r))
		for c := 0; c < 4; c++ {
			child := add(root, fmt.Sprintf("part-%d", c))
			for g := 0; g < 5; g++ {
				add(child, fmt.Sprintf("file-%d", g))
			}
		}
	}
	return f
}

// BenchmarkTreeFrame measures a frame of the dashboard at 160x45 (colour
// on) with 200 and 1,000 agents in three levels: the tick of the spinner,
// a change of one agent's output (the flood's frame), a change of one
// agent's status (what a close of a subtree sends per agent), a fold key and a
// new agent (the two that lay the rows out again), each with its View.
// The first two must cost the same at both sizes (what is on screen); the
// last two grow with the agents. Compare the sizes in the same run:
//
//	go test ./ui -run XXX -bench BenchmarkTreeFrame -benchmem
func BenchmarkTreeFrame(b *testing.B) {
	for _, n := range []int{200, 1000} {
		f := treeFake(n)
		st := theme.New(theme.Options{Profile: colorprofile.ANSI256, Dark: true})
		m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }})
		m.tickFn = func() tea.Cmd { return nil }
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
		m = nm.(Model)
		agents := f.Agents()
		mid := agents[n/2]
		b.Run(fmt.Sprintf("tick/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				nm, _ := m.Update(tickMsg(t0))
				_ = nm.(Model).View()
			}
		})
		b.Run(fmt.Sprintf("change/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				nm, _ := m.Update(ChangesMsg{Changes: []proto.Change{{AgentID: mid.AgentID, Output: true, Info: &mid}}})
				_ = nm.(Model).View()
			}
		})
		b.Run(fmt.Sprintf("status/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				next := mid
				next.Status = []proto.Status{proto.StatusClosed, proto.StatusRunning}[i%2]
				nm, _ := m.Update(ChangesMsg{Changes: []proto.Change{{AgentID: mid.AgentID, Agent: true, Info: &next}}})
				_ = nm.(Model).View()
			}
		})
		b.Run(fmt.Sprintf("fold/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				nm, _ := m.Update(keyMsg("z"))
				m = nm.(Model)
				_ = m.View()
			}
		})
		b.Run(fmt.Sprintf("spawn/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c := m
				c.agents = append(make([]proto.AgentInfo, 0, n+1), m.agents...)
				c.setAgents(c.agents)
				extra := mid
				extra.AgentID = fmt.Sprintf("ffffffff-0000-4000-8000-%012d", i)
				b.StartTimer()
				nm, _ := c.Update(ChangesMsg{Changes: []proto.Change{{AgentID: extra.AgentID, Agent: true, Info: &extra}}})
				_ = nm.(Model).View()
			}
		})
	}
}
