package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/mattn/go-runewidth"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// Golden View() snapshots, colour off, at three sizes. Refresh them with
//
//	go test ./ui -run TestGolden -update
//
// and read the diff before committing.

var goldenSizes = [][2]int{{60, 20}, {100, 30}, {160, 45}}

// goldenScene is one frame of a golden test: the fake it starts from and
// what brings the dashboard to the frame (nil: its first frame).
type goldenScene struct {
	name  string
	fake  func() *fakeSup
	setup func(h *harness)
}

// runGoldens draws each scene at each size (columns × lines), checks the
// frame is exactly that size and compares it with its golden file,
// testdata/<test>/<scene>/<w>x<h>.golden.
func runGoldens(t *testing.T, scenes []goldenScene, sizes [][2]int) {
	t.Helper()
	for _, sc := range scenes {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				h := newHarness(t, sc.fake(), sz[0], sz[1])
				if sc.setup != nil {
					sc.setup(h)
				}
				checkFrame(t, h.view(), sz[0], sz[1])
				golden.RequireEqual(t, []byte(h.view()))
			})
		}
	}
}

func TestGolden(t *testing.T) {
	runGoldens(t, []goldenScene{
		{"empty", emptyFake, nil},
		{"three_agents", threeAgents, nil},
		{"help", threeAgents, func(h *harness) { h.keys("?") }},
		{"input", threeAgents, func(h *harness) {
			h.keys("s")
			h.typeText("summarise what you changed so far")
		}},
		{"confirm", threeAgents, func(h *harness) { h.keys("c") }},
		{"paused_search", threeAgents, func(h *harness) {
			h.keys("/")
			h.typeText("step 3")
			h.keys("enter")
			h.f.print(idA, 1, "step 40 of the refactor", "step 41 of the refactor")
			h.sync(idA)
		}},
	}, goldenSizes)
}

func TestGoldenTooSmall(t *testing.T) {
	for _, sz := range [][2]int{{39, 9}, {30, 8}, {10, 3}, {3, 2}, {1, 1}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			h := newHarness(t, threeAgents(), sz[0], sz[1])
			checkFrame(t, h.view(), sz[0], sz[1])
			golden.RequireEqual(t, []byte(h.view()))
		})
	}
}

func emptyFake() *fakeSup {
	f := newFake()
	f.cfg.Notes = []string{"memo not found on PATH: using the built-in audit agent"}
	return f
}

// codepointWidth measures s as tmux, xterm and most terminals do: the sum
// of each code point's wcwidth. ansi.StringWidth measures grapheme clusters
// as kitty or WezTerm do; text the two disagree on moves borders in one of
// them.
func codepointWidth(s string) int {
	c := runewidth.NewCondition()
	c.EastAsianWidth = false
	n := 0
	for _, r := range ansi.Strip(s) {
		n += c.RuneWidth(r)
	}
	return n
}

// checkFrame asserts that view is exactly w×h cells, measured per grapheme
// cluster and per code point alike: what Bubble Tea draws must never wrap
// or scroll the terminal, whichever way it counts.
func checkFrame(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Fatalf("view has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d cells wide, want %d: %q", i, got, w, l)
		}
		if got := codepointWidth(l); got != w {
			t.Fatalf("line %d is %d cells wide counted per code point (tmux), want %d: %q", i, got, w, l)
		}
		if strings.ContainsAny(ansi.Strip(l), "\x1b\t\r") {
			t.Fatalf("line %d holds a control character: %q", i, l)
		}
	}
}

// TestColourStaysInside checks H01 with colour on: every row of the log
// pane ends reset, so the border after it keeps its own colour.
func TestColourStaysInside(t *testing.T) {
	f := newFake()
	f.add(idA, "colours", proto.StatusCompleted)
	f.print(idA, 1, "\x1b[1;31mRED-NO-RESET\x1b[m", "\x1b[1;31mline two\x1b[m", "\x1b[7mREVERSE-NO-RESET\x1b[m", "plain")
	h := newHarness(t, f, 100, 30)
	h.m = colourModel(h.m, f)
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	for _, l := range strings.Split(h.view(), "\n") {
		for _, word := range []string{"RED-NO-RESET", "line two", "REVERSE-NO-RESET"} {
			i := strings.Index(l, word)
			if i < 0 {
				continue
			}
			rest := l[i+len(word):]
			border := strings.Index(rest, "│")
			if border < 0 || !strings.Contains(rest[:border], "\x1b[m") {
				t.Fatalf("%s is not reset before the border: %q", word, l)
			}
		}
	}
}

// TestGoldenTranscripts snapshots the transcript view of a claude and a
// codex agent that ran a tool, at 100x30. The entries are what the
// supervisor's parser makes of the real CLIs' recorded output
// (testdata/agent-streams), so a change in parsing or rendering shows here.
func TestGoldenTranscripts(t *testing.T) {
	for _, c := range []struct{ preset, recording string }{
		{"claude", "claude-stream-tooluse.jsonl"},
		{"codex", "codex-exec-tooluse.jsonl"},
	} {
		t.Run(c.preset, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "testdata", "agent-streams", c.recording))
			if err != nil {
				t.Fatal(err)
			}
			p := transcript.NewParser(transcript.Format(c.preset))
			var entries []transcript.Entry
			for _, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
				entries = append(entries, p.Line([]byte(line))...)
			}
			entries = append(entries, p.End()...)
			out := p.Outcome()

			f := newFake()
			f.cfg.PresetName, f.cfg.PresetFormat = c.preset, c.preset
			f.cfg.Command = f.cfg.PresetName + " (preset)"
			a := f.add(idA, "run uname with your shell tool, then say done", proto.StatusCompleted)
			a.info.SessionID = p.SessionID()
			a.info.Usage = proto.Usage{InputTokens: out.InputTokens, OutputTokens: out.OutputTokens, CostUSD: out.CostUSD}
			a.entries[1] = entries
			for _, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
				f.print(idA, 1, line)
			}
			h := newHarness(t, f, 100, 30)
			checkFrame(t, h.view(), 100, 30)
			golden.RequireEqual(t, []byte(h.view()))
		})
	}
}
