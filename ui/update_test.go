package ui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/subdash/subdash/supervisor"
)

const (
	idA = "3fa2c1d0-1111-4111-8111-111111111111" // running
	idB = "7b9e4c21-2222-4222-8222-222222222222" // completed
	idC = "c0ffee42-3333-4333-8333-333333333333" // errored, exit 2
	idD = "d15ea5ed-4444-4444-8444-444444444444" // closed
)

// threeAgents is a fake with a running, a completed and an errored agent,
// the running one with some output.
func threeAgents() *fakeSup {
	f := newFake()
	f.add(idA, "refactor the parser", supervisor.StatusRunning)
	f.add(idB, "write the changelog", supervisor.StatusCompleted)
	f.add(idC, "run the flaky tests", supervisor.StatusErrored)
	for i := 0; i < 40; i++ {
		f.print(idA, 1, fmt.Sprintf("step %d of the refactor", i))
	}
	f.print(idA, 1, "\x1b[31;1mRED-NO-RESET\x1b[m")
	f.print(idB, 1, "changelog written")
	f.print(idC, 1, "FAIL: TestFlaky")
	return f
}

func TestMoveBetweenAgents(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.wantScreen("3fa2c1d0 · #1/1")
	for _, c := range []struct{ key, want string }{
		{"j", "7b9e4c21 · #1/1"}, {"down", "c0ffee42 · #1/1"}, {"j", "c0ffee42 · #1/1"},
		{"k", "7b9e4c21 · #1/1"}, {"up", "3fa2c1d0 · #1/1"}, {"up", "3fa2c1d0 · #1/1"},
	} {
		h.keys(c.key)
		h.wantScreen(c.want)
	}
	h.keys("j", "j")
	h.wantScreen("FAIL: TestFlaky")
	h.wantScreen("› c0ffee42")
}

func TestSpawnFromInput(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("n")
	h.wantScreen("spawn › ")
	h.typeText("fix the bug")
	h.keys("enter")
	h.wantCalls(`spawn "fix the bug"`)
	h.wantScreen("spawned a0000001")
	h.wantScreen("› a0000001")
	h.wantScreen("a0000001 · #1/1")
}

func TestInputCancelAndEditing(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("n")
	h.typeText("one two three")
	h.keys("ctrl+w", "backspace")
	h.typeText("!")
	h.wantScreen("spawn › one two!")
	h.keys("ctrl+a")
	h.typeText(">")
	h.wantScreen("spawn › >▏one two!")
	h.keys("esc")
	h.noScreen("spawn › ")
	h.wantCalls()
	// Keys typed into the input never reach the dashboard.
	h.keys("n")
	h.typeText("q")
	h.typeText("i")
	h.keys("enter")
	h.wantCalls(`spawn "qi"`)
}

func TestSendToIdleAgent(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("j", "s")
	h.wantScreen("send 7b9e4c21 › ")
	h.typeText("add the release date")
	h.keys("enter")
	h.wantCalls(`send 7b9e4c21 "add the release date" interrupt=false`)
	h.wantScreen("sent to 7b9e4c21")
	h.wantScreen("7b9e4c21 · #2/2")
}

func TestSendToRunningAgentAsksToInterrupt(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("s")
	h.wantScreen("send 3fa2c1d0 (running) › ")
	h.wantScreen("enter send (asks to interrupt)")
	h.typeText("stop and summarise")
	h.keys("enter")
	h.wantScreen("? 3fa2c1d0 is running. Interrupt it and send?")
	h.wantScreen("y interrupt and send · n cancel")
	h.keys("n") // back to the input, text intact
	h.wantScreen("send 3fa2c1d0 (running) › stop and summarise")
	h.wantCalls()
	h.keys("enter", "y")
	h.wantCalls(`send 3fa2c1d0 "stop and summarise" interrupt=true`)
	h.wantScreen("3fa2c1d0 · #2/2")
}

