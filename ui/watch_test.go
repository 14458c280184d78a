package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
	"github.com/subdash/subdash/theme"
)

// The watch screen (SPEC §7): what each agent is doing now, columns that
// stay, the split, the zoom and the mouse.

// Ids of the watch scene's agents.
const (
	idUI    = "a1000001-0000-4000-8000-000000000001"
	idSup   = "a2000002-0000-4000-8000-000000000002"
	idDocsW = "a3000003-0000-4000-8000-000000000003"
	idAPI   = "a4000004-0000-4000-8000-000000000004"
	idE2EW  = "a5000005-0000-4000-8000-000000000005"
	idDeps  = "a6000006-0000-4000-8000-000000000006"
	idBuild = "a7000007-0000-4000-8000-000000000007"
	idOld   = "a8000008-0000-4000-8000-000000000008"
	idCLI   = "a9000009-0000-4000-8000-000000000009"
)

// watchAgents is a parallel audit as a claude host with every feature of
// the watch screen shows it: agents at work on a tool, one that needs you,
// one whose CLI errored, one stalled, one asking for approval, one with a
// queued message, a command that failed, one restored from an earlier
// run, and an inner agent.
func watchAgents() *fakeSup {
	f := newFake()
	f.cfg.MaxAgents = 8
	f.cfg.PresetName, f.cfg.PresetFormat, f.cfg.Command = "claude", "claude", "claude (preset)"
	f.cfg.Features = []string{proto.FeatureTree, proto.FeatureInnerAgents, proto.FeatureOutputRate, proto.FeatureChanges, proto.FeatureStall, proto.FeatureNow}
	usage := func(a *fakeAgent, cost float64) {
		a.info.Structured, a.info.Preset = true, "claude"
		a.info.Usage = proto.Usage{InputTokens: int64(cost * 200000), OutputTokens: int64(cost * 9000), CostUSD: cost}
	}
	ui := f.child("", idUI, "audit ui", "audit the ui package for races and leaks; report each finding with its file and line", proto.StatusRunning)
	ui.info.Now = "→ Bash go test -race ./ui/... 2>&1 | tail -40"
	usage(ui, 0.4121)
	ui.info.InnerAgents = []proto.InnerAgent{{TaskID: "t1", SubmissionSeq: 1, Description: "Explore the widgets", TaskType: "local_agent",
		Status: proto.InnerRunning, LastTool: "Grep", ToolCount: 4, Tokens: 9100, StartedAt: proto.Time{Time: t0.Add(-40 * time.Second)}}}
	sup := f.child(idUI, idSup, "audit supervisor", "audit supervisor/ for lock order", proto.StatusRunning)
	sup.info.Now = "→ Read supervisor/ops.go"
	usage(sup, 0.2387)
	docs := f.child("", idDocsW, "audit docs", "audit the docs against SPEC.md", proto.StatusCompleted)
	docs.info.Now = "Found 3 stale sections in README.md: Keys, Attach and the budget flags"
	docs.info.NeedsYou = &proto.Attention{Reason: "completed", Seq: 1, Since: proto.Time{Time: t0}}
	usage(docs, 0.0934)
	api := f.child("", idAPI, "audit api", "audit the control API", proto.StatusErrored)
	api.info.Now = "API Error: 500 stub: injected failure. This is a server-side issue, usually temporary — try again in a moment"
	api.info.NeedsYou = &proto.Attention{Reason: "errored", Seq: 1, Since: proto.Time{Time: t0}}
	usage(api, 0.0012)
	e2e := f.child("", idE2EW, "audit e2e", "audit the e2e harness", proto.StatusRunning)
	e2e.info.Now = "→ Bash go test ./e2e -run TestSocket -count=1"
	e2e.info.StalledSince = &proto.Time{Time: t0.Add(-125 * time.Second)}
	usage(e2e, 0.0561)
	deps := f.child("", idDeps, "audit deps", "audit go.mod", proto.StatusRunning)
	deps.info.PendingApprovals = []proto.PendingApproval{{RequestID: "r1", Tool: "Bash", Summary: "go get -u ./..."}}
	deps.info.Now = proto.ApprovalActivity(deps.info.PendingApprovals[0])
	deps.info.NeedsYou = &proto.Attention{Reason: "approval", Seq: 1, Since: proto.Time{Time: t0}}
	usage(deps, 0.0103)
	cli := f.child("", idCLI, "audit cli", "audit main.go's flags", proto.StatusRunning)
	cli.info.Now = "I'll compare each flag with SPEC §2 next."
	cli.info.QueuedMessages = []string{"then check the README's flag table"}
	cli.info.QueuedMessage = cli.info.QueuedMessages[0]
	usage(cli, 0.0310)
	build := f.child("", idBuild, "", "make release", proto.StatusErrored)
	build.info.Now = "oops: no rule to make target 'release' · exit 3"
	old := f.child("", idOld, "", "summarize the changelog", proto.StatusCompleted)
	old.info.Restored, old.info.UpdatedAt = true, proto.Time{Time: t0.Add(-3 * time.Hour)}
	old.info.Now = "The changelog has 14 entries since v0.3."
	withRates(f)
	for _, c := range []struct {
		id    string
		bytes [proto.RateBuckets]int64
	}{
		{idUI, [proto.RateBuckets]int64{0, 40, 300, 1500, 5000, 20000, 90000, 3000}},
		{idSup, [proto.RateBuckets]int64{200, 200, 0, 0, 800, 800, 300, 100}},
		{idE2EW, [proto.RateBuckets]int64{4000, 100, 0, 0, 0, 0, 0, 0}},
		{idCLI, [proto.RateBuckets]int64{0, 0, 0, 0, 0, 60, 600, 60}},
	} {
		f.find(c.id).info.OutputRate = &proto.OutputRate{BucketSeconds: 15, Newest: proto.Time{Time: t0.Truncate(proto.RateBucket)}, Bytes: c.bytes}
	}
	f.setChanges(idUI, &proto.Changes{Tracked: true, Pending: true})
	f.setChanges(idDocsW, &proto.Changes{Tracked: true, Files: 1, Added: 12, Removed: 3, Shared: true})
	f.setChanges(idAPI, &proto.Changes{Tracked: true})
	for i := 0; i < 60; i++ {
		ui.entries[1] = append(ui.entries[1],
			transcript.Entry{Kind: transcript.KindToolCall, Tool: "Read", Summary: fmt.Sprintf("ui/widget%02d.go", i)},
			transcript.Entry{Kind: transcript.KindToolResult, Tool: "Read", Text: fmt.Sprintf("package ui // widget %d", i), MoreLines: 120},
			transcript.Entry{Kind: transcript.KindText, Text: fmt.Sprintf("widget%02d.go holds no goroutine of its own.", i)})
	}
	ui.entries[1] = append(ui.entries[1], transcript.Entry{Kind: transcript.KindToolCall, Tool: "Bash", Summary: "go test -race ./ui/... 2>&1 | tail -40"})
	return f
}

