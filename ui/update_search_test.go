package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/internal/cells"
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

// TestTranscriptSearchCountsWhatItMarks: in the transcript view of a real
// host (a claude agent that ran a tool), the matches the host counts are
// the entries the pane marks, for text seen on screen ("✓ result", the two
// spaces after the tool's name) and for text only the host held (a tool
// result repeats its call's summary, which it does not show).
func TestTranscriptSearchCountsWhatItMarks(t *testing.T) {
	s := presetSupervisor(t, "claude")
	h := realHarness(t, s)
	res, err := s.Spawn(context.Background(), "tool use please")
	if err != nil {
		t.Fatal(err)
	}
	until(t, h, s, "the agent completed", func() bool { return strings.Contains(h.screen(), "✓ result") })
	marked := regexp.MustCompile(`\x1b\[(1;4;)?7m`)
	for _, c := range []struct {
		query string
		count int
	}{
		{"uname", 1},      // the call; its result shows "Linux" only
		{"result", 1},     // ✓ result · …
		{"Bash  echo", 1}, // as the call shows it
		{"Bash echo", 0},  // as the host joined the call's tool and summary
		{"↳ linux", 1},    // the result's mark
	} {
		h.keys("esc", "/")
		h.typeText(c.query)
		h.keys("enter")
		_, count := h.m.log.Matches()
		marks := 0
		for _, l := range strings.Split(h.m.log.View(), "\n") {
			if marked.MatchString(l) {
				marks++
			}
		}
		if count != c.count || marks != c.count {
			t.Errorf("%q in the transcript of %s: %d counted, %d lines marked, want %d:\n%s", c.query, res.AgentID[:8], count, marks, c.count, h.screen())
		}
	}
}

// TestRenderEntryDrawsItsDisplay: every kind of transcript entry, an inner
// agent's too, is drawn as the lines of its Display (what a transcript
// search matches), whatever the styles.
func TestRenderEntryDrawsItsDisplay(t *testing.T) {
	entries := append(transcriptFixture(),
		transcript.Entry{Kind: transcript.KindUser, Text: "first\n\nthird"},
		transcript.Entry{Kind: transcript.KindThinking},
		transcript.Entry{Kind: transcript.KindToolResult, Tool: "Bash", Summary: "ls", IsError: true, Text: "a\n\tb", Depth: 2},
		transcript.Entry{Kind: transcript.KindError, Text: "overloaded"},
		transcript.Entry{Kind: transcript.KindApproval, Tool: "Bash", Summary: "rm -rf x", ID: "req-1", Text: "why"},
		transcript.Entry{Kind: transcript.KindApprovalAnswer, Tool: "Bash", Summary: "rm -rf x", Text: "denied", IsError: true},
		transcript.Entry{Kind: transcript.KindStderr, Text: "\x1b[31mboom\x1b[0m"},
		transcript.Entry{Kind: transcript.KindNote, Text: "a new session starts"},
		transcript.Entry{Kind: transcript.KindUnknown, Text: "system/hook_started", Depth: 1},
		transcript.Entry{Kind: transcript.KindResult, IsError: true, DurationMS: 1500},
	)
	for _, st := range []theme.Styles{theme.Plain(), theme.New(theme.Options{Profile: colorprofile.ANSI256, Dark: true})} {
		for _, e := range entries {
			lines := strings.Split(RenderEntry(e, st), "\n") // as the pane strips them to mark
			for i, l := range lines {
				lines[i] = cells.Strip(l)
			}
			if got, want := strings.Join(lines, "\n"), e.Display().Text(); got != want {
				t.Errorf("%s entry drawn as\n%q\nits display is\n%q", e.Kind, got, want)
			}
		}
	}
}

// presetSupervisor is a host running preset name against the fake CLIs of
// testdata/fakecli, which replay recordings of the real CLIs.
func presetSupervisor(t *testing.T, name string) *supervisor.Supervisor {
	t.Helper()
	fake, err := filepath.Abs("../testdata/fakecli")
	if err != nil {
		t.Fatal(err)
	}
	p, err := supervisor.LookupPreset(name, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return hostkit.Supervisor(t, "", func(c *supervisor.Config) {
		c.Preset = p
		c.Environ = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "FAKECLI_LOG="+filepath.Join(t.TempDir(), "calls.log"))
	})
}
