package supervisor

import (
	"math"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/internal/budget"
	"github.com/subdash/subdash/supervisor/proto"
)

// The fake claude replays recordings whose results report
// total_cost_usd 0.096425 (a first run) and 0.096685 (a resumed one).
const firstCost, resumeCost = 0.096425, 0.096685

// budgetSupervisor is presetSupervisor for claude with limits l.
func budgetSupervisor(t *testing.T, l budget.Limits) (*Supervisor, string) {
	t.Helper()
	s, log := presetSupervisor(t, "claude")
	s.cfg.Budget = l
	return s, log
}

func wantBudgetErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if proto.CodeOf(err) != proto.CodeBudget || err.Error() != want {
		t.Fatalf("%s: %v (code %s), want code budget and %q", what, err, proto.CodeOf(err), want)
	}
}

// --max-budget-usd: claude gets what is left as its own flag on every
// submission; once the agent spent it, no new submission starts: send,
// queue and steer are refused with the reason, which the summary carries
// (SPEC §11 "Budgets").
func TestAgentBudget(t *testing.T) {
	s, log := budgetSupervisor(t, budget.Limits{Agent: 0.15})
	id := spawn(t, s, "say hi")
	waitFinal(t, s, id)
	if sum := attnSummary(t, s, id); sum.BudgetReached != "" || math.Abs(sum.RunCostUSD-firstCost) > 1e-9 {
		t.Fatalf("after one run: budget_reached %q, run_cost_usd %v", sum.BudgetReached, sum.RunCostUSD)
	}
	if _, err := s.Send(t.Context(), id, "and again", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
	c := calls(t, log)
	if len(c) != 2 || !strings.HasSuffix(c[0], " --max-budget-usd 0.150000") || !strings.HasSuffix(c[1], " --max-budget-usd 0.053575") {
		t.Fatalf("claude's runs: %q; want the agent's remaining budget as --max-budget-usd on each", c)
	}
	want := "agent " + id[:8] + " reached its budget: $0.1931 of $0.1500 spent; raise --max-budget-usd to give it more"
	if sum := attnSummary(t, s, id); sum.BudgetReached != want {
		t.Fatalf("budget_reached = %q, want %q", sum.BudgetReached, want)
	}
	_, err := s.Send(t.Context(), id, "a third time", false)
	wantBudgetErr(t, "send past the budget", err, want)
	_, err = s.Queue(t.Context(), id, "queued")
	wantBudgetErr(t, "queue past the budget", err, want)
	_, err = s.Steer(t.Context(), id, "steered")
	wantBudgetErr(t, "steer past the budget", err, want)
	if n := len(calls(t, log)); n != 2 {
		t.Fatalf("%d claude runs, want 2: nothing starts past the budget", n)
	}
	// Another agent has its own budget.
	other := spawn(t, s, "say hi")
	if d := waitFinal(t, s, other); d.Status != proto.StatusCompleted {
		t.Fatalf("a second agent under its own budget: %+v", d)
	}
}

// --fleet-budget-usd: once the host's agents spent it, spawns and sends
// are refused with the text of SPEC §11; the spend is in Spend (ctl info).
func TestFleetBudget(t *testing.T) {
	s, log := budgetSupervisor(t, budget.Limits{Fleet: 0.1})
	a := spawn(t, s, "say hi")
	waitFinal(t, s, a)
	b := spawn(t, s, "say hi") // $0.0964 of $0.10: not reached yet
	waitFinal(t, s, b)
	sp := s.Spend()
	if math.Abs(sp.FleetSpentUSD-2*firstCost) > 1e-9 || sp.FleetBudgetUSD != 0.1 {
		t.Fatalf("Spend = %+v, want %v spent of 0.1", sp, 2*firstCost)
	}
	const want = "fleet budget reached: $0.19 of $0.10 spent since this host started; raise --fleet-budget-usd"
	_, err := s.Spawn(t.Context(), "one more")
	wantBudgetErr(t, "spawn past the fleet budget", err, want)
	_, err = s.Send(t.Context(), a, "again", false)
	wantBudgetErr(t, "send past the fleet budget", err, want)
	_, err = s.Queue(t.Context(), b, "queued")
	wantBudgetErr(t, "queue past the fleet budget", err, want)
	if n, agents := len(calls(t, log)), len(listOf(s)); n != 2 || agents != 2 {
		t.Fatalf("%d claude runs and %d agents, want 2 and 2: nothing started past the budget", n, agents)
	}
}

// A budget needs a preset that reports cost; negative ones are refused.
func TestBudgetRefusedWithoutCost(t *testing.T) {
	env := Environment{Getenv: func(k string) string {
		if k == "HOME" {
			return t.TempDir()
		}
		return ""
	}}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Preset: "codex", MaxBudgetUSD: 1}, "--max-budget-usd needs --preset claude: only its CLI reports what a submission costs; codex, gemini, memo, the built-in agent and a plain --command report none (--preset codex given)"},
		{Options{Command: "true", FleetBudgetUSD: 1}, "--fleet-budget-usd needs --preset claude: only its CLI reports what a submission costs; codex, gemini, memo, the built-in agent and a plain --command report none (a plain --command given)"},
		{Options{Preset: "claude", MaxBudgetUSD: -1}, "invalid --max-budget-usd -1 or --fleet-budget-usd 0: must not be negative"},
	} {
		c.o.Dir = t.TempDir()
		_, err := Resolve(c.o, env)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Resolve(%+v) = %v, want %q…", c.o, err, c.want)
		}
	}
	if _, err := Resolve(Options{Preset: "claude", MaxBudgetUSD: 1, FleetBudgetUSD: 10, Dir: t.TempDir()}, env); err != nil {
		t.Fatalf("budgets with --preset claude: %v", err)
	}
}
