package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// Update()/View() tests of the screen as a whole: help, quitting, a
// terminal too small, warnings and notes.

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
	for i := 0; i < 300; i++ {
		h.keys("j")
	}
	h.noScreen("Agents")
	h.wantScreen("agent command: sh ./agent.sh")
	h.keys("k")
}

func TestQuitWithoutRunningAgents(t *testing.T) {
	f := newFake()
	f.add(idB, "done", proto.StatusCompleted)
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
	h.wantScreen("q kill them now and quit")
	h.send(cmd())
	h.wantCalls("shutdown")
	if !h.quit {
		t.Fatal("quit after the shutdown")
	}
}

// TestSecondQuitKillsNow: q while the agents are being stopped cuts their
// grace period (SIGKILL now) and quits.
func TestSecondQuitKillsNow(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("q")
	nm, _ := h.m.Update(keyMsg("y")) // the shutdown has not ended yet
	h.m = nm.(Model)
	h.wantScreen("◌ stopping 1 of 1 agents…")
	h.keys("q")
	h.wantCalls("skip-grace")
	if !h.quit {
		t.Fatal("a second q does not quit")
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
	// Narrower than that line, the size there is stays whole on a line of
	// its own, and it is the line kept when rows run out.
	for _, c := range []struct {
		w, h int
		want string
	}{{20, 5, "have 20x5"}, {20, 5, "need ≥ 40x10"}, {20, 5, "terminal too small"}, {12, 1, "have 12x1"}, {9, 2, "9x2"}, {3, 2, "3x2"}} {
		h.send(tea.WindowSizeMsg{Width: c.w, Height: c.h})
		h.wantScreen(c.want)
	}
	h.wantCalls()
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.wantScreen("3fa2c1d0 · #1/1")
	h.wantScreen("RED-NO-RESET")
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

// TestEmojiKeepTheFrame: VS16, skin tones and ZWJ make terminals disagree
// on a character's width (tmux counts "⚠️" one cell, kitty two). Wherever a
// message is drawn (table, log title, input line, a message quoting it)
// every row stays exactly the frame's width, counted either way; the
// message sent is exactly the one typed.
func TestEmojiKeepTheFrame(t *testing.T) {
	const msg = "fix ⚠️ warnings 👍🏽"
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			f := newFake()
			f.cfg.PresetName, f.cfg.PresetFormat = "claude", "claude"
			a := f.add(idB, msg, proto.StatusCompleted)
			a.entries[1] = []transcript.Entry{{Kind: transcript.KindText, Text: "fixed " + msg}, {Kind: transcript.KindStderr, Text: "👨‍👩‍👧 " + msg}}
			h := newHarness(t, f, sz[0], sz[1])
			h.wantScreen("fix ⚠ warnings 👍")
			checkFrame(t, h.view(), sz[0], sz[1])

			h.keys("e") // edit & resend: pre-filled with the message
			h.wantScreen("edit & resend 7b9e4c21 › fix ⚠ warnings 👍")
			checkFrame(t, h.view(), sz[0], sz[1])
			h.keys("enter")
			h.wantCalls(fmt.Sprintf("send 7b9e4c21 %q interrupt=false", msg))
			checkFrame(t, h.view(), sz[0], sz[1])

			h.keys("/") // a query quoted on the message line and the footer
			h.typeText("⚠️ nowhere")
			h.keys("enter")
			h.wantScreen("no match for “⚠ nowhere”")
			checkFrame(t, h.view(), sz[0], sz[1])
		})
	}
}

// TestTooSmallKeysReachNoHiddenWidget: while "terminal too small" hides
// everything, q and ctrl+c quit as usual and every other key is dropped,
// so nothing is typed into an input the user cannot see.
func TestTooSmallKeysReachNoHiddenWidget(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("s")
	h.typeText("abc")
	h.send(tea.WindowSizeMsg{Width: 30, Height: 5})
	h.wantScreen("terminal too small")
	h.typeText("xyz")
	h.keys("backspace", "enter", "esc")
	h.keys("q") // quits as usual: an agent runs, so it asks
	h.wantScreen("Quit? 1 agent is running and …")
	h.keys("n")
	h.wantScreen("terminal too small")
	h.keys("ctrl+c", "n")
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.wantScreen("send 3fa2c1d0 (running) › abc▏")
	h.wantCalls()
	if h.quit {
		t.Fatal("declined quit quits")
	}

	h.keys("esc", "?") // the help overlay, hidden, does not take q either
	h.send(tea.WindowSizeMsg{Width: 30, Height: 5})
	h.keys("q", "y")
	h.wantCalls("shutdown")
	if !h.quit {
		t.Fatal("q on a too small terminal does not quit")
	}
}

