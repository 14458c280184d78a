package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

const idDocs = "d00dfeed-4444-4444-8444-444444444444"

// newAttnHarness is newHarness with notifications (BEL and OSC 9) going
// to the returned buffer.
func newAttnHarness(t *testing.T, s Supervisor, f *fakeSup) (*harness, *testkit.SyncBuffer) {
	t.Helper()
	st := theme.Plain()
	out := &testkit.SyncBuffer{}
	f.t = t
	m := New(s, Options{Styles: &st, Now: func() time.Time { return t0 }, Terminal: out, Notify: Notify{Bell: true, OSC: 9}, Host: f})
	m.tickFn = func() tea.Cmd { return nil }
	h := &harness{t: t, m: m, f: f}
	h.follow(&f.feed)
	h.send(tea.WindowSizeMsg{Width: 109, Height: 30})
	return h, out
}

func bells(s string) int { return strings.Count(s, "\a") }
func oscs(s string) int  { return strings.Count(s, "\x1b]9;") }

func TestNeedsYouMarkNotificationAndSeen(t *testing.T) {
	f := threeAgents()
	f.add(idDocs, "update the docs", proto.StatusRunning)
	h, out := newAttnHarness(t, f, f)
	h.wantScreen("3fa2c1d0 · #1/1") // A is selected

	// D (not selected) finishes: marked, counted, one BEL and one OSC 9.
	f.finish(idDocs, proto.StatusCompleted, 1)
	h.sync(idDocs)
	if r := h.row(idDocs); !strings.HasPrefix(r, "│◆  d00dfeed ✓ completed") || !strings.Contains(r, "update the docs") {
		t.Fatalf("row of D: %q", r)
	}
	h.wantScreen("◆ 1 needs you (a)")
	want := "\a\x1b]9;subdash: agent d00dfeed completed: update the docs\x1b\\"
	if got := out.String(); got != want {
		t.Fatalf("terminal got %q, want %q", got, want)
	}
	h.sync(idDocs) // the same transition again: nothing more
	if got := out.String(); got != want {
		t.Fatalf("a second snapshot rang again: %q", got)
	}
	h.wantCalls() // D is not on screen: still needs you

	// A, on screen in a focused terminal, finishes: no notification, and
	// the dashboard marks it seen.
	f.finish(idA, proto.StatusErrored, 2)
	h.sync(idA)
	if got := out.String(); got != want {
		t.Fatalf("the agent on screen rang: %q", got)
	}
	h.wantCalls("seen 3fa2c1d0")
	h.sync(idA)
	if r := h.row(idA); strings.Contains(r, "needs you") {
		t.Fatalf("A still marked after seen: %q", r)
	}

	// The terminal loses focus: the agent on screen rings, and is marked
	// seen only when the focus comes back.
	h.send(tea.BlurMsg{})
	h.keys("R") // resend A (it is not running: sent at once)
	f.finish(idA, proto.StatusCompleted, 3)
	h.sync(idA)
	if got := out.String(); bells(got) != 2 || oscs(got) != 2 {
		t.Fatalf("blurred terminal: %q", got)
	}
	h.wantCalls("seen 3fa2c1d0", `send 3fa2c1d0 "refactor the parser" interrupt=false`)
	h.send(tea.FocusMsg{})
	h.wantCalls("seen 3fa2c1d0", `send 3fa2c1d0 "refactor the parser" interrupt=false`, "seen 3fa2c1d0")

	// Selecting D clears it.
	h.keys("j", "j", "j")
	h.wantScreen("d00dfeed · #1/1")
	if c := f.Calls(); c[len(c)-1] != "seen d00dfeed" {
		t.Fatalf("selecting D: calls %q", c)
	}
}

func TestNotifyOffAndAgentsThatNeededYouBeforeStart(t *testing.T) {
	f := threeAgents()
	f.add(idDocs, "update the docs", proto.StatusRunning)
	f.finish(idDocs, proto.StatusCompleted, 1) // before the dashboard started
	st := theme.Plain()
	out := &testkit.SyncBuffer{}
	f.t = t
	m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }, Terminal: out}) // Notify zero: off
	m.tickFn = func() tea.Cmd { return nil }
	h := &harness{t: t, m: m, f: f}
	h.follow(&f.feed)
	h.send(tea.WindowSizeMsg{Width: 109, Height: 30})
	h.wantScreen("◆ 1 needs you (a)") // marked, not rung
	f.add("e0000000-5555-4555-8555-555555555555", "later", proto.StatusRunning)
	f.finish("e0000000-5555-4555-8555-555555555555", proto.StatusErrored, 2)
	h.sync("e0000000-5555-4555-8555-555555555555")
	h.wantScreen("◆ 2 need you (a)")
	if got := out.String(); got != "" {
		t.Fatalf("--notify off wrote %q", got)
	}
}

