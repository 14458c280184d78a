package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
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
	f.add(idA, "refactor the parser", proto.StatusRunning)
	f.add(idB, "write the changelog", proto.StatusCompleted)
	f.add(idC, "run the flaky tests", proto.StatusErrored)
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

// TestTwoSpawnsTheNewestKeepsTheSelection: two spawns typed quickly whose
// answers arrive in the other order; the one typed last is selected.
func TestTwoSpawnsTheNewestKeepsTheSelection(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	typed := func(task string) tea.Cmd { // its command held back, as a slow host answers
		h.keys("n")
		h.typeText(task)
		h.guard(true)
		nm, cmd := h.m.Update(keyMsg("enter"))
		h.guard(false)
		h.m = nm.(Model)
		return cmd
	}
	older, newer := typed("older task"), typed("newer task")
	olderDone, newerDone := older(), newer() // a0000001, a0000002
	h.send(newerDone)
	h.send(olderDone)
	h.wantCalls(`spawn "older task"`, `spawn "newer task"`)
	h.wantScreen("› a0000002")
	h.wantScreen("a0000002 · #1/1")
	// in order, the last typed ends selected too
	older, newer = typed("third"), typed("fourth")
	h.send(older())
	h.send(newer())
	h.wantScreen("› a0000004")
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
	h.wantScreen("enter send (asks: interrupt or queue)")
	h.typeText("stop and summarise")
	h.keys("enter")
	h.wantScreen("? 3fa2c1d0 is running: interrupt it and send now, queue the message for when it ends, or cancel?")
	h.wantScreen("i interrupt it and send · q/enter queue: send when it ends · esc cancel")
	h.keys("n") // back to the input, text intact
	h.wantScreen("send 3fa2c1d0 (running) › stop and summarise")
	h.wantCalls()
	h.keys("enter", "i")
	h.wantCalls(`send 3fa2c1d0 "stop and summarise" interrupt=true`)
	h.wantScreen("3fa2c1d0 · #2/2")
}

// TestSendPromptFollowsTheStatus: the send prompt opened on a running
// agent stops saying "(running)" when the agent completes, text intact;
// enter then sends at once, no interrupt asked.
func TestSendPromptFollowsTheStatus(t *testing.T) {
	f := threeAgents()
	h := newHarness(t, f, 100, 30)
	h.keys("s")
	h.typeText("summarise")
	h.wantScreen("send 3fa2c1d0 (running) › summarise")
	f.finish(idA, proto.StatusCompleted, 1)
	h.sync(idA)
	h.wantScreen("send 3fa2c1d0 › summarise")
	h.keys("enter")
	h.wantCalls("seen 3fa2c1d0", `send 3fa2c1d0 "summarise" interrupt=false`) // seen: it completed while shown
}

func TestResend(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("j", "R")
	h.wantCalls(`send 7b9e4c21 "write the changelog" interrupt=false`)
	h.keys("k", "R")
	h.wantScreen("? 3fa2c1d0 is running: interrupt it and resend now")
	h.keys("esc")
	h.wantCalls(`send 7b9e4c21 "write the changelog" interrupt=false`)
	h.keys("R", "i")
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
	if r := h.row(idA); !strings.Contains(r, "✗ errored") || !strings.Contains(r, "interrupted") {
		t.Fatalf("row of the interrupted agent: %q", r)
	}
	h.wantScreen("interrupted 3fa2c1d0")
	h.keys("i")
	h.wantScreen("agent 3fa2c1d0 is not running")
	h.wantCalls("interrupt 3fa2c1d0")
}

// TestInterruptOfAPodAgentSaysPod: an agent that runs in a pod (SPEC §13)
// has no process group here; the message says what ended.
func TestInterruptOfAPodAgentSaysPod(t *testing.T) {
	f := threeAgents()
	f.find(idA).info.Pod = "subdash-3fa2c1d0"
	h := newHarness(t, f, 120, 30)
	h.keys("i")
	h.wantScreen("interrupted 3fa2c1d0: its processes in pod subdash-3fa2c1d0 are gone")
	h.noScreen("process group gone")
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
	h.wantScreen("agent 7b9e4c21 is open (completed): resume only reopens closed ones; R reruns its last message")
	h.keys("c")
	h.wantCalls("close 7b9e4c21")
	h.wantScreen("■ closed")
	h.wantScreen("closed 7b9e4c21: stopped and archived (r reopens)")
	h.keys("r")
	h.wantScreen("reopened 7b9e4c21 (completed): nothing runs until you send (s)")
	h.wantScreen("✓ completed")
}

