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
	"github.com/subdash/subdash/theme"
)

// Ids of the tree scene.
const (
	idReview = "1e0e0e01-0000-4000-8000-000000000001"
	idTests  = "2e0e0e02-0000-4000-8000-000000000002"
	idUnit   = "3e0e0e03-0000-4000-8000-000000000003"
	idE2E    = "4e0e0e04-0000-4000-8000-000000000004"
	idDocs2  = "5e0e0e05-0000-4000-8000-000000000005"
	idLoose  = "6e0e0e06-0000-4000-8000-000000000006"
	idLint   = "7e0e0e07-0000-4000-8000-000000000007"
	idFmt    = "8e0e0e08-0000-4000-8000-000000000008"
)

// treeAgents is an orchestration three levels deep on a host of the
// tree: review runs tests (which ran unit and e2e) and docs; an agent
// without a name; lint holds three queued messages and ran fmt.
func treeAgents() *fakeSup {
	f := newFake()
	f.cfg.Features = []string{proto.FeatureTextMessage, proto.FeatureTree}
	f.child("", idReview, "review", "review the parser change", proto.StatusRunning)
	tests := f.child(idReview, idTests, "tests", "run the test suites", proto.StatusCompleted)
	tests.info.NeedsYou = &proto.Attention{Reason: "completed", Seq: 1, Since: proto.Time{Time: t0}, Text: "tests completed"}
	f.child(idTests, idUnit, "unit", "go test ./...", proto.StatusRunning)
	f.child(idTests, idE2E, "e2e", "go test ./e2e", proto.StatusErrored)
	f.child(idReview, idDocs2, "docs", "check the README", proto.StatusCompleted)
	f.child("", idLoose, "", "summarize .", proto.StatusCompleted)
	lint := f.child("", idLint, "lint", "run golangci-lint", proto.StatusRunning)
	lint.info.QueuedMessages = []string{"fix what it found", "run it again", "then report"}
	lint.info.QueuedMessage = lint.info.QueuedMessages[0]
	f.child(idLint, idFmt, "fmt", "gofmt -l .", proto.StatusClosed)
	for i := 0; i < 30; i++ {
		f.print(idReview, 1, fmt.Sprintf("reading file %d of the parser", i))
	}
	return f
}

// treeSizes are the sizes of the tree's goldens: the stacked layout at 80
// columns, the side-by-side one at 120 and 160.
var treeSizes = [][2]int{{80, 24}, {120, 35}, {160, 45}}

func TestGoldenTree(t *testing.T) {
	runGoldens(t, []goldenScene{
		{"tree", treeAgents, nil},
		{"tree_folded", treeAgents, func(h *harness) { h.keys("z") }}, // review's subtree
		{"tree_filter", treeAgents, func(h *harness) {
			h.keys("F")
			h.typeText("errored")
			h.keys("enter")
		}},
		{"tree_child_selected", treeAgents, func(h *harness) { h.keys("j", "j", "j") }}, // e2e
	}, treeSizes)
}

// TestTreeDrawsChildrenUnderTheirParent: the rows are in tree order with
// the glyphs, task names (the short id where there is none) and the
// queued count.
func TestTreeDrawsChildrenUnderTheirParent(t *testing.T) {
	h := newHarness(t, treeAgents(), 100, 40)
	for _, want := range []string{
		"› review ", "  ├─ tests ", "  │  ├─ unit ", "  │  └─ e2e ", "  └─ docs ", "  6e0e0e06 ", "  lint ", "  └─ fmt ",
		"▸ 3 queued: “fix what it found”",
	} {
		h.wantScreen(want)
	}
	if v := h.view(); strings.Index(v, "e2e ") > strings.Index(v, "docs ") || strings.Index(v, "fmt ") < strings.Index(v, "lint ") {
		t.Fatalf("rows out of tree order:\n%s", v)
	}
}

// TestFoldCountsWhatItHides: z folds the selected agent's subtree into
// its row, which counts what it hides; z again unfolds; z on a leaf folds
// its parent; Z folds and unfolds everything.
func TestFoldCountsWhatItHides(t *testing.T) {
	h := newHarness(t, treeAgents(), 100, 40)
	h.keys("z")
	h.wantScreen("› review +4 ")
	h.wantScreen("4 agents: 1 running, 1 needs you, 1 errored")
	if v := h.view(); strings.Contains(v, "unit ") || strings.Contains(v, "├─ tests") {
		t.Fatalf("folded children still drawn:\n%s", v)
	}
	h.keys("z")
	h.wantScreen("│  └─ e2e ")
	h.keys("j", "j") // unit
	h.keys("z")      // a leaf: its parent folds, and takes the selection
	h.wantScreen("› ├─ tests +2 ")
	if h.m.table.SelectedID() != idTests {
		t.Fatalf("selection on %s, want tests", h.m.table.SelectedID())
	}
	h.keys("Z") // something is folded: unfold all
	h.wantScreen("│  ├─ unit ")
	h.wantScreen("unfolded every subtree")
	h.keys("Z")
	h.wantScreen("folded 3 subtrees")
	if n := h.m.table.Len(); n != 3 {
		t.Fatalf("fold all shows %d rows, want review, 6e0e0e06, lint:\n%s", n, h.view())
	}
	if h.m.table.SelectedID() != idReview {
		t.Fatalf("a fold that hides the selected agent selects its nearest shown ancestor, got %s", h.m.table.SelectedID())
	}
}