func TestResend(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("j", "R")
	h.wantCalls(`send 7b9e4c21 "write the changelog" interrupt=false`)
	h.keys("k", "R")
	h.wantScreen("? 3fa2c1d0 is running. Interrupt it and resend?")
	h.keys("esc")
	h.wantCalls(`send 7b9e4c21 "write the changelog" interrupt=false`)
	h.keys("R", "y")
	h.wantCalls(`send 7b9e4c21 "write the changelog" interrupt=false`, `send 3fa2c1d0 "refactor the parser" interrupt=true`)
}

func TestEditAndResend(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("j", "j", "e")
	h.wantScreen("edit & resend c0ffee42 › run the flaky tests")
	h.keys("ctrl+w")
	h.typeText("tests twice")
	h.keys("enter")
	h.wantCalls(`send c0ffee42 "run the flaky tests twice" interrupt=false`)
}

func TestInterruptShowsStoppingAtOnce(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	nm, cmd := h.m.Update(keyMsg("i"))
	h.m = nm.(Model)
	h.wantScreen("◌ stopping")
	if len(h.f.Calls()) != 0 {
		t.Fatal("interrupt must run in a command, not in Update")
	}
	h.send(cmd())
	h.wantCalls("interrupt 3fa2c1d0")
	h.wantScreen("✗ errored (interrupted)")
	h.wantScreen("interrupted 3fa2c1d0")
	h.keys("i")
	h.wantScreen("agent 3fa2c1d0 is not running")
	h.wantCalls("interrupt 3fa2c1d0")
}

func TestCloseRunningAgentConfirms(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("c")
	h.wantScreen("? Close 3fa2c1d0? It is running and will be stopped.")
	h.keys("n")
	h.wantCalls()
	h.noScreen("? Close")
	h.keys("c", "y")
	h.wantCalls("close 3fa2c1d0")
	h.wantScreen("■ closed")
	h.keys("c")
	h.wantScreen("already closed")
	h.wantCalls("close 3fa2c1d0")
}

func TestCloseIdleAgentAndResume(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("j", "r")
	h.wantScreen("agent 7b9e4c21 is open (completed); nothing to resume")
	h.keys("c")
	h.wantCalls("close 7b9e4c21")
	h.wantScreen("■ closed")
	h.keys("s")
	h.typeText("more")
	h.keys("enter")
	h.wantScreen("send: agent 7b9e4c21 is closed; press r to resume it first")
	h.keys("r")
	h.wantScreen("resumed 7b9e4c21: completed")
	h.wantScreen("✓ completed")
}

func TestMoveBetweenSubmissions(t *testing.T) {
	f := newFake()
	f.add(idB, "three runs", supervisor.StatusCompleted, supervisor.StatusErrored, supervisor.StatusCompleted)
	for seq := 1; seq <= 3; seq++ {
		f.print(idB, seq, fmt.Sprintf("output of run %d", seq))
	}
	h := newHarness(t, f, 100, 30)
	h.wantScreen("7b9e4c21 · #3/3")
	h.wantScreen("output of run 3")
	h.keys("[")
	h.wantScreen("7b9e4c21 · #2/3")
	h.wantScreen("output of run 2")
	h.keys("[", "[")
	h.wantScreen("already at the first submission (#1 of 3)")
	h.wantScreen("output of run 1")
	h.keys("]", "]")
	h.wantScreen("#3/3")
	h.keys("]")
	h.wantScreen("already at the latest submission")
}

