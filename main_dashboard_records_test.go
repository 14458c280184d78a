package main

import (
	"strings"
	"testing"
)

// restart starts the dashboard again in the same pane, workspace and
// arguments, after it exited.
func (d *dash) restart() {
	d.t.Helper()
	if out, err := d.tm("respawn-pane", "-k", "-t", "dash", d.line); err != nil {
		d.t.Fatalf("tmux respawn-pane: %v %s", err, out)
	}
}

// TestDashboardRestoresAfterQuit (SPEC §10): after a clean quit, the next
// dashboard in the same folder shows the agents with their ages, the
// status line says how many were restored, each submission's log is
// there; x forgets one (after a question), for good.
func TestDashboardRestoresAfterQuit(t *testing.T) {
	cmd := `read m; case "$m" in fail*) echo oops >&2; exit 3;; esac; echo "got: $m"`
	d := startDash(t, 120, 30, nil, "--command", cmd)
	d.waitText("no agents yet")
	var ids []string
	for _, m := range []string{"hello", "fail now"} {
		d.keys("n")
		d.typeText(m)
		d.keys("Enter")
		ids = append(ids, d.agentID(m))
	}
	hello, failed := ids[0], ids[1]
	// The journal names an agent before the dashboard has its spawn's
	// answer, which moves the selection to it: wait for that, or k could
	// come first and s go to the wrong agent.
	d.waitText(failed[:8] + " · #1/1")
	d.keys("k") // the first one, as a new agent takes the selection
	d.waitText(hello[:8] + " · #1/1")
	d.waitRow(hello, "✓ completed")
	d.waitRow(failed, "✗ errored (exit 3)")
	d.keys("s")
	d.typeText("again")
	d.keys("Enter")
	d.waitText(hello[:8]+" · #2/2", "got: again")
	d.waitRow(hello, "✓ completed")
	d.keys("q")
	if code := d.waitExit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}

	d.restart()
	s := d.waitText("↺ 2 restored")
	for _, id := range []string{hello, failed} {
		if row := tableRow(s, id); !strings.Contains(row, "↺ ") {
			t.Errorf("restored row shows no age: %q", row)
		}
	}
	if row := tableRow(s, failed); !strings.Contains(row, "✗ errored (exit 3)") {
		t.Errorf("errored row: %q", row)
	}
	if row := tableRow(s, hello); !strings.Contains(row, "✓ completed") || !strings.Contains(row, " 2 ") {
		t.Errorf("completed row with two submissions: %q", row)
	}
	d.waitText(hello[:8]+" · #2/2", "got: again") // read back from the log file
	d.keys("[")
	d.waitText(hello[:8]+" · #1/2", "got: hello")
	d.keys("j")
	d.waitText(failed[:8]+" · #1/1", "oops")

	// forget the errored one
	d.keys("x")
	d.waitText("Forget " + failed[:8] + " for good?")
	d.keys("y")
	d.waitFor("the forgotten row to go", func(s string) bool { return tableRow(s, failed) == "" })
	d.waitText("↺ 1 restored")
	d.keys("q")
	d.waitExit()
	d.restart()
	s = d.waitText("↺ 1 restored")
	if tableRow(s, failed) != "" || tableRow(s, hello) == "" {
		t.Fatalf("after forget and restart:\n%s", s)
	}
	d.keys("q")
	d.waitExit()
}