// TestArrowsWalkTheTree: ← folds, else goes to the parent; → unfolds,
// else goes to the first child.
func TestArrowsWalkTheTree(t *testing.T) {
	h := newHarness(t, treeAgents(), 100, 40)
	h.keys("right") // review has children: its first child
	if got := h.m.table.SelectedID(); got != idTests {
		t.Fatalf("→ selected %s, want tests", got)
	}
	h.keys("left") // tests has children, unfolded: fold
	h.wantScreen("› ├─ tests +2 ")
	h.keys("left") // folded: to the parent
	if got := h.m.table.SelectedID(); got != idReview {
		t.Fatalf("← selected %s, want review", got)
	}
	h.keys("j", "right") // tests again: unfold
	h.wantScreen("│  ├─ unit ")
}

// TestSelectionStaysWhenRowsMove: a child spawned under review moves the
// rows below it; the selection stays on its agent.
func TestSelectionStaysWhenRowsMove(t *testing.T) {
	f := treeAgents()
	h := newHarness(t, f, 100, 40)
	h.keys(">") // fmt, the last row
	h.f.child(idReview, "9e0e0e09-0000-4000-8000-000000000009", "bench", "go test -bench .", proto.StatusRunning)
	h.f.changed("9e0e0e09-0000-4000-8000-000000000009")
	h.sync(idFmt)
	h.wantScreen("└─ bench ")
	if got := h.m.table.SelectedID(); got != idFmt {
		t.Fatalf("selection moved to %s", got)
	}
	h.wantScreen("› └─ fmt ")
}

// TestFilterShowsAncestorsMuted: a match brings its ancestors, which say
// how many matches are below them, and the title counts only matches; the
// selection leaves an ancestor for the first match.
func TestFilterShowsAncestorsMuted(t *testing.T) {
	h := newHarness(t, treeAgents(), 100, 40)
	h.keys("F")
	h.typeText("e2e")
	h.keys("enter")
	h.wantScreen("agents 1/8 · filter: e2e")
	h.wantScreen("review ")
	h.wantScreen("1 match below")
	h.wantScreen("›    └─ e2e ") // review, selected before, is only context now
	if v := h.view(); strings.Contains(v, "docs ") || strings.Contains(v, "lint ") {
		t.Fatalf("agents that neither match nor lead to a match are drawn:\n%s", v)
	}
	h.keys("z")
	h.wantScreen("clear it (F, ctrl+u, enter) to fold")
}

// TestJumpUnfoldsWhatItJumpsInto: a (next agent that needs you) selects
// tests inside folded review, unfolding it.
func TestJumpUnfoldsWhatItJumpsInto(t *testing.T) {
	h := newHarness(t, treeAgents(), 100, 40)
	h.keys("Z")
	h.keys("a")
	if got := h.m.table.SelectedID(); got != idTests {
		t.Fatalf("a selected %s, want tests", got)
	}
	h.wantScreen("› ├─ tests +2 ") // review unfolded; tests' own fold stays
}

// TestOlderHostGetsTheFlatTable: without the tree feature the table is
// today's: every agent a row by its short id, in the order they came.
func TestOlderHostGetsTheFlatTable(t *testing.T) {
	f := treeAgents()
	f.cfg.Features = []string{proto.FeatureTextMessage}
	h := newHarness(t, f, 100, 40)
	h.wantScreen("  ID       STATUS")
	if v := h.view(); strings.Contains(v, "├─") || strings.Contains(v, "› review") {
		t.Fatalf("a host without the tree got a tree:\n%s", v)
	}
	h.keys("z")
	h.wantScreen("no tree to fold")
}

// TestSpawnWithATaskName: tab in the spawn input edits the task name, tab
// again the message; enter spawns the agent with both, under the root.
func TestSpawnWithATaskName(t *testing.T) {
	h := newHarness(t, treeAgents(), 100, 40)
	h.keys("n")
	h.wantScreen("tab: give it a task name")
	h.typeText("check the links")
	h.keys("tab")
	h.wantScreen("spawn · task name › ")
	h.typeText("links")
	h.keys("tab")
	h.wantScreen("spawn links › check the links")
	h.keys("enter")
	h.wantCalls(`spawn "check the links" as "links"`)
	h.wantScreen("› links ")
	h.wantScreen("spawned links")
}

