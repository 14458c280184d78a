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

// BenchmarkActivityFrame measures the dashboard's frame at 160x45 (colour
// on) with 1,000 agents of the tree, every running one with an output
// rate and every tenth with three inner agents, without and with the
// ACTIVITY column and the inner rows (the host's output-rate and
// inner-agents features): the tick of the spinner and a change of one
// agent's output, each with its View. Compare "plain" and "activity" in
// the same run:
//
//	go test ./ui -run XXX -bench BenchmarkActivityFrame -benchmem
func BenchmarkActivityFrame(b *testing.B) {
	const n = 1000
	for _, variant := range []string{"plain", "activity"} {
		f := treeFake(n)
		newest := proto.Time{Time: t0.Truncate(proto.RateBucket)}
		for i, a := range f.agents {
			if a.info.Status == proto.StatusRunning {
				a.info.OutputRate = &proto.OutputRate{BucketSeconds: 15, Newest: newest, Bytes: [proto.RateBuckets]int64{0, 40, 300, 1500, 5000, 20000, 90000, int64(i)}}
			}
			if i%10 == 0 {
				for k := 0; k < 3; k++ {
					a.info.InnerAgents = append(a.info.InnerAgents, proto.InnerAgent{TaskID: fmt.Sprint(i, k), SubmissionSeq: 1, Description: "explore", Status: proto.InnerRunning, LastTool: "Grep", ToolCount: k})
				}
			}
		}
		if variant == "activity" {
			f.cfg.Features = append(f.cfg.Features, proto.FeatureOutputRate, proto.FeatureInnerAgents)
		}
		st := theme.New(theme.Options{Profile: colorprofile.ANSI256, Dark: true})
		m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }})
		m.tickFn = func() tea.Cmd { return nil }
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
		m = nm.(Model)
		mid := f.Agents()[n/2]
		b.Run("tick/"+variant, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				nm, _ := m.Update(tickMsg(t0))
				_ = nm.(Model).View()
			}
		})
		b.Run("change/"+variant, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				nm, _ := m.Update(ChangesMsg{Changes: []proto.Change{{AgentID: mid.AgentID, Output: true, Info: &mid}}})
				_ = nm.(Model).View()
			}
		})
	}
}