func TestOperationErrorsInPlainWords(t *testing.T) {
	f := threeAgents()
	f.fail["spawn"] = proto.ErrLimit(4)
	h := newHarness(t, f, 100, 30)
	h.keys("n")
	h.typeText("one more")
	h.keys("enter")
	h.wantScreen("✗ spawn: subagent concurrency limit reached (4); wait for an agent to finish or raise --max-agents")
	h.keys("esc")
	h.noScreen("concurrency")
}

func TestStartupSpawns(t *testing.T) {
	f := newFake()
	st := Options{Spawn: []string{"first", "second"}}
	f.t = t
	m := New(f, st)
	m.tickFn = func() tea.Cmd { return nil }
	h := &harness{t: t, m: m, f: f}
	h.follow(&f.feed)
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.send(h.m.Init()())
	h.wantCalls(`spawn "first"`, `spawn "second"`)
	h.wantScreen("› a0000001") // the first stays selected
	h.noScreen("spawned")
}

// TestPasteGoesToTheInputOnly: a bracketed paste is text for the input,
// kept whole; pasted at the dashboard, it is no keys (a pasted "q" must
// not quit, a pasted "n" not spawn).
func TestPasteGoesToTheInputOnly(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("n")
	h.typeText("hi")
	h.wantScreen("spawn › hi")
	h.send(tea.PasteMsg{Content: "q!"})
	h.wantScreen("spawn › hiq!")
	h.keys("esc")
	h.send(tea.PasteMsg{Content: "nq"})
	h.wantCalls()
	if h.quit {
		t.Fatal("a pasted q quit")
	}
	h.noScreen("spawn ›")
}

// TestInterruptAndSendShowsTheNewRunRunning: answering yes to "interrupt it
// and send" shows the agent stopping at once; when the send returns, the
// stop is over and the new submission is shown running, also after later
// snapshots (the supervisor's own Stopping covers the old process group).
func TestInterruptAndSendShowsTheNewRunRunning(t *testing.T) {
	for _, c := range []struct {
		name, verb string
		ask        func(h *harness)
	}{
		{"send", "send", func(h *harness) { h.keys("s"); h.typeText("summarise"); h.keys("enter") }},
		{"resend", "resend", func(h *harness) { h.keys("R") }},
		{"edit", "send", func(h *harness) { h.keys("e"); h.typeText(" again"); h.keys("enter") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, threeAgents(), 100, 30)
			c.ask(h)
			h.wantScreen("? 3fa2c1d0 is running: interrupt it and " + c.verb + " now")
			nm, cmd := h.m.Update(keyMsg("i"))
			h.m = nm.(Model)
			if r := h.row(idA); !strings.Contains(r, "◌ stopping") {
				t.Fatalf("row while the interrupt runs: %q", r)
			}
			h.send(cmd())
			h.wantScreen("sent to 3fa2c1d0")
			h.wantScreen("3fa2c1d0 · #2/2 ● running")
			for i := 0; i < 2; i++ {
				if r := h.row(idA); !strings.Contains(r, "⠋ running") || strings.Contains(r, "stopping") {
					t.Fatalf("row of the new run: %q", r)
				}
				h.sync(idA)
			}
		})
	}
}

// TestClosedAgentRefusesSendAtOnce: s, R and e on a closed agent say so at
// once, before any text is typed, and call nothing; after r they work.
func TestClosedAgentRefusesSendAtOnce(t *testing.T) {
	f := threeAgents()
	f.add(idD, "tidy the docs", proto.StatusCompleted).info.Status = proto.StatusClosed
	h := newHarness(t, f, 100, 30)
	h.keys("j", "j", "j")
	h.wantScreen("› d15ea5ed ■ closed")
	for _, k := range []string{"s", "R", "e"} {
		h.keys("esc") // clear the last message
		h.keys(k)
		h.wantScreen("⚠ agent d15ea5ed is closed; press r to reopen it first")
		h.noScreen("d15ea5ed (closed) ›")
		h.typeText("z") // not typed into an input: z means nothing
		h.noScreen("› z")
	}
	h.wantCalls()
	h.keys("r", "s")
	h.wantScreen("send d15ea5ed › ")
	h.wantCalls("resume d15ea5ed")
}
