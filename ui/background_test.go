package ui

import (
	"fmt"
	"image/color"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

// colourHarness is a harness whose dashboard draws with colour (ANSI 256)
// for a dark or light background.
func colourHarness(t *testing.T, f *fakeSup, dark bool, w, h int) *harness {
	t.Helper()
	st := theme.New(theme.Options{Profile: colorprofile.ANSI256, Dark: dark})
	f.t = t
	m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }, Host: f})
	m.tickFn = func() tea.Cmd { return nil }
	hs := &harness{t: t, m: m, f: f}
	hs.follow(&f.feed)
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// transcriptAgent is a host with one claude agent whose transcript the
// log pane shows.
func transcriptAgent() *fakeSup {
	f := newFake()
	f.cfg.PresetName, f.cfg.PresetFormat = "claude", "claude"
	a := f.add(idA, "explain", proto.StatusRunning)
	a.info.SessionID = idA
	f.print(idA, 1, `{"type":"assistant"}`)
	a.entries[1] = transcriptFixture()
	return f
}

var (
	white = color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
	black = color.RGBA{A: 0xff}
)

// TestLightBackgroundAnswerRedraws: the terminal's answer to the
// background query (SPEC §7) draws the dashboard in the light colours,
// the log pane's transcript (whose entries come drawn) too, exactly as a
// dashboard started light draws it; a dark answer changes nothing.
func TestLightBackgroundAnswerRedraws(t *testing.T) {
	h := colourHarness(t, transcriptAgent(), true, 120, 30)
	h.wantScreen("⚙ Bash  go test ./...")
	dark := h.view()
	h.send(tea.BackgroundColorMsg{Color: black})
	if h.view() != dark {
		t.Fatal("a dark answer redrew a dark dashboard")
	}
	h.send(tea.BackgroundColorMsg{Color: white})
	light := colourHarness(t, transcriptAgent(), false, 120, 30)
	light.wantScreen("⚙ Bash  go test ./...")
	if got, want := h.view(), light.view(); got != want || got == dark {
		t.Fatalf("after a light answer the dashboard draws\n%q\nwant, as one started light,\n%q", got, want)
	}
}

// TestNoColorIgnoresTheBackground: with NO_COLOR there is nothing to
// adapt: the dashboard does not ask, and an answer changes nothing.
func TestNoColorIgnoresTheBackground(t *testing.T) {
	h := newHarness(t, transcriptAgent(), 120, 30)
	if asks(h.m.Init()) {
		t.Fatal("a dashboard without colour asks for the background")
	}
	before := h.view()
	h.send(tea.BackgroundColorMsg{Color: white})
	if h.view() != before {
		t.Fatal("the background changed a dashboard without colour")
	}
	c := colourHarness(t, transcriptAgent(), true, 120, 30)
	if !asks(c.m.Init()) {
		t.Fatal("a dashboard in colour does not ask for the background")
	}
}

// asks reports whether cmd, a batch, asks the terminal for its
// background (tea.RequestBackgroundColor).
func asks(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	want := fmt.Sprintf("%T", tea.RequestBackgroundColor())
	if fmt.Sprintf("%T", cmd()) == want {
		return true
	}
	batch, ok := cmd().(tea.BatchMsg)
	if !ok {
		return false
	}
	for _, c := range batch {
		if c != nil && fmt.Sprintf("%T", c()) == want {
			return true
		}
	}
	return false
}

// TestViewDeclaresTheTerminal: the alternate screen and focus reports
// (SPEC §11: whether the user looks at this terminal) are the View's.
func TestViewDeclaresTheTerminal(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	v := h.m.View()
	if !v.AltScreen || !v.ReportFocus || v.Cursor != nil {
		t.Fatalf("View: alt screen %v, focus reports %v, cursor %v; want the alternate screen, focus reports and no cursor", v.AltScreen, v.ReportFocus, v.Cursor)
	}
}

// TestCtrlIIsNotTab: where the terminal tells them apart (Bubble Tea asks
// for its keyboard disambiguation), ctrl+i is not tab and not i: it types
// nothing in the input, where tab types a tab, and at the dashboard it
// interrupts nothing.
func TestCtrlIIsNotTab(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	before := h.view()
	h.keys("ctrl+i")
	if h.view() != before {
		t.Fatalf("ctrl+i changed the dashboard:\n%s", h.screen())
	}
	h.wantCalls()
	h.keys("n", "ctrl+i")
	h.typeText("a")
	h.keys("tab")
	h.typeText("b")
	h.wantScreen("spawn › a⇥b")
}
