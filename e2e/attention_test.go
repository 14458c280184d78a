package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit"
)

// The end-to-end tests of SPEC §11 with the real binary in tmux: what the
// dashboard writes to its terminal is captured with tmux's pipe-pane.

// gatedAgent is an agent command that waits for the file named by its
// message ("hold NAME") in the working directory, then ends.
const gatedAgent = `read m; set -- $m; while [ ! -e "$2" ]; do sleep 0.05; done; echo "done $m"`

func (d *dash) openGate(name string) {
	d.t.Helper()
	if err := os.WriteFile(filepath.Join(d.dir, name), nil, 0o600); err != nil {
		d.t.Fatal(err)
	}
}

// notifications counts the BELs and the tmux-wrapped OSC 9 / OSC 777
// desktop notifications in out, and fails on an OSC sent unwrapped.
func notifications(t *testing.T, out string) (bells, oscs int) {
	t.Helper()
	wrapped := strings.Count(out, "\x1bPtmux;\x1b\x1b]9;subdash: ") + strings.Count(out, "\x1bPtmux;\x1b\x1b]777;notify;subdash;")
	all := strings.Count(out, "]9;subdash: ") + strings.Count(out, "]777;notify;subdash;")
	if all != wrapped {
		t.Fatalf("%d desktop notifications, %d of them wrapped for tmux: %q", all, wrapped, out)
	}
	return strings.Count(out, "\a"), wrapped
}