// TestSpawnRefusesABadNameKeepingTheText: a name against Memo's rule, or
// one an agent under the root holds, keeps the input open on the name
// with the message kept, and spawns nothing.
func TestSpawnRefusesABadNameKeepingTheText(t *testing.T) {
	h := newHarness(t, treeAgents(), 100, 40)
	h.keys("n")
	h.typeText("check the links")
	h.keys("tab")
	h.typeText("bad name!")
	h.keys("enter")
	h.wantScreen("spawn · task name (must match [A-Za-z0-9][A-Za-z0-9_-]*) › bad name!")
	for range "bad name!" {
		h.keys("backspace")
	}
	h.typeText("review")
	h.keys("enter")
	h.wantScreen("spawn · task name (/root/review exists: 1e0e0e01, running) › review")
	h.keys("tab")
	h.wantScreen("spawn review › check the links")
	if calls := h.f.Calls(); len(calls) != 0 {
		t.Fatalf("spawned with a bad name: %v", calls)
	}
	h.keys("tab", "ctrl+u")
	h.typeText("links")
	h.keys("enter")
	h.wantCalls(`spawn "check the links" as "links"`)
}

// TestCancelTheLastOfSeveralQueued: u cancels the last queued message and
// says what it was and how many remain; the row's count follows.
func TestCancelTheLastOfSeveralQueued(t *testing.T) {
	h := newHarness(t, treeAgents(), 100, 40)
	for h.m.table.SelectedID() != idLint {
		h.keys("j")
	}
	h.keys("u")
	h.wantCalls("seen "+idTests[:8], "cancel-queue "+idLint[:8]) // passing tests saw it
	h.wantScreen("cancelled the last of 3 messages queued for lint (“then report”); 2 remain, u cancels the next")
	h.wantScreen("▸ 2 queued: “fix what it found”")
	h.keys("u")
	h.wantScreen("1 remains")
	h.wantScreen("▸ queued: “fix what it found”")
	h.keys("u")
	h.wantScreen("cancelled the message queued for lint")
	h.noScreen("queued:")
	h.keys("u")
	h.wantScreen("agent lint has no queued message")
}

// TestCloseTakesTheSubtree: closing an agent with descendants asks when
// any of them runs and says how many go; the reply counts them.
func TestCloseTakesTheSubtree(t *testing.T) {
	h := newHarness(t, treeAgents(), 100, 40)
	h.keys("c")
	h.wantScreen("Close review and 4 agents below it? 2 running will be stopped.")
	h.keys("y")
	h.wantCalls("close " + idReview[:8])
	h.wantScreen("closed review and 4 agents below it")
	h.wantScreen("│  ├─ unit 3e0e0e03 ■ closed")
}

// TestForgetTakesAFinishedSubtree: forget asks for the agent and what is
// below it, and refuses while anything below runs.
func TestForgetTakesAFinishedSubtree(t *testing.T) {
	h := newHarness(t, treeAgents(), 100, 40)
	h.keys("j") // tests, finished, with unit running below it
	h.keys("x")
	h.wantScreen("forget review/tests: review/tests/unit is running below it; interrupt (i) or close (c) it first")
	h.keys(">", "k") // lint is running; fmt below it is closed
	h.keys("j")      // fmt
	h.keys("x")
	h.wantScreen("Forget lint/fmt for good?")
}

// TestGoldenTreeColour snapshots the tree with colour (ANSI 256) on a
// dark and a light background at 120x35, under a filter: the glyphs and
// the ancestors shown for a match muted, the statuses in their colours.
func TestGoldenTreeColour(t *testing.T) {
	for _, dark := range []bool{true, false} {
		t.Run(map[bool]string{true: "dark", false: "light"}[dark], func(t *testing.T) {
			f := treeAgents()
			st := theme.New(theme.Options{Profile: colorprofile.ANSI256, Dark: dark})
			m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }, Host: f})
			m.tickFn = func() tea.Cmd { return nil }
			f.t = t
			h := &harness{t: t, m: m, f: f}
			h.follow(&f.feed)
			h.send(tea.WindowSizeMsg{Width: 120, Height: 35})
			h.keys("F")
			h.typeText("running")
			h.keys("enter")
			checkFrame(t, h.view(), 120, 35)
			golden.RequireEqual(t, []byte(h.view()))
		})
	}
}

// TestSpawnTheHostRefusesReopensTheInput: a name another agent took after
// the input checked it is refused by the host; the input comes back on
// the name with the message kept and the host's reason in its prompt.
func TestSpawnTheHostRefusesReopensTheInput(t *testing.T) {
	f := treeAgents()
	f.fail["spawn"] = proto.ErrPathExists("/root/links", "a0000009, running, 2s old", false)
	h := newHarness(t, f, 120, 40)
	h.keys("n")
	h.typeText("check the links")
	h.keys("tab")
	h.typeText("links")
	h.keys("enter")
	h.wantCalls(`spawn "check the links" as "links"`)
	h.wantScreen("spawn · task name (agent path already exists: /root/links (a0000009, running, 2s old)) › links")
	h.keys("tab")
	h.wantScreen("spawn links › check the links")
	delete(f.fail, "spawn")
	h.keys("tab", "ctrl+u")
	h.typeText("links2")
	h.keys("enter")
	h.wantCalls(`spawn "check the links" as "links"`, `spawn "check the links" as "links2"`)
	h.wantScreen("spawned links2")
}