// watchSizes are the sizes people use: 80x24 (stacked), 120x40, 160x45
// and 200x60.
var watchSizes = [][2]int{{80, 24}, {120, 40}, {160, 45}, {200, 60}}

// goldenThemes are the styles the watch goldens are drawn in: colour on a
// dark and on a light background (ANSI 256), and NO_COLOR.
var goldenThemes = []struct {
	name   string
	styles func() theme.Styles
}{
	{"dark", func() theme.Styles { return theme.New(theme.Options{Profile: colorprofile.ANSI256, Dark: true}) }},
	{"light", func() theme.Styles { return theme.New(theme.Options{Profile: colorprofile.ANSI256, Dark: false}) }},
	{"nocolor", theme.Plain},
}

// newThemedHarness is newHarness drawing with st.
func newThemedHarness(t *testing.T, f *fakeSup, st theme.Styles, w, h int) *harness {
	t.Helper()
	f.t = t
	m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }, Host: f})
	m.tickFn = func() tea.Cmd { return nil }
	hs := &harness{t: t, m: m, f: f}
	hs.follow(&f.feed)
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// runThemedGoldens is runGoldens in every goldenTheme:
// testdata/<test>/<scene>/<theme>/<w>x<h>.golden.
func runThemedGoldens(t *testing.T, scenes []goldenScene, sizes [][2]int) {
	t.Helper()
	for _, sc := range scenes {
		for _, th := range goldenThemes {
			for _, sz := range sizes {
				t.Run(fmt.Sprintf("%s/%s/%dx%d", sc.name, th.name, sz[0], sz[1]), func(t *testing.T) {
					h := newThemedHarness(t, sc.fake(), th.styles(), sz[0], sz[1])
					if sc.setup != nil {
						sc.setup(h)
					}
					checkFrame(t, h.view(), sz[0], sz[1])
					golden.RequireEqual(t, []byte(h.view()))
				})
			}
		}
	}
}

