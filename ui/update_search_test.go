package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// hundredLines is a harness showing a running agent that printed "line 0"
// to "line 99", and its fake.
func hundredLines(t *testing.T) (*harness, *fakeSup) {
	f := newFake()
	f.add(idA, "count", proto.StatusRunning)
	for i := 0; i < 100; i++ {
		f.print(idA, 1, fmt.Sprintf("line %d", i))
	}
	h := newHarness(t, f, 100, 30)
	return h, f
}

func TestSearch(t *testing.T) {
	h, f := hundredLines(t)
	h.keys("/")
	h.wantScreen("search › ")
	h.typeText("LINE 5") // has upper case: exact case, no match
	h.keys("enter")
	h.wantScreen("no match for “LINE 5”")
	h.keys("/") // opens empty (as in less), naming the last search
	h.wantScreen("enter: “LINE 5” again")
	h.typeText("line 5")
	h.keys("enter")
	h.wantScreen("/line 5 11/11") // the nearest match above the bottom: line 59
	h.noScreen("no match for")    // the earlier search's warning is gone
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

// TestSearchMarksMatchesWithoutColour: NO_COLOR forbids colour, not
// attributes. With the Ascii profile matches are in reverse video, the
// current one also bold and underlined, and no colour is drawn.
func TestSearchMarksMatchesWithoutColour(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("g", "/")
	h.typeText("step 3")
	h.keys("enter")
	h.wantScreen("/step 3 1/11")
	h.wantScreen("│\x1b[1;4;7mstep 3\x1b[m of the refactor")
	h.keys("ctrl+n")
	h.wantScreen("│\x1b[1;4;7mstep 3\x1b[m0 of the refactor")
	h.wantScreen("│\x1b[7mstep 3\x1b[m1 of the refactor")
	for _, seq := range regexp.MustCompile(`\x1b\[([0-9;]*)m`).FindAllStringSubmatch(h.view(), -1) {
		if p := seq[1]; p != "" && p != "7" && p != "1;4;7" {
			t.Fatalf("SGR %q drawn with NO_COLOR", seq[0])
		}
	}
	checkFrame(t, h.view(), 100, 30)
}

// TestSearchStartsAtTheTopOfTheView: like less, a new search lands on the
// first match at or below the top line of the view; when following (the
// view is past the last match) on the last match above it.
func TestSearchStartsAtTheTopOfTheView(t *testing.T) {
	f := newFake()
	f.add(idB, "read", proto.StatusCompleted)
	for i := 0; i < 200; i++ {
		line := fmt.Sprintf("line %d", i)
		switch i {
		case 3, 8, 12, 50, 120, 180:
			line += " edits task.go"
		}
		f.print(idB, 1, line)
	}
	h := newHarness(t, f, 100, 30) // log pane: 15 rows
	search := func() {
		h.keys("esc", "/")
		h.typeText("task.go")
		h.keys("enter")
	}
	h.keys("g")
	search()
	h.wantScreen("/task.go 1/6")
	h.wantScreen("│line 3 edits \x1b[1;4;7mtask.go")
	h.keys("ctrl+n")
	h.wantScreen("/task.go 2/6")
	h.wantScreen("│line 8 edits \x1b[1;4;7mtask.go")
	h.keys("ctrl+n", "ctrl+p", "ctrl+p")
	h.wantScreen("/task.go 1/6")

	h.keys("g", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown") // top: line 98
	h.wantScreen("│line 98 ")
	search()
	h.wantScreen("/task.go 5/6")
	h.wantScreen("│line 120 edits \x1b[1;4;7mtask.go")

	h.keys("G") // following: past every match
	search()
	h.wantScreen("/task.go 6/6")
	h.wantScreen("│line 180 edits \x1b[1;4;7mtask.go")
}

// TestSearchEnterAloneRepeats: / opens empty, naming the last search;
// enter alone goes to the next match while the search is active (as n in
// less), and after esc runs it again from the top of the view.
func TestSearchEnterAloneRepeats(t *testing.T) {
	h, _ := hundredLines(t)
	h.keys("/")
	h.typeText("line 5")
	h.keys("enter")
	h.wantScreen("/line 5 11/11")
	h.keys("ctrl+n") // wraps to the first
	h.wantScreen("/line 5 1/11")
	h.keys("/", "enter")
	h.wantScreen("/line 5 2/11")
	h.keys("esc", "g") // the search is cleared; the view goes to the top
	h.noScreen("/line 5")
	h.keys("/")
	h.wantScreen("enter: “line 5” again")
	h.keys("enter")
	h.wantScreen("/line 5 1/11")
}

// TestSearchSaysWhenTheMatchIsPastTheRightEdge: without wrap, a match
// beyond the cut of its long line has no highlight on screen; the footer
// says so and how to see it, until wrap shows it.
func TestSearchSaysWhenTheMatchIsPastTheRightEdge(t *testing.T) {
	f := newFake()
	f.add(idA, "count", proto.StatusRunning)
	f.print(idA, 1, "short STUB line")
	f.print(idA, 1, strings.Repeat("x", 300)+" STUB at the end")
	h := newHarness(t, f, 100, 30) // wrap is off
	h.keys("/")
	h.typeText("STUB")
	h.keys("enter")
	h.wantScreen("/STUB 1/2") // the first match is on screen
	h.noScreen("past the right edge")
	h.keys("ctrl+n")
	h.wantScreen("/STUB 2/2")
	h.wantScreen("the match is past the right edge: w wraps")
	h.keys("w")
	h.wantScreen(" at the end") // wrapped onto the next row
	h.noScreen("past the right edge")
}
