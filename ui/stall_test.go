package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// A stalled agent (Summary.StalledSince) leads its message cell with the
// mark, symbol and word and for how long, and the status line counts it;
// the mark goes with the field (SPEC §11 "Stalled").
func TestStalledMarkAndCount(t *testing.T) {
	f := threeAgents()
	f.add(idDocs, "update the docs", proto.StatusRunning)
	h := newHarness(t, f, 160, 30)
	h.noScreen("stalled")

	a := f.find(idDocs)
	f.mu.Lock()
	a.info.StalledSince = &proto.Time{Time: t0.Add(-65 * time.Second)}
	a.info.NeedsYou = &proto.Attention{Reason: proto.ReasonStalled, Seq: 1, Since: proto.Time{Time: t0}}
	f.mu.Unlock()
	h.sync(idDocs)
	if r := h.row(idDocs); !strings.HasPrefix(r, "│◆ ") || !strings.Contains(r, "⊘ stalled 1m05s · update the docs") {
		t.Fatalf("row of the stalled agent: %q", r)
	}
	h.wantScreen("⊘ 1 stalled")

	f.mu.Lock()
	a.info.StalledSince, a.info.NeedsYou = nil, nil
	f.mu.Unlock()
	h.sync(idDocs)
	h.noScreen("stalled")
}

// A parent row shows its subtree's tokens and cost, marked Σ; a leaf its
// own; the status line the host's total.
func TestCostRollUp(t *testing.T) {
	f := treeAgents()
	set := func(id string, in int64, cost float64) {
		f.find(id).info.Usage = proto.Usage{InputTokens: in, CostUSD: cost}
	}
	set(idReview, 1000, 0.01)
	set(idTests, 2000, 0.02)
	set(idUnit, 4000, 0.04)
	set(idE2E, 8000, 0.08)
	set(idLoose, 500, 0.5)
	h := newHarness(t, f, 160, 45)
	row := func(name string) string { // the tree names its rows
		for _, l := range strings.Split(h.screen(), "\n") {
			if strings.Contains(l, " "+name+" ") && !strings.Contains(l, "╭") {
				return l
			}
		}
		return ""
	}
	for _, c := range []struct{ name, want string }{
		{"review", "Σ $0.1500"}, // review + tests + unit + e2e
		{"tests", "Σ $0.1400"},  // tests + unit + e2e
		{"unit", " $0.0400"},    // a leaf: its own, unmarked
		{idLoose[:8], " $0.5000"},
	} {
		r := row(c.name)
		if !strings.Contains(r, c.want) {
			t.Errorf("row of %s: %q, want %q", c.name, r, c.want)
		}
		if c.name == "unit" && strings.Contains(r, "Σ") {
			t.Errorf("a leaf's usage is marked as a sum: %q", r)
		}
	}
	h.wantScreen("Σ 15.5k tok $0.6500  │") // the status line: every agent
}

// An agent that spent its --max-budget-usd says so leading its message;
// with --fleet-budget-usd the status line says the spend against it.
func TestBudgetMarkAndFleetLine(t *testing.T) {
	f := threeAgents()
	f.cfg.FleetBudgetUSD = 0.5
	c := f.find(idC)
	c.info.BudgetReached = "agent c0ffee42 reached its budget: $0.5200 of $0.5000 spent; raise --max-budget-usd to give it more"
	c.info.RunCostUSD = 0.52
	c.info.Usage = proto.Usage{CostUSD: 0.52}
	h := newHarness(t, f, 160, 30)
	if r := h.row(idC); !strings.Contains(r, "$0.5200 $ budget reached · ") {
		t.Fatalf("row of the agent past its budget: %q", r)
	}
	h.wantScreen("$0.52 of $0.50 fleet budget")
}