func TestGoldenWatch(t *testing.T) {
	runThemedGoldens(t, []goldenScene{
		{"watch", watchAgents, nil},
		{"watch_zoom_log", watchAgents, func(h *harness) { h.keys("m") }},
		{"watch_zoom_table", watchAgents, func(h *harness) { h.keys("tab", "m") }},
		{"watch_split", watchAgents, func(h *harness) { h.keys("-", "-", "-") }},
	}, watchSizes)
	runGoldens(t, []goldenScene{
		{"watch_help", watchAgents, func(h *harness) { h.keys("?") }},
		{"watch_help_symbols", watchAgents, func(h *harness) {
			h.keys("?")
			for range 40 {
				h.keys("j")
			}
		}},
		{"watch_help_end", watchAgents, func(h *harness) {
			h.keys("?")
			for range 200 {
				h.keys("j")
			}
		}},
	}, [][2]int{{120, 40}})
}

// nowCell returns the NOW cell of the table's row that holds name, as
// drawn (no colour), trailing spaces cut, and its width in cells.
func nowCell(t *testing.T, h *harness, name string) (string, int) {
	t.Helper()
	var head, row []rune
	for _, l := range strings.Split(h.view(), "\n") {
		r := []rune(l)
		if head == nil && strings.Contains(l, " NOW ") {
			head = r
		} else if head != nil && row == nil && strings.Contains(l, name) {
			row = r
		}
	}
	if head == nil || row == nil {
		t.Fatalf("no NOW column or no row of %q:\n%s", name, h.screen())
	}
	at := strings.Index(string(head), " NOW ")
	col := len([]rune(string(head)[:at])) + 1
	end := col
	for end < len(head) && head[end] != '│' {
		end++
	}
	return strings.TrimRight(string(row[col:end]), " "), end - col
}

// TestNowKeepsItsCells: at the sizes people use the NOW column keeps at
// least 40 cells beside the log pane at 120x40 and 30 stacked at 80x24,
// for a flat table, a tree and the watch scene; and it says what the
// host says each agent does now.
func TestNowKeepsItsCells(t *testing.T) {
	for _, c := range []struct {
		name string
		fake func() *fakeSup
		row  string // a row's name
	}{{"flat", threeAgents, "c0ffee42"}, {"tree", treeAgents, "e2e"}, {"watch", watchAgents, "audit api"}} {
		for _, sz := range [][3]int{{120, 40, 40}, {80, 24, 30}, {160, 45, 40}, {200, 60, 40}} {
			h := newHarness(t, c.fake(), sz[0], sz[1])
			if _, w := nowCell(t, h, c.row); w < sz[2] {
				t.Errorf("%s at %dx%d: NOW has %d cells, want at least %d:\n%s", c.name, sz[0], sz[1], w, sz[2], h.screen())
			}
		}
	}
	h := newHarness(t, watchAgents(), 200, 60)
	for name, want := range map[string]string{
		"audit ui":         "→ Bash go test -race ./ui/... 2>&1",
		"audit supervisor": "→ Read supervisor/ops.go",
		"audit api":        "API Error: 500 stub: injected failure.",
		"audit e2e":        "⊘ stalled 2m05s · → Bash go test ./e2e",
		"audit deps":       "needs approval: Bash go get -u ./...",
		"audit cli":        "▸ queued: “then check the README's flag",
		"a7000007":         "oops: no rule to make target 'release'",
	} {
		if got, _ := nowCell(t, h, name); !strings.HasPrefix(got, want) {
			t.Errorf("NOW of %s: %q, want %q…", name, got, want)
		}
	}
	// what it was asked is the log pane's
	h.wantScreen("“audit the ui package for races and leaks")
}

