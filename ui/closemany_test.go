package ui

import (
	"context"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// CloseMany closes the listed agents as Close does, recorded as one call.
func (f *fakeSup) CloseMany(ctx context.Context, req proto.CloseManyRequest) (proto.CloseManyResult, error) {
	f.noIO("CloseMany")
	f.mu.Lock()
	defer f.mu.Unlock()
	short := make([]string, len(req.AgentIDs))
	res := proto.CloseManyResult{Closed: []string{}}
	for i, id := range req.AgentIDs {
		short[i] = id[:8]
		a := f.find(id)
		a.info.Status = proto.StatusClosed
		f.end(a, "interrupted")
		f.changed(id)
		res.Closed = append(res.Closed, id)
	}
	f.record("close-many %s", strings.Join(short, " "))
	return res, nil
}

// closeManyAgents is threeAgents with a second running agent, on a host
// that closes many at once.
func closeManyAgents() *fakeSup {
	f := threeAgents()
	f.add(idD, "tidy the docs", proto.StatusRunning)
	f.cfg.Features = []string{proto.FeatureCloseMany}
	return f
}

// TestCloseShownAsksOnceAndClosesTheFilteredSet: C with a filter asks
// once, naming how many it closes and stops, then closes exactly the
// agents the filter shows in one call; the others stay open.
func TestCloseShownAsksOnceAndClosesTheFilteredSet(t *testing.T) {
	h := newHarness(t, closeManyAgents(), 120, 30)
	h.keys("F")
	h.typeText("running")
	h.keys("enter")
	h.wantScreen("2 of 4 agents match")
	h.keys("C")
	h.wantScreen("? Close every agent the filter “running” shows: 2 agents, with their descendants? 2 agents running will be stopped.")
	h.keys("n")
	h.noScreen("? Close")
	h.wantCalls()
	h.keys("C", "y")
	h.wantCalls("close-many 3fa2c1d0 d15ea5ed")
	h.wantScreen("closed 2 agents")
	h.keys("F", "ctrl+u", "enter")
	h.wantScreen("filter cleared")
	for id, want := range map[string]string{idA: "closed", idD: "closed", idB: "completed", idC: "errored"} {
		if row := h.row(id); !strings.Contains(row, want) {
			t.Errorf("row of %s = %q, want %q", id[:8], row, want)
		}
	}
	h.keys("C")
	h.wantScreen("? Close every agent: 2 agents, with their descendants?")
	h.noScreen("will be stopped")
}

// TestCloseShownSaysWhenNothingIsOpen: every agent shown closed: nothing
// to ask.
func TestCloseShownSaysWhenNothingIsOpen(t *testing.T) {
	f := newFake()
	f.cfg.Features = []string{proto.FeatureCloseMany}
	f.add(idD, "tidy the docs", proto.StatusCompleted).info.Status = proto.StatusClosed
	h := newHarness(t, f, 120, 30)
	h.keys("C")
	h.wantScreen("every agent shown is closed already")
	h.wantCalls()
}

// TestCloseShownRefused: C asks nothing and calls nothing on a host
// without close-many (the message line says what to do instead) and in a
// read-only viewer (refused as c is).
func TestCloseShownRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*fakeSup)
		says string
	}{
		{"an older host", func(f *fakeSup) { f.cfg.Features = nil }, "this host closes agents one at a time"},
		{"read-only", func(f *fakeSup) { f.cfg.ReadOnly = true }, "read-only viewer: close refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := closeManyAgents()
			c.edit(f)
			h := newHarness(t, f, 140, 30)
			h.keys("C")
			h.wantScreen(c.says)
			h.noScreen("? Close")
			h.wantCalls()
		})
	}
}

// TestCloseShownSkipsMutedAncestors: with the tree, a filter shows the
// ancestors of its matches muted; C closes the matches only.
func TestCloseShownSkipsMutedAncestors(t *testing.T) {
	f := treeAgents()
	f.cfg.Features = append(f.cfg.Features, proto.FeatureCloseMany)
	h := newHarness(t, f, 160, 40)
	h.keys("F")
	h.typeText("errored")
	h.keys("enter")
	h.keys("C")
	h.wantScreen("Close every agent the filter “errored” shows: 1 agent")
	h.keys("y")
	h.wantCalls("close-many " + idE2E[:8])
}