// threeNeedYou is a harness of threeAgents and three more that need you:
// by Seq (which gives Since) the second has waited longest, then the
// first, then the third; it returns them in that order.
func threeNeedYou(t *testing.T) (*harness, []string) {
	f := threeAgents()
	ids := []string{
		"d1000000-0000-4000-8000-000000000001",
		"d2000000-0000-4000-8000-000000000002",
		"d3000000-0000-4000-8000-000000000003",
	}
	for _, id := range ids {
		f.add(id, "task "+id[:2], proto.StatusRunning)
	}
	h, _ := newAttnHarness(t, f, f)
	f.finish(ids[1], proto.StatusCompleted, 1)
	f.finish(ids[0], proto.StatusErrored, 2)
	f.finish(ids[2], proto.StatusCompleted, 3)
	h.sync(ids...)
	return h, []string{ids[1], ids[0], ids[2]}
}

func TestJumpGoesToTheOldestThatNeedsYou(t *testing.T) {
	h, oldestFirst := threeNeedYou(t)
	h.wantScreen("◆ 3 need you (a)")
	for _, id := range oldestFirst {
		h.keys("a")
		h.wantScreen(id[:8] + " · #1/1")
		h.sync(id) // the seen mark arrives
	}
	h.keys("a")
	h.wantScreen("no other agent needs you")
	h.noScreen("need you (a)")
}

// An agent looked at needs you no more, also before the host's change
// saying so comes back: a goes on to the next, not back to it.
func TestJumpSkipsWhatWasSeenBeforeTheHostSaysSo(t *testing.T) {
	h, oldestFirst := threeNeedYou(t)
	feed := h.ev
	h.ev = nil // the host's changes wait in the subscription: every seen mark is on its way
	var calls []string
	for _, id := range oldestFirst {
		h.keys("a")
		h.wantScreen(id[:8] + " · #1/1")
		calls = append(calls, "seen "+id[:8])
	}
	h.keys("a")
	h.wantScreen("no other agent needs you")
	h.wantCalls(calls...)
	h.ev = feed
	h.keys("a") // the marks arrive
	h.noScreen("need you (a)")
}

func TestFilterKeepsTheSelectionAndShowsInTheTitle(t *testing.T) {
	f := threeAgents()
	h, _ := newAttnHarness(t, f, f)
	h.keys("j", "j") // C, errored
	h.wantScreen("c0ffee42 · #1/1")
	h.keys("F")
	h.wantScreen("enter filter") // not "enter  · esc cancel"
	h.typeText("nothing matches this")
	h.keys("enter")
	h.wantScreen("no agent matches the filter")
	h.noScreen("no agents yet")
	h.keys("F")
	h.send(keyMsg("ctrl+u"))
	h.typeText("errored")
	h.keys("enter")
	h.wantScreen("agents 1/3 · filter: errored")
	h.wantScreen("c0ffee42 · #1/1")
	if h.row(idA) != "" || h.row(idB) != "" {
		t.Fatal("filtered rows still drawn")
	}
	// Rows move (a new agent before it in the snapshot): still C.
	f.add("00000000-9999-4999-8999-999999999999", "flaky tests again", proto.StatusErrored)
	h.sync("00000000-9999-4999-8999-999999999999")
	h.wantScreen("agents 2/4 · filter: errored")
	h.wantScreen("c0ffee42 · #1/1")
	// Text filter; then clear.
	h.keys("F")
	h.send(keyMsg("ctrl+u"))
	h.typeText("changelog")
	h.keys("enter")
	h.wantScreen("agents 1/4 · filter: changelog")
	h.wantScreen("7b9e4c21 · #1/1")
	h.keys("F")
	h.send(keyMsg("ctrl+u"))
	h.keys("enter")
	h.wantScreen("filter cleared")
	h.wantScreen("7b9e4c21 · #1/1")
}