// TestColumnsStay: a row whose status, reason or NOW grows changes no
// column of the table: not which there are, not where they are; the
// status cell is one of five words and "needs you" is a glyph column.
func TestColumnsStay(t *testing.T) {
	for _, sz := range watchSizes {
		f := watchAgents()
		h := newHarness(t, f, sz[0], sz[1])
		head := h.line(" NOW ")
		a := f.find(idSup)
		f.mu.Lock()
		a.info.Status = proto.StatusErrored
		sub := &a.info.Submissions[0]
		sub.Status, sub.EndedAt, sub.LastError = proto.StatusErrored, t0, ptr("interrupted")
		a.info.Now = "interrupted · " + strings.Repeat("a very long last line of output ", 8)
		a.info.NeedsYou = &proto.Attention{Reason: "errored", Seq: 2, Since: proto.Time{Time: t0}}
		a.info.Usage.CostUSD = 123.4567
		f.mu.Unlock()
		h.sync(idSup)
		if got := h.line(" NOW "); got != head {
			t.Fatalf("at %dx%d one row's change moved the columns:\n%s\n%s", sz[0], sz[1], head, got)
		}
		row := h.line("audit super")
		if !strings.HasPrefix(row, "│◆") || !strings.Contains(row, "✗ errored   ") {
			t.Errorf("at %dx%d the row: %q", sz[0], sz[1], row)
		}
		if now, _ := nowCell(t, h, "audit super"); !strings.HasPrefix(now, "interrupted · a very long") {
			t.Errorf("at %dx%d the reason is not NOW's: %q", sz[0], sz[1], now)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// tableWidth returns the table's outer width on screen (its top border).
func tableWidth(h *harness) int {
	top := []rune(strings.SplitN(h.view(), "\n", 2)[0])
	for i, r := range top {
		if r == '╮' {
			return i + 1
		}
	}
	return len(top)
}

// TestSplitKeys: beside the log pane the table takes what its rows need
// and the log pane the rest; - and + move the border, kept through a
// resize; stacked they move it a row at a time.
func TestSplitKeys(t *testing.T) {
	h := newHarness(t, threeAgents(), 200, 40)
	auto := tableWidth(h)
	if want := h.m.table.Need() + 2; auto != want {
		t.Fatalf("the table is %d wide, its rows need %d", auto, want)
	}
	h.keys("-", "-")
	if got := tableWidth(h); got != auto-2*splitStep {
		t.Fatalf("after - -: %d, want %d", got, auto-2*splitStep)
	}
	h.keys("+", "+", "+", "=")
	if got := tableWidth(h); got != auto+2*splitStep {
		t.Fatalf("after + + + =: %d, want %d", got, auto+2*splitStep)
	}
	h.send(tea.WindowSizeMsg{Width: 180, Height: 40})
	h.send(tea.WindowSizeMsg{Width: 200, Height: 40})
	if got := tableWidth(h); got != auto+2*splitStep {
		t.Fatalf("after a resize: %d, want the %d the user chose", got, auto+2*splitStep)
	}
	for range 100 {
		h.keys("+")
	}
	if got := tableWidth(h); got != 200-minPaneW {
		t.Fatalf("the log pane is squeezed to %d", 200-got)
	}
	checkFrame(t, h.view(), 200, 40)

	s := newHarness(t, threeAgents(), 80, 24)
	before := s.m.lay.tableH
	s.keys("+", "+")
	if s.m.lay.tableH != before+2 {
		t.Fatalf("stacked: + + made the table %d rows, want %d", s.m.lay.tableH, before+2)
	}
	checkFrame(t, s.view(), 80, 24)
}

// TestZoom: m zooms the focused pane (the log pane first) to the whole
// screen and back; tab moves the focus, and the help line says what m
// does.
func TestZoom(t *testing.T) {
	h := newHarness(t, watchAgents(), 160, 45)
	h.wantScreen("m zoom log")
	h.keys("m")
	top := strings.SplitN(h.view(), "\n", 2)[0]
	if !strings.HasPrefix(top, "╭─ audit ui a1000001 · #1/1") || strings.Count(top, "╮") != 1 {
		t.Fatalf("m did not zoom the log pane: %q", top)
	}
	h.noScreen(" NOW ")
	h.wantScreen("m: back")
	h.wantScreen("m unzoom")
	h.keys("j", "j") // the zoomed log pane follows the selection (past audit ui's inner agent)
	h.wantScreen("╭─ audit ui/audit supervisor a2000002")
	h.keys("m")
	h.wantScreen(" NOW ")
	h.keys("tab")
	h.wantScreen("m zoom table")
	h.keys("m")
	if top := strings.SplitN(h.view(), "\n", 2)[0]; !strings.HasPrefix(top, "╭─ agents 9") || strings.Count(top, "╮") != 1 {
		t.Fatalf("m did not zoom the table: %q", top)
	}
	if _, w := nowCell(t, h, "audit api"); w < 60 {
		t.Errorf("the zoomed table's NOW has %d cells", w)
	}
	h.keys("tab") // the zoom follows the focus
	h.wantScreen("╭─ audit ui/audit supervisor a2000002")
	h.noScreen(" NOW ")
	checkFrame(t, h.view(), 160, 45)
}

// TestHelpExplainsEverySymbol: ? explains every symbol the screen can
// show, as a glyph and words, and what close, resume and resend do.
func TestHelpExplainsEverySymbol(t *testing.T) {
	h := newHarness(t, watchAgents(), 120, 40)
	help := strings.Join(h.m.helpView(120, 400), "\n")
	for _, glyph := range []string{"◆", "±", "*", "↪", "↺", "Σ", "⊘", "▸", "◇", "▁▂▃▄▅▆▇█", "├─ └─ │", "+3", "→", "›", "$", "✓", "✗", "■", "◌", "●",
		"⚙", "↳", "∴", "↻", "⚠", "stderr", "subdash:", "·", "│", "?", "ℹ ⚠ ✗", "↵ ⇥"} {
		if !strings.Contains(help, " "+glyph+" ") {
			t.Errorf("the help does not explain %q", glyph)
		}
	}
	for _, words := range []string{"close: stop & archive", "resume: reopen, no run", "resend: rerun the last message", "shift+drag"} {
		if !strings.Contains(help, words) {
			t.Errorf("the help does not say %q", words)
		}
	}
}

// click, wheel, drag and release send mouse events at cell (x, y).
func (h *harness) click(x, y int) {
	h.t.Helper()
	h.send(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
	h.send(tea.MouseReleaseMsg{X: x, Y: y, Button: tea.MouseLeft})
}

func (h *harness) wheel(x, y int, up bool) {
	h.t.Helper()
	b := tea.MouseWheelDown
	if up {
		b = tea.MouseWheelUp
	}
	h.send(tea.MouseWheelMsg{X: x, Y: y, Button: b})
}

// cellOf returns the cell (x, y) where substr starts on screen.
func cellOf(t *testing.T, h *harness, substr string) (int, int) {
	t.Helper()
	for y, l := range strings.Split(h.view(), "\n") {
		if i := strings.Index(l, substr); i >= 0 {
			return len([]rune(l[:i])), y
		}
	}
	t.Fatalf("%q is not on screen:\n%s", substr, h.screen())
	return 0, 0
}

// TestMouseSelectsAndFolds: a click on a row selects its agent (or inner
// agent), on a folded row's count it unfolds, on a parent's tree glyphs
// it folds; a click in the log pane moves the focus there.
func TestMouseSelectsAndFolds(t *testing.T) {
	h := newHarness(t, treeAgents(), 160, 40)
	if h.m.View().MouseMode != tea.MouseModeCellMotion {
		t.Fatal("the view asks for no mouse events")
	}
	h.click(cellOf(t, h, "e2e "))
	if h.m.table.SelectedID() != idE2E {
		t.Fatalf("a click on e2e selected %s", h.m.table.SelectedID())
	}
	h.wantScreen("╭─ review/tests/e2e 4e0e0e04 · #1/1")
	h.wantScreen("m zoom table") // the click focused the table
	x, y := cellOf(t, h, "├─ tests ")
	h.click(x, y) // tests' glyphs: fold its subtree
	h.wantScreen("├─ tests +2 ")
	h.noScreen("e2e ")
	if h.m.table.SelectedID() != idTests {
		t.Fatalf("the fold selected %s", h.m.table.SelectedID())
	}
	h.click(cellOf(t, h, "+2 ")) // its count: unfold
	h.wantScreen("│  └─ e2e ")
	h.click(tableWidth(h)+5, 10) // in the log pane
	h.wantScreen("m zoom log")
	h.click(0, 38) // the message line: nothing
	if h.m.table.SelectedID() != idTests {
		t.Fatalf("a click outside the panes selected %s", h.m.table.SelectedID())
	}
}

// TestMouseWheel: the wheel over the table moves the selection; over the
// log pane it scrolls it, and following stops as with K.
func TestMouseWheel(t *testing.T) {
	h := newHarness(t, threeAgents(), 160, 40)
	x, y := cellOf(t, h, "7b9e4c21 ✓")
	h.wheel(x, y, false)
	if h.m.table.SelectedID() != idB {
		t.Fatalf("the wheel down selected %s", h.m.table.SelectedID())
	}
	h.wheel(x, y, true)
	if h.m.table.SelectedID() != idA {
		t.Fatalf("the wheel up selected %s", h.m.table.SelectedID())
	}
	h.wantScreen("· following ·")
	lx, ly := cellOf(t, h, "step 30 of")
	h.wheel(lx, ly, true)
	h.noScreen("· following ·")
	h.wantScreen("· paused ·")
	h.wantScreen("G follows")
	if h.m.table.SelectedID() != idA {
		t.Fatalf("the wheel over the log pane moved the selection to %s", h.m.table.SelectedID())
	}
	for range 20 {
		h.wheel(lx, ly, false)
	}
	h.wantScreen("· following ·") // scrolled back to the end
}

// TestMouseDragsTheSplit: a drag of the border between the panes moves
// it, beside and stacked; the split is the user's then.
func TestMouseDragsTheSplit(t *testing.T) {
	h := newHarness(t, threeAgents(), 160, 40)
	border := tableWidth(h) - 1
	h.send(tea.MouseClickMsg{X: border, Y: 10, Button: tea.MouseLeft})
	h.send(tea.MouseMotionMsg{X: border - 20, Y: 11, Button: tea.MouseLeft})
	h.send(tea.MouseMotionMsg{X: 60, Y: 12, Button: tea.MouseLeft})
	h.send(tea.MouseReleaseMsg{X: 60, Y: 12, Button: tea.MouseLeft})
	if got := tableWidth(h); got != 61 {
		t.Fatalf("the table is %d wide after a drag to column 60, want 61", got)
	}
	h.send(tea.MouseMotionMsg{X: 100, Y: 12}) // no button held: no drag
	if got := tableWidth(h); got != 61 {
		t.Fatalf("a move after the release moved the border to %d", got)
	}
	checkFrame(t, h.view(), 160, 40)

	s := newHarness(t, threeAgents(), 80, 24)
	y := s.m.lay.tableH - 1
	s.send(tea.MouseClickMsg{X: 10, Y: y, Button: tea.MouseLeft})
	s.send(tea.MouseMotionMsg{X: 10, Y: y + 4, Button: tea.MouseLeft})
	s.send(tea.MouseReleaseMsg{X: 10, Y: y + 4, Button: tea.MouseLeft})
	if s.m.lay.tableH != y+5 {
		t.Fatalf("stacked: the table is %d rows after a drag to row %d", s.m.lay.tableH, y+4)
	}
	checkFrame(t, s.view(), 80, 24)
}

// TestNoMouse: with Options.NoMouse the terminal reports no mouse (a
// drag selects text as anywhere), and what mouse events come do nothing.
func TestNoMouse(t *testing.T) {
	h := newHarness(t, threeAgents(), 160, 40)
	h.m.opts.NoMouse = true
	if mode := h.m.View().MouseMode; mode != tea.MouseModeNone {
		t.Fatalf("mouse mode %v with NoMouse", mode)
	}
	h.click(cellOf(t, h, "c0ffee42 ✗"))
	if h.m.table.SelectedID() != idA {
		t.Fatalf("a click with NoMouse selected %s", h.m.table.SelectedID())
	}
	if help := strings.Join(h.m.helpView(160, 400), "\n"); !strings.Contains(help, "off (--mouse=false, or mouse = false in the config file)") {
		t.Fatal("the help does not say the mouse is off")
	}
}

// TestZoomGivesWayToTheSearchAcrossAgents: S with the table zoomed shows
// its results where the log pane is, the zoom ended.
func TestZoomGivesWayToTheSearchAcrossAgents(t *testing.T) {
	f := searchHost()
	f.print(idC, 1, "unsafe pointer in TestFlaky")
	f.print(idB, 1, "no Unsafe here", "one unsafe line")
	h := newHarness(t, f, 200, 40)
	h.keys("tab", "m")
	h.noScreen("3fa2c1d0 · #1/1")
	h.keys("S")
	h.typeText("unsafe")
	h.keys("enter")
	h.wantScreen("search “unsafe” · 3 hits in 2 agents")
	checkFrame(t, h.view(), 200, 40)
}