func TestScrollKeysAndFollow(t *testing.T) {
	f := newFake()
	f.add(idA, "count", supervisor.StatusRunning)
	for i := 0; i < 200; i++ {
		f.print(idA, 1, fmt.Sprintf("line %d", i))
	}
	h := newHarness(t, f, 100, 30) // log pane: 15 rows
	top := func() string {
		for _, l := range strings.Split(h.screen(), "\n") {
			if i := strings.Index(l, "│line "); i >= 0 {
				return strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(l[i+len("│"):]), "│"), " ")
			}
		}
		return ""
	}
	h.wantScreen("following")
	if top() != "line 185" {
		t.Fatalf("top %q", top())
	}
	for _, c := range []struct{ key, want string }{
		{"K", "line 184"}, {"ctrl+y", "line 183"}, {"J", "line 184"}, {"ctrl+e", "line 185"},
	} {
		h.keys(c.key)
		if top() != c.want {
			t.Fatalf("after %s: top %q, want %q", c.key, top(), c.want)
		}
	}
	h.wantScreen("following") // scrolled back down to the bottom
	for _, c := range []struct{ key, want string }{
		{"ctrl+u", "line 178"}, {"pgup", "line 164"}, {"b", "line 150"}, {"ctrl+d", "line 157"},
		{"pgdown", "line 171"}, {"g", "line 0"}, {"space", "line 14"}, {"G", "line 185"},
		{"home", "line 0"}, {"end", "line 185"},
	} {
		h.keys(c.key)
		if top() != c.want {
			t.Fatalf("after %s: top %q, want %q", c.key, top(), c.want)
		}
	}
	h.keys("f")
	h.wantScreen("paused")
	f.print(idA, 1, "line 200", "line 201")
	h.sync(idA)
	h.wantScreen("↓ 2 new lines · G follows")
	if top() != "line 185" {
		t.Fatalf("paused view moved: top %q", top())
	}
	h.keys("f")
	h.wantScreen("following")
	h.noScreen("new lines")
	h.keys("w")
	h.wantScreen("wrap · following")
}

func TestLinesArriveAndAreTrimmedWhileScrolledUp(t *testing.T) { // H18 at the model level
	f := newFake()
	f.add(idA, "count", supervisor.StatusRunning)
	for i := 0; i < 300; i++ {
		f.print(idA, 1, fmt.Sprintf("line %d", i))
	}
	h := newHarness(t, f, 100, 30)
	for i := 0; i < 300 && !strings.Contains(h.view(), "│line 100 "); i++ {
		h.keys("K")
	}
	row := func() int {
		for i, l := range strings.Split(h.view(), "\n") {
			if strings.Contains(l, "│line 100 ") {
				return i
			}
		}
		return -1
	}
	want := row()
	for i := 300; i < 600; i += 50 {
		for j := i; j < i+50; j++ {
			f.print(idA, 1, fmt.Sprintf("line %d", j))
		}
		f.trim(idA, 1, 10)
		h.sync(idA)
		if got := row(); got != want {
			t.Fatalf("line 100 moved from row %d to %d:\n%s", want, got, h.screen())
		}
	}
	h.wantScreen("↓ 300 new lines")
}

func TestOutputOfOtherAgentsLeavesTheLogAlone(t *testing.T) {
	f := threeAgents()
	h := newHarness(t, f, 100, 30)
	before := f.windowCalls(idA)
	f.print(idB, 1, "more changelog")
	h.sync(idB)
	if got := f.windowCalls(idA); got != before {
		t.Fatalf("output of an agent not shown read the shown log: %d window calls", got-before)
	}
	f.print(idA, 1, "new step")
	h.sync(idA)
	h.wantScreen("new step")
}

func TestSearch(t *testing.T) {
	f := newFake()
	f.add(idA, "count", supervisor.StatusRunning)
	for i := 0; i < 100; i++ {
		f.print(idA, 1, fmt.Sprintf("line %d", i))
	}
	h := newHarness(t, f, 100, 30)
	h.keys("/")
	h.wantScreen("search › ")
	h.typeText("LINE 5") // has upper case: exact case, no match
	h.keys("enter")
	h.wantScreen("no match for “LINE 5”")
	h.keys("/", "ctrl+a", "ctrl+k")
	h.typeText("line 5")
	h.keys("enter")
	h.wantScreen("/line 5 11/11") // the nearest match above the bottom: line 59
	h.wantScreen("paused")
	h.keys("ctrl+n")
	h.wantScreen("/line 5 1/11")
	h.keys("ctrl+p", "ctrl+p")
	h.wantScreen("/line 5 10/11")
	f.print(idA, 1, "line 5000")
	h.sync(idA)
	h.wantScreen("/line 5 10/12")
	h.keys("esc")
	h.noScreen("/line 5")
	h.keys("ctrl+n")
	h.wantScreen("no search: press / to search the log")
}

