package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// sleeperAgent prints one line, waits silently for a line on the FIFO
// named by its message, prints it, then sleeps 600 s: no output, no CPU
// time, twice.
const sleeperAgent = `read m; echo started; read l < "$m"; echo "woke $l"; exec sleep 600`

// TestStalledAgent (SPEC §11 "Stalled"): with --stall-after 3s a silent
// agent is marked stalled in the dashboard (the row's mark, the status
// line's count), in ctl list (stalled_since, needs_you reason stalled)
// and for the notify command (SUBDASH_STATUS=stalled); its output clears
// the mark; silent again, it is stalled again.
func TestStalledAgent(t *testing.T) {
	base := t.TempDir()
	fifo := filepath.Join(base, "wake")
	wake := testkit.FIFO(t, fifo)
	notified := filepath.Join(base, "notified")
	d := startDash(t, 160, 30, nil, "--command", sleeperAgent, "--stall-after", "3s",
		"--notify-command", `echo "$SUBDASH_STATUS" >> `+shellQuote(notified), "--spawn", fifo)
	id := d.agentID(fifo)
	w := workspace{dir: d.dir, state: d.state, socket: d.socket}
	d.waitRow(id, "⊘ stalled")
	d.waitText("⊘ 1 stalled")
	waitAgent(t, w, id, "stalled in list", func(a proto.Summary) bool {
		return a.StalledSince != nil && a.Status == proto.StatusRunning
	})
	waitCount(t, "notify command runs with SUBDASH_STATUS=stalled", 1, func() int {
		b, _ := os.ReadFile(notified)
		return strings.Count(string(b), "stalled\n")
	})

	wake("up")
	d.waitFor("the output cleared the mark", func(s string) bool {
		return strings.Contains(s, "woke up") && !strings.Contains(s, "stalled")
	})
	waitAgent(t, w, id, "not stalled in list", func(a proto.Summary) bool { return a.StalledSince == nil })
	d.waitRow(id, "⊘ stalled") // sleep 600: silent again
}

// TestBudgetsThroughTheBinary (SPEC §11 "Budgets") with the fake claude
// (each run reports $0.096 as the real one does at the stub's tokens):
// claude is given the agent's remaining --max-budget-usd; past the fleet
// budget ctl spawn and send fail with the spec's text and nothing starts;
// ctl info shows the spend; a preset without cost is refused at start.
func TestBudgetsThroughTheBinary(t *testing.T) {
	w := newWorkspace(t)
	env, calls := fakeCLIs(t, w.base)
	serveWith(t, w, env, "--preset", "claude", "--max-budget-usd", "1", "--fleet-budget-usd", "0.1")
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "say hi")
	waitDone(t, w, sp.AgentID)
	ctlOK(t, w, &sp, "spawn", "say hi") // $0.0964 of $0.10
	waitDone(t, w, sp.AgentID)
	const want = "fleet budget reached: $0.19 of $0.10 spent since this host started; raise --fleet-budget-usd"
	ctlFails(t, w, "spawn_agent failed: "+want, "spawn", "one more")
	ctlFails(t, w, "send_input failed: "+want, "send", sp.AgentID, "again")
	var info proto.Info
	ctlOK(t, w, &info, "info")
	if info.Spend == nil || info.Spend.FleetSpentUSD < 0.19 || info.Spend.FleetBudgetUSD != 0.1 || info.Spend.MaxBudgetUSD != 1 {
		t.Fatalf("ctl info spend: %+v", info.Spend)
	}
	b, _ := os.ReadFile(calls)
	if runs := strings.Count(string(b), "claude\t"); runs != 2 || !strings.Contains(string(b), "--max-budget-usd 1.000000") {
		t.Fatalf("%d claude runs, want 2 each given the agent's budget; log:\n%s", runs, b)
	}
	if len(listAgents(t, w)) != 2 {
		t.Fatal("an agent was spawned past the fleet budget")
	}

	w2 := newWorkspace(t)
	p := start(t, env, append([]string{"serve", "--preset", "codex", "--max-budget-usd", "1"}, w2.flags()...)...)
	code, stderr := p.wait(t)
	if code != 2 || !strings.Contains(stderr, "--max-budget-usd needs --preset claude") || !strings.Contains(stderr, "--preset codex given") {
		t.Fatalf("serve --preset codex --max-budget-usd: exit %d, %q", code, stderr)
	}
}
