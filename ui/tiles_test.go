package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// The tiles (SPEC §7 "Tiles", v): the running agents' output side by
// side.

// tilesAgents is the watch scene on a host that sends several windows at
// once, each running agent at work in its transcript.
func tilesAgents() *fakeSup {
	f := watchAgents()
	f.cfg.Features = append(f.cfg.Features, proto.FeatureFollowMany)
	for _, id := range []string{idSup, idE2EW, idDeps, idCLI} {
		a := f.find(id)
		for i := range 30 {
			a.entries[1] = append(a.entries[1],
				transcript.Entry{Kind: transcript.KindToolCall, Tool: "Read", Summary: fmt.Sprintf("%s/file%02d.go", a.info.TaskName, i)},
				transcript.Entry{Kind: transcript.KindText, Text: fmt.Sprintf("%s: file%02d.go looks right.", a.info.TaskName, i)})
		}
	}
	return f
}

// tileTitles are the titles of the tiles on screen, one per tile (the
// top borders, which start with a corner).
func tileTitles(h *harness) []string {
	var titles []string
	for _, l := range strings.Split(h.screen(), "\n") {
		for _, part := range strings.FieldsFunc(l, func(r rune) bool { return r == '╭' || r == '┏' })[0:] {
			if strings.HasPrefix(part, "─ ") || strings.HasPrefix(part, "━ ") {
				titles = append(titles, strings.TrimSpace(part))
			}
		}
	}
	return titles
}

// TestTilesFitTheSizes: v tiles the five running agents, as many as fit:
// two at 80x24 (the page says which), all five at 120x40, 160x45 and
// 200x60; each tile is titled with its name, status and now-text and
// shows its transcript's last lines; the selected one is marked.
func TestTilesFitTheSizes(t *testing.T) {
	for _, c := range []struct {
		w, h, tiles int
	}{{80, 24, 2}, {120, 40, 5}, {160, 45, 5}, {200, 60, 5}} {
		t.Run(fmt.Sprintf("%dx%d", c.w, c.h), func(t *testing.T) {
			h := newHarness(t, tilesAgents(), c.w, c.h)
			h.keys("v")
			titles := tileTitles(h)
			if len(titles) != c.tiles {
				t.Fatalf("%d tiles, want %d:\n%s", len(titles), c.tiles, h.screen())
			}
			checkFrame(t, h.view(), c.w, c.h)
			h.wantScreen("▶ audit ui ●")                      // the selection, marked
			h.wantScreen("audit supervisor ● running")        // name and status
			h.wantScreen("following · → Bash go te")          // and what it does now
			h.wantScreen("supervisor: file29.go looks right") // its last lines
			if c.tiles == 2 {
				h.wantScreen("tiles 1–2 of 5 running")
				h.noScreen("audit e2e")
			} else {
				h.wantScreen("tiles: 5 running")
				h.wantScreen("cli: file29.go looks right")
			}
			h.noScreen("audit docs") // not running: no tile
		})
	}
}

// TestTilesKeys: j/k and the arrows move the selection over the tiles
// (a page at a time at 80x24), enter opens the selected agent in the
// usual view, v and esc go back too; the agent keys act on the selected
// tile.
func TestTilesKeys(t *testing.T) {
	h := newHarness(t, tilesAgents(), 80, 24)
	h.keys("v")
	h.keys("j")
	h.wantScreen("▶ audit ui/audit supervisor ●")
	h.keys("j")
	h.wantScreen("▶ audit e2e ●") // the next page
	h.wantScreen("tiles 3–4 of 5 running")
	h.keys("k", "right")
	h.wantScreen("▶ audit e2e ●")
	h.keys("enter")
	if got := h.m.table.SelectedID(); got != idE2EW {
		t.Fatalf("enter opened %s, want audit e2e", got)
	}
	h.noScreen("▶ ")
	if !strings.Contains(h.logTitle(), "audit e2e") {
		t.Fatalf("the log pane shows %q after enter, want audit e2e", h.logTitle())
	}
	h.keys("v")
	h.wantScreen("▶ audit e2e ●")
	h.keys("esc")
	h.noScreen("▶ ")
	h.keys("v", "v")
	h.noScreen("▶ ")
	h.keys("v", "m")
	h.wantScreen("not on the tiles: enter opens the selected agent")
}