func TestTableTopBottomAndPageKeys(t *testing.T) {
	f := newFake()
	for i := 0; i < 200; i++ {
		f.add(fmt.Sprintf("%08x-0000-4000-8000-%012d", 0xb0000000+i, i), fmt.Sprintf("task %03d", i), proto.StatusCompleted)
	}
	h, _ := newAttnHarness(t, f, f)
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.keys(">")
	h.wantScreen("task 199")
	h.wantScreen(fmt.Sprintf("%08x · #1/1", 0xb0000000+199))
	h.keys("<")
	h.wantScreen(fmt.Sprintf("%08x · #1/1", 0xb0000000))
	h.keys("}")
	first, end := h.m.table.Shown()
	if h.m.table.Cursor() != end-first-1 && h.m.table.Cursor() == 0 {
		t.Fatalf("page down: cursor %d, shown %d–%d", h.m.table.Cursor(), first, end)
	}
	c := h.m.table.Cursor()
	h.keys("{")
	if h.m.table.Cursor() != 0 || c == 0 {
		t.Fatalf("page up from %d: cursor %d", c, h.m.table.Cursor())
	}
}

func TestQueueDialogAndCancelKeyWithTheFake(t *testing.T) {
	f := threeAgents()
	h, _ := newAttnHarness(t, f, f)
	h.keys("s")
	h.typeText("then write the docs")
	h.keys("enter")
	h.wantScreen("i interrupt it and send · q/enter queue: send when it ends · esc cancel")
	h.keys("q")
	h.wantCalls(`queue 3fa2c1d0 "then write the docs"`)
	h.wantScreen("queued for 3fa2c1d0: it starts when the running submission ends (u cancels it)")
	h.sync(idA)
	if r := h.row(idA); !strings.Contains(r, "▸ queued: “then write the docs” · refactor the parser") {
		t.Fatalf("row: %q", r)
	}
	h.keys("u")
	h.wantCalls(`queue 3fa2c1d0 "then write the docs"`, "cancel-queue 3fa2c1d0")
	h.wantScreen("cancelled the message queued for 3fa2c1d0")
	h.sync(idA)
	h.keys("u")
	h.wantScreen("agent 3fa2c1d0 has no queued message")
	// Cancel in the dialog goes back to the input, text intact.
	h.keys("R", "esc")
	h.wantCalls(`queue 3fa2c1d0 "then write the docs"`, "cancel-queue 3fa2c1d0")
}

// realHarness drives the dashboard over a real supervisor.
func realHarness(t *testing.T, s *supervisor.Supervisor) *harness {
	t.Helper()
	st := theme.Plain()
	m := New(s, Options{Styles: &st, Terminal: &testkit.SyncBuffer{}, Notify: Notify{Bell: true, OSC: 9}, Host: s})
	m.tickFn = func() tea.Cmd { return nil }
	h := &harness{t: t, m: m}
	h.follow(s)
	h.send(tea.WindowSizeMsg{Width: 109, Height: 30})
	return h
}

// gatedCommand waits for the file named by the message's second word
// when the message starts with "hold"; "… fail" exits 3.
const gatedCommand = `read m; set -- $m; if [ "$1" = hold ]; then while [ ! -e "$2" ]; do sleep 0.02; done; fi; echo "ran $m"; [ "$3" = fail ] && exit 3; exit 0`

// until delivers snapshots of s to h until cond holds, failing after 20 s.
func until(t *testing.T, h *harness, s *supervisor.Supervisor, what string, cond func() bool) {
	t.Helper()
	sub := s.Subscribe()
	defer sub.Close()
	deadline := time.After(20 * time.Second)
	for {
		ok := cond()
		h.send(ChangesMsg{Changes: changesOf(h.m.agents, s.Agents())}) // at least as new as what cond saw
		if ok && cond() {
			return
		}
		select {
		case <-sub.Ready():
			sub.Drain()
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("not within 20s: %s\n%s", what, h.screen())
		}
	}
}

