// Package budget holds the spending limits of SPEC §11 "Budgets":
// --max-budget-usd per agent and --fleet-budget-usd for the host, the
// texts of their refusals and the claude flag that carries an agent's
// remaining budget into each of its processes.
package budget

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Reporting are the presets whose agent CLI reports the cost of a
// submission (the transcript's claude total_cost_usd); a budget needs one.
var Reporting = []string{"claude"}

// Limits are the budgets in US dollars; 0: none.
type Limits struct {
	Agent float64 // --max-budget-usd: what one agent may spend over its life
	Fleet float64 // --fleet-budget-usd: what this host may spend since it started
}

// On reports whether any budget is set.
func (l Limits) On() bool { return l.Agent > 0 || l.Fleet > 0 }

// Check refuses limits that cannot hold: negative ones, and any budget
// with preset (its name, "" for a plain command) when its CLI reports no
// cost (SPEC §11: refused at start, the error names them).
func (l Limits) Check(preset string) error {
	if l.Agent < 0 || l.Fleet < 0 {
		return fmt.Errorf("invalid --max-budget-usd %g or --fleet-budget-usd %g: must not be negative (0: no budget)", l.Agent, l.Fleet)
	}
	if !l.On() || slices.Contains(Reporting, preset) {
		return nil
	}
	flag := "--max-budget-usd"
	if l.Agent <= 0 {
		flag = "--fleet-budget-usd"
	}
	given := "a plain --command"
	if preset != "" {
		given = "--preset " + preset
	}
	return fmt.Errorf("%s needs --preset %s: only its CLI reports what a submission costs; codex, gemini, memo, the built-in agent and a plain --command report none (%s given), so subdash could not tell when the budget is reached",
		flag, strings.Join(Reporting, " or --preset "), given)
}

// USD formats dollars as the refusals say them: $10.02, $0.0963 below a
// dollar (claude's cost of one request at the stub's tokens is ~$0.096).
func USD(v float64) string {
	if v < 1 && v > -1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// FleetReached is the refusal of a spawn or send once the host spent
// spent of its fleet budget limit (SPEC §11), "" while below it.
func FleetReached(spent, limit float64) string {
	if limit <= 0 || spent < limit {
		return ""
	}
	return fmt.Sprintf("fleet budget reached: $%.2f of $%.2f spent since this host started; raise --fleet-budget-usd", spent, limit)
}

// AgentReached says why agent short (its short id) starts no new
// submission once it spent spent of limit (--max-budget-usd), "" while
// below it.
func AgentReached(short string, spent, limit float64) string {
	if limit <= 0 || spent < limit {
		return ""
	}
	return fmt.Sprintf("agent %s reached its budget: %s of %s spent; raise --max-budget-usd to give it more", short, USD(spent), USD(limit))
}

// ClaudeArgs returns claude's own flag for what is left of an agent's
// budget limit after it spent spent: " --max-budget-usd 0.4037"
// (claude counts each process from $0, so every submission gets what is
// left); "" without a budget.
func ClaudeArgs(spent, limit float64) string {
	if limit <= 0 {
		return ""
	}
	left := max(limit-spent, 0)
	return " --max-budget-usd " + strconv.FormatFloat(left, 'f', 6, 64)
}
