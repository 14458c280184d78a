package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDashboardPagerComesBackIntact opens the log in $PAGER (less),
// presses ctrl+c in it and quits it: the dashboard is drawn again, intact.
func TestDashboardPagerComesBackIntact(t *testing.T) {
	requireTool(t, "less")
	d := startDash(t, 120, 35, []string{"PAGER=less -R"}, "--command", `read m; echo "page-one $m"; seq 1 10`, "--spawn", "paged")
	d.waitText("page-one paged", "│10 ", "✓ completed")
	d.keys("o")
	d.waitFor("less", func(s string) bool {
		return !strings.Contains(s, "╭─ agents") && strings.Contains(s, "page-one paged")
	})
	// ctrl+c inside the pager belongs to the pager: the terminal sends
	// SIGINT to the whole foreground process group, the dashboard included,
	// and the dashboard must stay. less answers it with a bell and a redraw
	// of its page, and drops what was typed before it got there: q goes
	// once less is back at its prompt.
	written := d.pipePane()
	d.keys("C-c")
	d.waitFor("less to redraw its page after ctrl+c", func(string) bool {
		_, after, rang := strings.Cut(written(), "\a")
		return rang && strings.Contains(after, "(END)")
	})
	d.keys("q")
	// the help line is the frame's last: a capture holding it is not one
	// taken while the redraw was half written
	s := d.waitText("╭─ agents 1", "page-one paged", "│10 ", "✓ completed", "q quit")
	d.checkFrame(s)
	d.keys("?") // still alive and answering keys
	d.waitText("╭─ help")
	d.keys("Escape")
	d.waitText("╭─ agents 1")
	d.keys("q")
	d.waitExit()
	d.checkRestored()
}

// TestDashboardPagerGetsNoTerminalControl: the pager gets the display
// lines, not the raw log, so even PAGER=cat cannot hand an agent's title
// (OSC 0) or mouse reporting (DECSET 1000) to the terminal; colours and
// text do arrive.
func TestDashboardPagerGetsNoTerminalControl(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "pager-ran")
	d := startDash(t, 120, 35, []string{`PAGER=cat "$@"; touch ` + ran}, "--command",
		`printf '\033]0;PWNED\007\033[?1000h\033[31mred-text\033[m done\n'`, "--spawn", "x")
	d.waitText("red-text done", "✓ completed")
	state := func() string {
		out, err := d.tm("display-message", "-p", "-t", "dash", "title=#{pane_title} mouse=#{mouse_any_flag}")
		if err != nil {
			t.Fatalf("display-message: %v %s", err, out)
		}
		return strings.TrimSpace(out)
	}
	before := state()
	if strings.Contains(before, "PWNED") {
		t.Fatalf("the dashboard let the title through: %s", before)
	}
	d.keys("o")
	d.waitFor("the pager ran", func(string) bool { _, err := os.Stat(ran); return err == nil })
	// cat ended; the dashboard is back. The help line is the frame's last:
	// a capture holding it is not one taken while the redraw was half
	// written.
	s := d.waitText("╭─ agents 1", "red-text done", "q quit")
	d.checkFrame(s)
	if after := state(); after != before {
		t.Fatalf("after the pager: %s, before: %s", after, before)
	}
	d.keys("q")
	d.waitExit()
	d.checkRestored()
}

// TestDashboardSIGTERMWhileInThePager: SIGTERM ends the dashboard even
// while less is open in front of it (the program waits for the pager, so
// the pager is ended first); the agents are stopped and the terminal given
// back.
func TestDashboardSIGTERMWhileInThePager(t *testing.T) {
	requireTool(t, "less")
	d := startDash(t, 120, 35, []string{"PAGER=less -R"}, "--grace", "1s", "--command", `trap '' TERM; seq 1 100; exec sleep 600`, "--spawn", "x")
	d.waitText("│100 ", "running")
	d.keys("o")
	d.waitFor("less", func(s string) bool { return !strings.Contains(s, "╭─ agents") && strings.HasPrefix(s, "1\n2\n") })
	_ = syscall.Kill(d.dashPID(), syscall.SIGTERM)
	d.waitExit() // within dashWait: nobody quits less here
	d.checkRestored()
}

// TestDashboardPagerNotFound: a $PAGER that is not installed is named in
// plain words, with what to do, and the dashboard comes back intact.
func TestDashboardPagerNotFound(t *testing.T) {
	d := startDash(t, 120, 35, []string{"PAGER=nonexistentpager"}, "--command", `read m; echo "done $m"`, "--spawn", "x")
	d.waitText("done x", "✓ completed")
	d.keys("o")
	s := d.waitText(`✗ pager "nonexistentpager" failed (exit status 127); set $PAGER to a pager such as less`, "q quit") // the frame drawn to its last line
	d.checkFrame(s)
	d.keys("q")
	d.waitExit()
	d.checkRestored()
}
