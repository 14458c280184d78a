package e2e

import (
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// TestInnerAgentsOnScreen (SPEC §7, §8): the claude preset's inner agents
// (the stand-in claude replays a recorded nested Agent call) are rows
// under their agent in a viewer, the deep one under the outer one, marked
// inner; keys that act on an agent say why not on them; the transcript
// indents the inner agent's frames under the Agent call, the deep one's
// two levels in.
func TestInnerAgentsOnScreen(t *testing.T) {
	w := newWorkspace(t)
	env, _ := fakeCLIs(t, w.base)
	serveWith(t, w, env, "--preset", "claude")
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "inner please", "--task-name", "review")
	waitAgent(t, w, sp.AgentID, "completed", func(a proto.Summary) bool { return a.Status == proto.StatusCompleted })

	d := startViewer(t, w, "--dir", w.dir, "--socket", w.socket)
	d.resize(100, 40) // stacked: the table's whole width
	s := d.waitText("└─ ◇ outer inner", "   └─ ◇ deep inner")
	if o, deep := strings.Index(s, "◇ outer inner"), strings.Index(s, "◇ deep inner"); o > deep {
		t.Fatalf("the deep inner agent is above the outer one:\n%s", s)
	}
	if row := d.waitText("◇ outer inner"); !strings.Contains(lineOf(row, "◇ outer inner"), "✓ completed") || !strings.Contains(lineOf(row, "◇ outer inner"), "inner · ") {
		t.Fatalf("the outer inner agent's row: %q", lineOf(row, "◇ outer inner"))
	}
	d.waitText("│ › CALL_TOOL: Agent") // the outer inner agent's prompt, under the Agent call
	// the deep one's task_started, which claude writes before its Agent
	// call, at its depth: two levels in
	d.waitText("│ │ · inner agent “deep inner” started")
	d.keys("j")
	d.keys("c")
	d.waitText("outer inner is an inner agent of review and has ended (completed): select review to act on it")
	if strings.Contains(d.screen(), "Close review?") {
		t.Fatal("c on an inner row asked to close its agent")
	}
}

// lineOf returns the line of s holding text.
func lineOf(s, text string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	return ""
}