// TestNotificationsEndToEnd: an agent finishing while another is selected
// rings once (one BEL, one tmux-wrapped OSC); the selected agent finishing
// in a focused terminal (tmux sends no focus events here: counted as
// focused) rings nothing; --notify-command runs once per transition with
// its environment.
func TestNotificationsEndToEnd(t *testing.T) {
	notified := filepath.Join(t.TempDir(), "notified.txt")
	d := startDash(t, 120, 35, []string{"VTE_VERSION="}, "--command", gatedAgent,
		"--notify-command", `printf '%s|%s|%s\n' "$SUBDASH_AGENT_ID" "$SUBDASH_STATUS" "$SUBDASH_MESSAGE" >> `+shellQuote(notified),
		"--spawn", "hold g1", "--spawn", "hold g2", "--spawn", "hold g3")
	first, second, third := d.agentID("hold g1"), d.agentID("hold g2"), d.agentID("hold g3")
	d.waitText("3/4 running", "› "+first[:8])
	read := d.capture()

	d.openGate("g2") // not selected
	d.waitNeedsYou(second)
	waitCount(t, "BELs after the unselected agent finished", 1, func() int { b, _ := notifications(t, read()); return b })
	if b, o := notifications(t, read()); b != 1 || o != 1 {
		t.Fatalf("unselected agent finished: %d BELs, %d OSCs; want 1 and 1", b, o)
	}
	if !strings.Contains(read(), "subdash: agent "+second[:8]+" completed: hold g2") {
		t.Fatalf("notification text: %q", read())
	}

	d.openGate("g1") // selected, focused
	d.waitText("✓ 2 completed")
	d.openGate("g3") // not selected: rings, and proves g1's turn is over
	d.waitNeedsYou(third)
	waitCount(t, "BELs", 2, func() int { b, _ := notifications(t, read()); return b })
	if b, o := notifications(t, read()); b != 2 || o != 2 {
		t.Fatalf("after the selected agent and a third finished: %d BELs, %d OSCs; want 2 and 2 (none for the selected one)", b, o)
	}
	if needsYou(tableRow(d.screen(), first)) {
		t.Fatal("the selected agent is marked as needing you")
	}

	// The host ran the command once per transition: g2, g1, g3. Its runs
	// are one at a time in the order of the transitions, so a fourth
	// transition (ctl closes g3) runs after any duplicate of the first
	// three: once its line is there, the file is complete.
	if out, err := exec.Command(binPath, "ctl", "--socket", d.socket, "close", third).CombinedOutput(); err != nil {
		t.Fatalf("ctl close: %v %s", err, out)
	}
	want := []string{
		second + "|completed|agent " + second[:8] + " completed: hold g2",
		first + "|completed|agent " + first[:8] + " completed: hold g1",
		third + "|completed|agent " + third[:8] + " completed: hold g3",
		third + "|closed|agent " + third[:8] + " closed: hold g3",
	}
	runs := func() string { b, _ := os.ReadFile(notified); return strings.TrimSpace(string(b)) }
	testkit.Poll(t, dashWait, "the notify command's run for the close", func() (string, bool) {
		got := runs()
		return got, strings.Contains(got, want[3])
	})
	if got := runs(); got != strings.Join(want, "\n") {
		t.Fatalf("notify command runs:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	d.keys("q")
	d.waitExit()
}

// TestNotifyOffEndToEnd: --notify off writes neither BEL nor OSC; the mark
// still shows.
func TestNotifyOffEndToEnd(t *testing.T) {
	d := startDash(t, 120, 35, nil, "--notify", "off", "--command", gatedAgent,
		"--spawn", "hold g1", "--spawn", "hold g2")
	first, second := d.agentID("hold g1"), d.agentID("hold g2")
	d.waitText("2/4 running", "› "+first[:8])
	read := d.capture()
	d.openGate("g2")
	d.waitNeedsYou(second)
	d.waitText("◆ 1 needs you (a)")
	d.keys("j") // a key round trip: any notification would be written by now
	d.waitText("› " + second[:8])
	if b, o := notifications(t, read()); b != 0 || o != 0 {
		t.Fatalf("--notify off: %d BELs, %d OSCs", b, o)
	}
	d.openGate("g1")
	d.waitText("✓ 2 completed")
	d.keys("q")
	d.waitExit()
}

// TestManyAgentsFilterAndJumpEndToEnd: 200 agents at 80x24; the filter
// shows in the title and keeps the selection; a jumps to the agent that
// has needed you longest; > and < reach the last and first agents.
func TestManyAgentsFilterAndJumpEndToEnd(t *testing.T) {
	args := []string{"--notify", "off", "--max-agents", "250", "--command", `read m; case "$m" in *oops*) exit 3;; esac; echo ok`}
	for i := 0; i < 200; i++ {
		kind := "good"
		if i%10 == 7 {
			kind = "oops"
		}
		args = append(args, "--spawn", fmt.Sprintf("task-%03d-%s", i, kind))
	}
	d := startDash(t, 80, 24, nil, args...)
	d.waitFor("200 agents ended", func(s string) bool {
		return strings.Contains(s, "0/250 running") && strings.Contains(s, "agents 200")
	})
	d.keys(">")
	d.waitText("task-199-good")
	d.keys("<")
	d.waitText("task-000-good")
	d.keys("F")
	d.typeText("errored oops")
	d.keys("Enter")
	d.waitText("agents 20/200 · filter: errored oops")
	d.keys("F", "C-u")
	d.typeText("oops")
	d.keys("Enter")
	d.waitText("agents 20/200 · filter: oops")
	d.keys("j", "j")
	// The selection is on the third row once both keys were handled (the
	// screen shows task-027 before that: wait for the marker on it).
	// (The row says what it did, exit 3; the log pane what it was asked.)
	s := d.waitFor("the selection on task-027", func(s string) bool {
		return strings.Contains(s, "“task-027-oops”") && strings.Contains(s, "› ")
	})
	sel := strings.Fields(strings.SplitN(s[strings.Index(s, "› ")+len("› "):], "\n", 2)[0])[0]
	// Rows change under the filter (the agent is resent, runs and
	// errors again): the selection stays on its agent.
	out, err := exec.Command(binPath, "ctl", "--socket", d.socket, "send", sel, "task-again-oops").CombinedOutput()
	if err != nil {
		t.Fatalf("ctl send: %v %s", err, out)
	}
	d.waitText("task-again-oops", "✗ 20 errored")
	if !strings.Contains(d.screen(), "› "+sel) {
		t.Fatalf("selection moved off %s:\n%s", sel, d.screen())
	}

	// a: the agent that needs you longest, from ctl list, once the host
	// took the seen marks of the agents the cursor rested on (sent in
	// commands of their own: under load list answered before one was
	// taken).
	d.keys("F", "C-u", "Enter")
	d.waitText("filter cleared")
	var list struct {
		Agents []struct {
			ID       string `json:"agent_id"`
			Message  string `json:"last_message"`
			NeedsYou *struct {
				Since string `json:"since"`
			} `json:"needs_you"`
		} `json:"agents"`
	}
	// j, j typed at once may reach the dashboard as one read: task-017 is
	// then never the selection after an update, and not looked at.
	looked := []string{"task-000-good", "task-199-good", "task-007-oops"}
	testkit.Eventually(t, dashWait, "the host to take the seen marks of "+strings.Join(looked, ", "), func() bool {
		out, err := exec.Command(binPath, "ctl", "--socket", d.socket, "list").Output()
		if err != nil {
			t.Fatal(err)
		}
		list.Agents = nil // decoded afresh: needs_you is left out when none
		if err := json.Unmarshal(out, &list); err != nil {
			t.Fatal(err)
		}
		for _, a := range list.Agents {
			if a.NeedsYou != nil && slices.Contains(looked, a.Message) {
				return false
			}
		}
		return true
	})
	oldest, since := "", ""
	for _, a := range list.Agents {
		if a.NeedsYou != nil && !strings.HasPrefix(a.ID, sel) && (since == "" || a.NeedsYou.Since < since) {
			oldest, since = a.ID, a.NeedsYou.Since
		}
	}
	d.keys("a")
	d.waitText("› " + oldest[:8])
	d.keys("q")
	d.waitExit()
}

// TestViewerNotificationsEndToEnd: a host dashboard and a viewer attached
// to it each ring their own terminal once when an agent neither shows
// finishes; the host alone runs --notify-command, once; selecting the
// agent in the viewer clears its mark on the host too (SPEC §11).
func TestViewerNotificationsEndToEnd(t *testing.T) {
	notified := filepath.Join(t.TempDir(), "notified.txt")
	host := startDash(t, 120, 35, []string{"VTE_VERSION="}, "--command", gatedAgent,
		"--notify-command", `printf '%s\n' "$SUBDASH_AGENT_ID" >> `+shellQuote(notified),
		"--spawn", "hold g1", "--spawn", "hold g2")
	first, second := host.agentID("hold g1"), host.agentID("hold g2")
	host.waitText("2/4 running", "› "+first[:8])
	viewer := startDash(t, 120, 35, []string{"VTE_VERSION="}, "--dir", host.dir, "--state-dir", host.state, "--socket", host.socket)
	viewer.waitText("attached", "› "+first[:8], second[:8])
	readHost, readViewer := host.capture(), viewer.capture()

	host.openGate("g2")
	host.waitNeedsYou(second)
	viewer.waitNeedsYou(second)
	for name, read := range map[string]func() string{"host": readHost, "viewer": readViewer} {
		waitCount(t, name+" BELs", 1, func() int { b, _ := notifications(t, read()); return b })
	}
	waitCount(t, "notify command runs", 1, func() int {
		b, _ := os.ReadFile(notified)
		return strings.Count(string(b), "\n")
	})

	// Looking at it in the viewer clears it everywhere.
	viewer.keys("j")
	viewer.waitText("› " + second[:8])
	host.waitFor("the mark cleared on the host", func(s string) bool {
		return !needsYou(tableRow(s, second))
	})
	viewer.keys("k")
	viewer.waitText("› " + first[:8])
	host.openGate("g1") // selected in both: rings in neither
	host.waitText("✓ 2 completed")
	viewer.waitText("✓ 2 completed")
	for name, read := range map[string]func() string{"host": readHost, "viewer": readViewer} {
		if b, o := notifications(t, read()); b != 1 || o != 1 {
			t.Errorf("%s: %d BELs, %d OSCs; want 1 and 1", name, b, o)
		}
	}
	if b, _ := os.ReadFile(notified); string(b) != second+"\n"+first+"\n" {
		t.Fatalf("notify command runs: %q", b)
	}
	viewer.keys("q")
	viewer.waitExit()
	host.keys("q")
	host.waitExit()
}
