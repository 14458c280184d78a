package ui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/theme"
)

// keysHarness is newHarness with the key map k (Options.Keys).
func keysHarness(t *testing.T, f *fakeSup, k keymap.KeyMap, w, h int) *harness {
	t.Helper()
	st := theme.Plain()
	f.t = t
	m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }, Host: f, Keys: &k})
	m.tickFn = func() tea.Cmd { return nil }
	hs := &harness{t: t, m: m, f: f}
	hs.follow(&f.feed)
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// TestRebound keys: the config file's [keys] (Options.Keys) is what the
// dashboard answers, and what its hints and help name; the old key does
// nothing.
func TestReboundKeys(t *testing.T) {
	k, err := keymap.DefaultKeyMap().Rebind([]keymap.Rebinding{
		{Action: "spawn", Keys: []string{"N"}},
		{Action: "down", Keys: []string{"ctrl+j"}},
		{Action: "pager", Keys: []string{"O"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := keysHarness(t, newFake(), k, 100, 30)
	h.wantScreen("no agents yet: press N to spawn one")
	h.noScreen("press n")
	h.keys("n")
	if h.m.mode != modeNormal {
		t.Fatal("n opened an input: it is no longer spawn's")
	}
	h.keys("N")
	h.typeText("fix the bug")
	h.keys("enter")
	h.wantCalls(`spawn "fix the bug"`)
	h.wantScreen("N spawn")
	h.keys("?")
	if !regexp.MustCompile(`│\s+N\s+spawn\s`).MatchString(h.screen()) {
		t.Errorf("the help does not list N for spawn:\n%s", h.screen())
	}
}

// TestChosenBackground: a background the user chose ([theme] background,
// theme.Options.Fixed) is not asked for, and the terminal's answer does
// not change it.
func TestChosenBackground(t *testing.T) {
	o := theme.BackgroundLight.Apply(theme.Options{Profile: colorprofile.ANSI256, Dark: true})
	st := theme.New(o)
	f := transcriptAgent()
	f.t = t
	m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }, Host: f})
	m.tickFn = func() tea.Cmd { return nil }
	h := &harness{t: t, m: m, f: f}
	h.follow(&f.feed)
	h.send(tea.WindowSizeMsg{Width: 120, Height: 30})
	if asks(h.m.Init()) {
		t.Fatal("a dashboard with a chosen background asks the terminal for it")
	}
	light := colourHarness(t, transcriptAgent(), false, 120, 30)
	if h.view() != light.view() {
		t.Fatal("[theme] background light does not draw as a light dashboard")
	}
	h.send(tea.BackgroundColorMsg{Color: black})
	if h.view() != light.view() {
		t.Fatal("the terminal's dark answer changed the chosen light background")
	}
}

// TestReboundLayoutKeys: the split, the zoom and the focus are actions of
// [keys] too: their new keys move the border, zoom and switch panes, the
// old ones do nothing, and the help line names the new zoom key.
func TestReboundLayoutKeys(t *testing.T) {
	k, err := keymap.DefaultKeyMap().Rebind([]keymap.Rebinding{
		{Action: "narrow-table", Keys: []string{"("}},
		{Action: "widen-table", Keys: []string{")"}},
		{Action: "zoom", Keys: []string{"M"}},
		{Action: "switch-pane", Keys: []string{"ctrl+t"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := keysHarness(t, threeAgents(), k, 200, 40)
	auto := tableWidth(h)
	h.keys("-", "+", "=", "m", "tab")
	if tableWidth(h) != auto || h.m.zoom != paneNone || h.m.focus != paneLog {
		t.Fatalf("the default layout keys still work: table %d (was %d), zoom %v, focus %v", tableWidth(h), auto, h.m.zoom, h.m.focus)
	}
	h.keys("(")
	if got := tableWidth(h); got != auto-splitStep {
		t.Fatalf("( made the table %d wide, want %d", got, auto-splitStep)
	}
	h.keys(")", ")")
	if got := tableWidth(h); got != auto+splitStep {
		t.Fatalf(") ) made the table %d wide, want %d", got, auto+splitStep)
	}
	h.wantScreen("M zoom log")
	h.keys("ctrl+t")
	h.wantScreen("M zoom table")
	h.keys("M")
	h.noScreen("╭─ 3fa2c1d0")
	h.wantScreen("M: back")
}

// TestReboundKeysInTheBorders: the table's footer (which rows it shows)
// and a zoomed pane's way back name the keys in effect.
func TestReboundKeysInTheBorders(t *testing.T) {
	k, err := keymap.DefaultKeyMap().Rebind([]keymap.Rebinding{
		{Action: "down", Keys: []string{"ctrl+j"}},
		{Action: "up", Keys: []string{"ctrl+k"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := keysHarness(t, watchAgents(), k, 80, 24)
	h.wantScreen(" of 10 · ctrl+j/ctrl+k ")
	h.noScreen("· j/k")
}

// TestReboundKeysInTheWords: the help's symbols and the notes after a
// close name the keys in effect.
func TestReboundKeysInTheWords(t *testing.T) {
	k, err := keymap.DefaultKeyMap().Rebind([]keymap.Rebinding{
		{Action: "resume", Keys: []string{"ctrl+r"}},
		{Action: "next-needs-you", Keys: []string{"W"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := keysHarness(t, threeAgents(), k, 100, 30)
	help := strings.Join(h.m.helpView(100, 400), "\n")
	for _, want := range []string{"ctrl+r (resume) reopens it", "(W: the next)"} {
		if !strings.Contains(help, want) {
			t.Errorf("the help does not say %q", want)
		}
	}
	h.keys("j", "c")
	h.wantScreen("closed 7b9e4c21: stopped and archived (ctrl+r reopens)")
}