// TestTilesFilterAndFolds: the filter and the tree's folds choose which
// agents tile.
func TestTilesFilterAndFolds(t *testing.T) {
	h := newHarness(t, tilesAgents(), 160, 45)
	h.keys("z") // fold audit ui: its child, audit supervisor, goes
	h.keys("v")
	if n := len(tileTitles(h)); n != 4 {
		t.Fatalf("%d tiles with audit ui folded, want 4:\n%s", n, h.screen())
	}
	h.noScreen("audit supervisor")
	h.keys("F")
	h.typeText("cli")
	h.keys("enter")
	if n := len(tileTitles(h)); n != 1 {
		t.Fatalf("%d tiles filtered to cli, want 1:\n%s", n, h.screen())
	}
	h.wantScreen("▶ audit cli ●")
	h.keys("F", "ctrl+u")
	h.typeText("docs")
	h.keys("enter")
	h.wantScreen("no running agent the filter shows")
}

// TestTilesFetchOnScreenOnly: a tile costs what the log pane costs: the
// agents off screen are never read; the log pane, hidden, reads nothing.
func TestTilesFetchOnScreenOnly(t *testing.T) {
	f := tilesAgents()
	h := newHarness(t, f, 80, 24)
	h.keys("v")
	for _, id := range []string{idE2EW, idDeps, idCLI} {
		if n := f.readCalls(id); n != 0 {
			t.Fatalf("agent %s off screen was read %d times", id[:8], n)
		}
	}
	if f.readCalls(idSup) == 0 {
		t.Fatal("the tile of audit supervisor read nothing")
	}
	ui := f.readCalls(idUI)
	a := f.find(idCLI)
	a.entries[1] = append(a.entries[1], transcript.Entry{Kind: transcript.KindText, Text: "more"})
	h.sync(idCLI) // output of an agent off screen
	if n := f.readCalls(idCLI); n != 0 {
		t.Fatalf("output of an agent off screen read it %d times", n)
	}
	if n := f.readCalls(idUI); n != ui {
		t.Fatalf("output elsewhere read audit ui %d more times", n-ui)
	}
}

// TestTilesOlderHost: on a host without follow-many, v says that tiles
// need a newer host, and the usual view stays.
func TestTilesOlderHost(t *testing.T) {
	h := newHarness(t, watchAgents(), 120, 40)
	h.keys("v")
	h.wantScreen("tiles need a newer host")
	h.noScreen("▶ ")
	if h.m.tiles.on {
		t.Fatal("the tiles are on")
	}
}

// TestTilesMouse: a click selects a tile; the wheel over a tile scrolls
// it: it follows no more and its title says so, the others still follow.
func TestTilesMouse(t *testing.T) {
	h := newHarness(t, tilesAgents(), 120, 40)
	h.keys("v")
	x, y := cellOf(t, h, "audit cli ●")
	h.click(x, y+3)
	h.wantScreen("▶ audit cli ●")
	if got := h.m.table.SelectedID(); got != idCLI {
		t.Fatalf("the click selected %s", got)
	}
	x, y = cellOf(t, h, "audit e2e ●")
	h.wheel(x, y+4, true)
	h.wantScreen("audit e2e ● running · paused")
	h.wantScreen("▶ audit cli ● running · following")
	for range 20 {
		h.wheel(x, y+4, false)
	}
	h.wantScreen("audit e2e ● running · following")
}

func TestGoldenTiles(t *testing.T) {
	runThemedGoldens(t, []goldenScene{
		{"tiles", tilesAgents, func(h *harness) { h.keys("v") }},
	}, watchSizes)
}