// TestTableSaysWhichRowsAreShown: with more agents than rows, the table's
// footer says which ones are drawn, and follows the selection.
func TestTableSaysWhichRowsAreShown(t *testing.T) {
	f := newFake()
	for i := 0; i < 25; i++ {
		f.add(fmt.Sprintf("%08d-1111-4111-8111-111111111111", i), fmt.Sprintf("task %d", i), proto.StatusCompleted)
	}
	h := newHarness(t, f, 100, 16)
	h.wantScreen("1–")
	h.wantScreen("of 25 · j/k")
	for i := 0; i < 24; i++ {
		h.keys("j")
	}
	h.wantScreen("–25 of 25 · j/k")
	h.noScreen("1–")

	few := newHarness(t, threeAgents(), 100, 30)
	few.noScreen("of 3")
}

// TestShortHelpKeepsHelpAndQuit: on an 80-column terminal the one-line
// help drops bindings from the middle, never "? help" and "q quit".
func TestShortHelpKeepsHelpAndQuit(t *testing.T) {
	for _, w := range []int{80, 60} {
		h := newHarness(t, threeAgents(), w, 30)
		h.wantScreen("? help · q quit")
		h.wantScreen("n spawn")
	}
}

// TestNotesNeverHideEachOther: at 80 columns the most important note is in
// view with how many more there are, and the help overlay lists them all.
func TestNotesNeverHideEachOther(t *testing.T) {
	f := newFake()
	f.cfg.Warnings = []string{`MEMO_SUBAGENT_MAX_AGENTS="x" is not a positive number; using 4`}
	f.cfg.Notes = []string{"found 3 agent process group(s) left running by an earlier subdash, and terminated them", "memo not found on PATH: using the built-in audit agent"}
	a := f.add(idA, "flood", proto.StatusCompleted)
	a.info.Failure = "log file could not be written (file too large): /state/a.log; output from here on is on screen only"
	h := newHarness(t, f, 80, 30)
	h.wantScreen("✗ 3fa2c1d0: log file could not be written (file too")
	h.wantScreen("· 3 more (? lists them)")
	h.wantScreen("✓ completed   1 42s    ✗ no log · flood")
	h.wantScreen("✗ 1 failing to log")
	h.keys("?")
	for _, s := range []string{"Notes", "/state/a.log", "found 3 agent process group(s)", "memo not found on PATH", "MEMO_SUBAGENT_MAX_AGENTS"} {
		h.wantScreen(s)
	}
}

// TestHelpShowsALongNoteWhole: a note holding a path longer than the
// overlay is wide (a journal that cannot be written) wraps onto more rows
// in the help overlay; no part of the path is cut.
func TestHelpShowsALongNoteWhole(t *testing.T) {
	f := newFake()
	path := "/home/someone/.local/state/subdash/runs/20261201T192439Z-ffecbd/journal.jsonl"
	f.cfg.Warnings = []string{"the journal cannot be written (file too large): " + path + "; records of this run are lost from here on"}
	for _, w := range []int{60, 80} {
		h := newHarness(t, f, w, 30)
		h.keys("?")
		var joined strings.Builder
		for _, l := range strings.Split(h.screen(), "\n") {
			joined.WriteString(strings.Trim(strings.TrimSpace(l), "│ "))
		}
		if !strings.Contains(joined.String(), path) {
			t.Errorf("at %d columns the help overlay does not show %s whole:\n%s", w, path, h.screen())
		}
	}
}

// TestOneFailureOneNote: a failure every agent has (the journal
// cannot be written: a full disk) is one note naming them, not one note per
// agent (eleven restored agents gave eleven).
func TestOneFailureOneNote(t *testing.T) {
	f := newFake()
	const full = "the journal cannot be written (no space left on device): /state/runs/r/journal.jsonl; records of this run are lost from here on"
	for i := range 11 {
		a := f.add(fmt.Sprintf("%08x-0000-4000-8000-%012d", 0xa0000000+i, i), "task", proto.StatusCompleted)
		a.info.Failure = full
	}
	h := newHarness(t, f, 200, 30)
	if ns := h.m.notes(); len(ns) != 1 || ns[0].text != "a0000000, a0000001, a0000002 and 8 more agents: "+full {
		t.Fatalf("notes: %+v", ns)
	}
	h.noScreen("more (? lists them)")
}