func TestPager(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("o")
	h.wantScreen("no pager configured")
	var opened string
	h.m.opts.Pager = func(path string) tea.ExecCommand { opened = path; return nil }
	h.keys("o")
	if opened != "/logs/3fa2c1d0/1.log" || h.execs != 1 {
		t.Fatalf("pager opened %q (%d execs)", opened, h.execs)
	}
	h.send(pagerDoneMsg{err: errors.New("exit status 1")})
	h.wantScreen("pager: exit status 1")
	h.wantScreen("3fa2c1d0 · #1/1") // the dashboard is intact
}

func TestHelpOverlay(t *testing.T) {
	h := newHarness(t, threeAgents(), 160, 45)
	h.keys("?")
	for _, s := range []string{"╭─ help", "Agents", "Log", "View", "General", "Input line", "spawn", "ctrl+n", "next match", "? help"[0:1]} {
		h.wantScreen(s)
	}
	h.keys("n") // keys do not leak through the overlay
	h.wantCalls()
	h.keys("esc")
	h.noScreen("╭─ help")
	h.keys("?", "?")
	h.noScreen("╭─ help")
	h.keys("?", "q")
	h.noScreen("╭─ help")
	if h.quit {
		t.Fatal("q closes the help, it does not quit")
	}
}

func TestHelpScrollsWhenSmall(t *testing.T) {
	h := newHarness(t, threeAgents(), 60, 20)
	h.keys("?")
	h.wantScreen("j/k scroll")
	h.wantScreen("Agents")
	for i := 0; i < 100; i++ {
		h.keys("j")
	}
	h.noScreen("Agents")
	h.wantScreen("agent command: sh ./agent.sh")
	h.keys("k")
}

func TestQuitWithoutRunningAgents(t *testing.T) {
	f := newFake()
	f.add(idB, "done", supervisor.StatusCompleted)
	h := newHarness(t, f, 100, 30)
	h.keys("q")
	if !h.quit {
		t.Fatal("q with nothing running quits at once")
	}
}

func TestQuitStopsRunningAgentsFirst(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("q")
	h.wantScreen("? Quit? 1 agent is running and will be stopped.")
	h.keys("n")
	if h.quit {
		t.Fatal("declined quit quits")
	}
	h.keys("ctrl+c")
	h.wantScreen("? Quit?")
	nm, cmd := h.m.Update(keyMsg("y"))
	h.m = nm.(Model)
	h.wantScreen("◌ stopping 1 of 1 agents…")
	h.wantScreen("q quit without waiting")
	h.send(cmd())
	h.wantCalls("shutdown")
	if !h.quit {
		t.Fatal("quit after the shutdown")
	}
}

func TestCtrlCTwiceQuits(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("ctrl+c", "ctrl+c")
	if !h.quit {
		t.Fatal("ctrl+c twice quits")
	}
	h.wantCalls("shutdown")
}

func TestTerminalTooSmall(t *testing.T) { // H19 at the model level
	h := newHarness(t, threeAgents(), 100, 30)
	for _, s := range [][2]int{{1, 1}, {3, 2}, {10, 3}, {39, 9}, {0, 0}} {
		h.send(tea.WindowSizeMsg{Width: s[0], Height: s[1]})
		v := h.view()
		if s[0] > 0 && s[1] > 0 {
			lines := strings.Split(v, "\n")
			if len(lines) != s[1] {
				t.Fatalf("%dx%d: %d lines", s[0], s[1], len(lines))
			}
			for _, l := range lines {
				if w := len([]rune(l)); w > s[0] {
					t.Fatalf("%dx%d: line wider than the terminal: %q", s[0], s[1], l)
				}
			}
		}
		h.keys("n", "c") // ignored while too small
	}
	h.send(tea.WindowSizeMsg{Width: 39, Height: 9})
	h.wantScreen("terminal too small")
	h.wantScreen("need ≥ 40x10, have 39x9")
	h.wantCalls()
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.wantScreen("3fa2c1d0 · #1/1")
	h.wantScreen("RED-NO-RESET")
}

func TestOperationErrorsInPlainWords(t *testing.T) {
	f := threeAgents()
	f.fail["spawn"] = &supervisor.Error{Code: supervisor.CodeLimit, Message: "subagent concurrency limit reached (4)"}
	h := newHarness(t, f, 100, 30)
	h.keys("n")
	h.typeText("one more")
	h.keys("enter")
	h.wantScreen("✗ spawn: subagent concurrency limit reached (4); wait for an agent to finish or raise --max-agents")
	h.keys("esc")
	h.noScreen("concurrency")
}

