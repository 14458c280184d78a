package ui

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
	"github.com/subdash/subdash/theme"
)

// harness drives a Model as Bubble Tea would, running commands at once
// (the clock's tick excepted) and feeding their messages back.
type harness struct {
	t  *testing.T
	m  Model
	f  *fakeSup
	ev *proto.Subscription // the changes the forwarder would deliver
	// onChanges, when set, sees every ChangesMsg before the model does.
	onChanges func(ChangesMsg)
	quit      bool
	execs     int // tea.Exec requests (the pager)
}

func newHarness(t *testing.T, f *fakeSup, w, h int) *harness {
	t.Helper()
	st := theme.Plain()
	f.t = t
	m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }, Host: f})
	m.tickFn = func() tea.Cmd { return nil }
	hs := &harness{t: t, m: m, f: f}
	hs.follow(&f.feed)
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// follow subscribes h to feed: send delivers its changes as the
// forwarder would, once the commands of a message settled.
func (h *harness) follow(feed interface{ Subscribe() *proto.Subscription }) {
	h.ev = feed.Subscribe()
	h.t.Cleanup(h.ev.Close)
}

// send gives msg to the model and runs the commands that follow.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	queue := []tea.Msg{msg}
	for steps := 0; ; steps++ {
		if steps > 1000 {
			h.t.Fatal("commands do not settle")
		}
		if len(queue) == 0 && h.ev != nil {
			if cs := h.ev.Drain(); len(cs) > 0 {
				queue = append(queue, ChangesMsg{Changes: cs})
			}
		}
		if len(queue) == 0 {
			return
		}
		msg, queue = queue[0], queue[1:]
		if msg == nil {
			continue
		}
		if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeOf(tea.Cmd(nil)) {
			for i := 0; i < v.Len(); i++ {
				if c := v.Index(i).Interface().(tea.Cmd); c != nil {
					queue = append(queue, c())
				}
			}
			continue
		}
		switch fmt.Sprintf("%T", msg) {
		case "tea.QuitMsg":
			h.quit = true
			continue
		case "tea.execMsg":
			h.execs++
			continue
		}
		if c, ok := msg.(ChangesMsg); ok && h.onChanges != nil {
			h.onChanges(c)
		}
		h.guard(true)
		nm, cmd := h.m.Update(msg)
		h.guard(false)
		h.m = nm.(Model)
		if cmd != nil {
			queue = append(queue, cmd())
		}
	}
}

// keys presses keys: single characters, or names such as "enter", "esc",
// "ctrl+c", "up", "pgup".
func (h *harness) keys(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

// typeText types text into whatever has focus, a key per character, as
// Bubble Tea reports typed text.
func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// sync delivers the fake's current agents, as changes of every agent
// (those named with new output too) and of every agent gone from it.
func (h *harness) sync(changed ...string) {
	h.t.Helper()
	h.send(ChangesMsg{Changes: changesOf(h.m.agents, h.f.Agents(), changed...)})
}

// changesOf returns the changes that take a table showing was to now: a
// change with its snapshot for every agent of now (with output for those
// named), forgotten for every agent of was not in now.
func changesOf(was, now []proto.AgentInfo, output ...string) []proto.Change {
	cs := []proto.Change{}
	here := map[string]bool{}
	for i := range now {
		id := now[i].AgentID
		here[id] = true
		cs = append(cs, proto.Change{AgentID: id, Agent: true, Output: slices.Contains(output, id), Info: &now[i]})
	}
	for _, a := range was {
		if !here[a.AgentID] {
			cs = append(cs, proto.Change{AgentID: a.AgentID, Agent: true, Forgotten: true})
		}
	}
	return cs
}

func (h *harness) view() string {
	h.guard(true)
	defer h.guard(false)
	return h.m.View().Content
}

// guard tells the fake that Update or View runs (on), or no longer: a call
// of it meanwhile fails the test (fakeSup.noIO).
func (h *harness) guard(on bool) {
	if h.f != nil {
		h.f.inUpdate.Store(on)
	}
}

// screen returns the view with trailing spaces trimmed per line.
func (h *harness) screen() string {
	lines := strings.Split(h.view(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func (h *harness) wantScreen(substr string) {
	h.t.Helper()
	if !strings.Contains(h.view(), substr) {
		h.t.Fatalf("screen does not show %q:\n%s", substr, h.screen())
	}
}

func (h *harness) noScreen(substr string) {
	h.t.Helper()
	if strings.Contains(h.view(), substr) {
		h.t.Fatalf("screen shows %q:\n%s", substr, h.screen())
	}
}

func (h *harness) wantCalls(want ...string) {
	h.t.Helper()
	got := h.f.Calls()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// keyMsg returns the key press named k as Bubble Tea reports it: a
// character, or a name such as "enter", "esc", "space", "ctrl+c", "pgup".
func keyMsg(k string) tea.KeyPressMsg {
	named := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"backspace": tea.KeyBackspace, "left": tea.KeyLeft, "right": tea.KeyRight,
		"delete": tea.KeyDelete, "tab": tea.KeyTab,
	}
	if c, ok := named[k]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	if k == "space" {
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	if c, ok := strings.CutPrefix(k, "ctrl+"); ok && len(c) == 1 {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	r := []rune(k)
	if len(r) != 1 {
		panic("keyMsg: unknown key " + k)
	}
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// transcriptFixture is a short claude transcript.
func transcriptFixture() []transcript.Entry {
	return []transcript.Entry{
		{Kind: transcript.KindInit, Text: "session 3fa2c1d0 (model sonnet)"},
		{Kind: transcript.KindText, Text: "I will run the tests.\x1b[2J"},
		{Kind: transcript.KindToolCall, Tool: "Bash", Summary: "go test ./..."},
		{Kind: transcript.KindToolResult, Tool: "Bash", Text: "ok  \tpkg\t0.1s", MoreLines: 3},
		{Kind: transcript.KindRetry, Text: "API overloaded, attempt 2"},
		{Kind: transcript.KindResult, Text: "All tests pass.", InputTokens: 1234, OutputTokens: 345, CostUSD: 0.0123},
	}
}

// colourModel returns a copy of m drawn with colour (ANSI 256, dark).
func colourModel(m Model, f *fakeSup) Model {
	st := theme.New(theme.Options{Profile: colorprofile.ANSI256, Dark: true})
	c := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }, Host: f})
	c.tickFn = func() tea.Cmd { return nil }
	return c
}

// row returns the table row of agent id as drawn, trailing spaces trimmed.
func (h *harness) row(id string) string {
	for _, l := range strings.Split(h.screen(), "\n") {
		if strings.Contains(l, " "+id[:8]+" ") && !strings.Contains(l, id[:8]+" · #") {
			return l
		}
	}
	return ""
}

// logTitle returns the top border of the log pane.
func (h *harness) logTitle() string {
	for _, l := range strings.Split(h.screen(), "\n") {
		if i := strings.Index(l, "╭─ "); i >= 0 && strings.Contains(l[i:], " · #") {
			return l[strings.LastIndex(l, "╭"):]
		}
	}
	return ""
}