func TestQueuePathsWithARealSupervisor(t *testing.T) {
	for _, c := range []struct {
		name string
		act  func(t *testing.T, h *harness, s *supervisor.Supervisor, id string)
	}{
		{"ends ok", func(t *testing.T, h *harness, s *supervisor.Supervisor, id string) {
			endsThenQueueRuns(t, h, s, id, "completed")
		}},
		{"ends in error", func(t *testing.T, h *harness, s *supervisor.Supervisor, id string) {
			endsThenQueueRuns(t, h, s, id, "errored")
		}},
		{"closed", func(t *testing.T, h *harness, s *supervisor.Supervisor, id string) {
			h.keys("c", "y")
			until(t, h, s, "closed, queue dropped", func() bool {
				return strings.Contains(h.view(), "closed "+id[:8]+": stopped and archived (r reopens); its queued message was dropped")
			})
			assertSubmissions(t, s, id, 1)
		}},
		{"cancelled", func(t *testing.T, h *harness, s *supervisor.Supervisor, id string) {
			h.keys("u")
			h.wantScreen("cancelled the message queued for " + id[:8])
			openGateIn(t, s, "g1")
			until(t, h, s, "completed", func() bool { a, _ := s.Agent(id); return a.Status == proto.StatusCompleted })
			assertSubmissions(t, s, id, 1)
		}},
		{"interrupted while queued", func(t *testing.T, h *harness, s *supervisor.Supervisor, id string) {
			// The interrupt keeps the queued message for the next
			// submission (SPEC §14, as Memo keeps its mailbox).
			h.keys("i")
			until(t, h, s, "interrupted, queue kept", func() bool {
				return strings.Contains(h.view(), "interrupted "+id[:8]+": process group gone")
			})
			h.wantScreen("▸ queued: “quick next”")
			assertSubmissions(t, s, id, 1)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := realSupervisor(t, gatedCommand)
			first := "hold g1"
			if c.name == "ends in error" {
				first = "hold g1 fail"
			}
			res, err := s.Spawn(t.Context(), first)
			if err != nil {
				t.Fatal(err)
			}
			h := realHarness(t, s)
			h.keys("s")
			h.typeText("quick next")
			h.keys("enter", "q")
			until(t, h, s, "the row shows the queued message", func() bool {
				return strings.Contains(h.view(), "▸ queued: “quick next”")
			})
			c.act(t, h, s, res.AgentID)
		})
	}
}

// endsThenQueueRuns opens the gate of the first submission with a wait in
// flight: the wait returns the first submission's final status, then the
// queued message runs as submission 2.
func endsThenQueueRuns(t *testing.T, h *harness, s *supervisor.Supervisor, id, status string) {
	t.Helper()
	first, _ := s.Agent(id)
	waited := make(chan proto.WaitResult, 1)
	go func() {
		ms := proto.MaxWaitTimeoutMS
		r, _ := s.Wait(context.Background(), []string{id}, &ms)
		waited <- r
	}()
	// the wait must be in flight when the submission ends: one begun
	// after would return the queued submission's end instead
	testkit.Eventually(t, 10*time.Second, "the wait in flight", func() bool { return s.Waiting() == 1 })
	openGateIn(t, s, "g1")
	r := <-waited
	if string(r.Status[id]) != status || *r.Details[id].LastSubmissionID != first.Submissions[0].ID {
		t.Fatalf("wait in flight: %+v", r)
	}
	until(t, h, s, "the queued message ran", func() bool {
		a, _ := s.Agent(id)
		return len(a.Submissions) == 2 && a.Status == proto.StatusCompleted
	})
	h.wantScreen(id[:8] + " · #2/2 ✓ completed")
	h.noScreen("▸ queued")
}

func openGateIn(t *testing.T, s *supervisor.Supervisor, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.Config().Dir, name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func assertSubmissions(t *testing.T, s *supervisor.Supervisor, id string, n int) {
	t.Helper()
	a, _ := s.Agent(id)
	if len(a.Submissions) != n {
		t.Fatalf("%d submissions, want %d", len(a.Submissions), n)
	}
}

func TestQuitSaysQueuedMessagesWillNotRun(t *testing.T) {
	f := threeAgents()
	h, _ := newAttnHarness(t, f, f)
	h.keys("s")
	h.typeText("later")
	h.keys("enter", "q")
	h.sync(idA)
	h.keys("q")
	h.wantScreen("Quit? 1 agent is running and will be stopped. 1 queued message will not run.")
}
