package budget

import "testing"

// The texts the user reads and the flag claude gets (SPEC §11 "Budgets").
func TestTexts(t *testing.T) {
	if got, want := FleetReached(10.0234, 10), "fleet budget reached: $10.02 of $10.00 spent since this host started; raise --fleet-budget-usd"; got != want {
		t.Errorf("FleetReached = %q, want %q", got, want)
	}
	if got := FleetReached(9.99, 10); got != "" {
		t.Errorf("below the fleet budget: %q", got)
	}
	if got := FleetReached(100, 0); got != "" {
		t.Errorf("without a fleet budget: %q", got)
	}
	if got, want := AgentReached("3fa2c1d0", 0.52134, 0.5), "agent 3fa2c1d0 reached its budget: $0.5213 of $0.5000 spent; raise --max-budget-usd to give it more"; got != want {
		t.Errorf("AgentReached = %q, want %q", got, want)
	}
	if got, want := AgentReached("3fa2c1d0", 12.5, 10), "agent 3fa2c1d0 reached its budget: $12.50 of $10.00 spent; raise --max-budget-usd to give it more"; got != want {
		t.Errorf("AgentReached over a dollar = %q, want %q", got, want)
	}
	for _, c := range []struct {
		spent, limit float64
		want         string
	}{
		{0, 0.5, " --max-budget-usd 0.500000"},
		{0.096425, 0.15, " --max-budget-usd 0.053575"},
		{0.2, 0.15, " --max-budget-usd 0.000000"}, // never negative (no submission starts then anyway)
		{1, 0, ""},
	} {
		if got := ClaudeArgs(c.spent, c.limit); got != c.want {
			t.Errorf("ClaudeArgs(%v, %v) = %q, want %q", c.spent, c.limit, got, c.want)
		}
	}
	if err := (Limits{Agent: 1}).Check("claude"); err != nil {
		t.Errorf("claude: %v", err)
	}
	if err := (Limits{}).Check("codex"); err != nil {
		t.Errorf("no budget with codex: %v", err)
	}
}