func TestWarningsAndNotes(t *testing.T) {
	f := newFake()
	f.cfg.Warnings = []string{`MEMO_SUBAGENT_MAX_AGENTS="x" is not a positive number; using 4`}
	f.cfg.Notes = []string{"memo not found on PATH: using the built-in audit agent"}
	h := newHarness(t, f, 160, 45)
	h.wantScreen(`⚠ MEMO_SUBAGENT_MAX_AGENTS="x" is not a positive number; using 4`)
	h.wantScreen("ℹ memo not found on PATH")
	h.wantScreen("⚠ 1 warning")
	h.wantScreen("0/4 running")
	h.wantScreen("cmd: sh ./agent.sh")
}

func TestStartupSpawns(t *testing.T) {
	f := newFake()
	st := Options{Spawn: []string{"first", "second"}}
	m := New(f, st)
	m.tickFn = func() tea.Cmd { return nil }
	h := &harness{t: t, m: m, f: f}
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.send(h.m.Init()())
	h.wantCalls(`spawn "first"`, `spawn "second"`)
	h.wantScreen("› a0000001") // the first stays selected
	h.noScreen("spawned")
}

func TestTranscriptToggle(t *testing.T) {
	f := newFake()
	f.cfg.Preset = &supervisor.Preset{Name: "claude", Format: "claude"}
	a := f.add(idA, "explain", supervisor.StatusRunning)
	a.info.SessionID = idA
	a.info.Activity = "Bash: go test ./..."
	a.info.Usage = supervisor.Usage{InputTokens: 1234, OutputTokens: 345, CostUSD: 0.0123}
	f.print(idA, 1, `{"type":"assistant"}`)
	a.entries[1] = transcriptFixture()
	h := newHarness(t, f, 180, 35)
	h.wantScreen("3fa2c1d0 · #1/1 · session 3fa2c1d0 · transcript")
	h.wantScreen("→ Bash: go test ./... · 1.6k tok $0.0123")
	h.wantScreen("⚙ Bash  go test ./...")
	h.wantScreen("✓ result · 1.2k in / 345 out tokens · $0.0123")
	h.keys("t")
	h.wantScreen("· raw ·")
	h.wantScreen(`{"type":"assistant"}`)
	h.keys("t")
	h.wantScreen("⚙ Bash")
}

func TestRawOnlyWithoutPreset(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("t")
	h.wantScreen("raw output only")
}

func TestEvictedSubmissionIsReadBack(t *testing.T) {
	f := newFake()
	a := f.add(idB, "runs", supervisor.StatusCompleted, supervisor.StatusCompleted, supervisor.StatusCompleted)
	f.print(idB, 1, "first run output")
	a.evicted[1] = true
	h := newHarness(t, f, 100, 30)
	h.keys("[", "[")
	h.wantCalls("load 7b9e4c21 1")
	h.wantScreen("first run output")
}

func TestKeysArrivingTogetherAreHandledOneByOne(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjK")}) // key repeat, tmux send-keys
	h.wantScreen("c0ffee42 · #1/1")
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("nhi")}) // spawn, then type into the input
	h.wantScreen("spawn › hi")
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q!"), Paste: true})
	h.wantScreen("spawn › hiq!")
	h.keys("esc")
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("nq"), Paste: true}) // a paste is not keys
	h.wantCalls()
	if h.quit {
		t.Fatal("a pasted q quit")
	}
}

func TestQuitFromATooSmallTerminal(t *testing.T) {
	h := newHarness(t, threeAgents(), 30, 5)
	h.keys("q")
	h.wantScreen("Quit? 1 agent is running and …")
	h.wantScreen("y quit · n stay")
	h.keys("n")
	h.wantScreen("terminal too small")
	h.keys("q", "y")
	h.wantCalls("shutdown")
	if !h.quit {
		t.Fatal("quit confirmed on a too small terminal does not quit")
	}
}
