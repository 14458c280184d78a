package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// The watch screen (SPEC §7): what each agent does now, the split, the
// zoom and the mouse, in a real terminal.

// watchCommand prints 60 lines at once (more than a pane holds), then a
// numbered line five times a second; for "oops" it writes to stderr and
// exits 3.
const watchCommand = `read m; case "$m" in oops*) echo building; echo "oops: disk full" >&2; exit 3;; *) seq 60 | sed "s/^/$m early /"; i=0; while :; do i=$((i+1)); echo "$m step $i"; sleep 0.2; done;; esac`

// mouse sends an SGR mouse report as the terminal would: button b (0 the
// left, 64 the wheel up, 65 down; +32 a motion) at 0-based cell (x, y),
// pressed or released.
func (d *dash) mouse(b, x, y int, press bool) {
	d.t.Helper()
	end := "M"
	if !press {
		end = "m"
	}
	d.typeText(fmt.Sprintf("\x1b[<%d;%d;%d%s", b, x+1, y+1, end))
}

// cellOf returns the cell (x, y) of screen s where substr starts.
func cellOf(t *testing.T, s, substr string) (int, int) {
	t.Helper()
	for y, l := range strings.Split(s, "\n") {
		if i := strings.Index(l, substr); i >= 0 {
			return len([]rune(l[:i])), y
		}
	}
	t.Fatalf("%q is not on screen:\n%s", substr, s)
	return 0, 0
}

// nowWidth returns how many cells the NOW column has on screen s.
func nowWidth(t *testing.T, s string) int {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if i := strings.Index(l, " NOW "); i >= 0 {
			r := []rune(l)
			col := len([]rune(l[:i])) + 1
			end := col
			for end < len(r) && r[end] != '│' {
				end++
			}
			return end - col
		}
	}
	t.Fatalf("no NOW column:\n%s", s)
	return 0
}

// TestWatchScreen: at 120x40 each row says what its agent does now, its
// newest line as it changes and an error's reason with the exit status,
// in NOW's 40 cells; the mouse selects, scrolls (following stops) and
// drags the split; - and m move and zoom; a viewer shows what the host
// shows.
func TestWatchScreen(t *testing.T) {
	d := startDash(t, 120, 40, nil, "--command", watchCommand, "--spawn", "alpha", "--spawn", "beta", "--spawn", "oops")
	alpha, beta, oops := d.agentID("alpha"), d.agentID("beta"), d.agentID("oops")
	d.waitRow(oops, "✗ errored")
	d.waitRow(oops, "oops: disk full · exit 3")
	s := d.waitFor("alpha's newest line in its row", func(s string) bool { return strings.Contains(tableRow(s, alpha), "alpha step ") })
	if w := nowWidth(t, s); w < 40 {
		t.Fatalf("NOW has %d cells at 120x40:\n%s", w, s)
	}
	first := tableRow(s, alpha)
	d.waitFor("alpha's row to move on", func(s string) bool {
		r := tableRow(s, alpha)
		return strings.Contains(r, "alpha step ") && r != first
	})
	d.checkFrame(d.screen())

	// A click on beta's row selects it; the log pane shows it.
	x, y := cellOf(t, d.screen(), beta[:8]+" ")
	d.mouse(0, x, y, true)
	d.mouse(0, x, y, false)
	d.waitFor("beta's output in the log pane", func(s string) bool {
		rows := d.logRows(s)
		return strings.Contains(s, beta[:8]+" · #1/1") && len(rows) > 0 && strings.Contains(rows[len(rows)-1], "beta step ")
	})
	// The wheel over the log pane scrolls it: following stops.
	d.waitText("· following")
	tw := d.tableW(d.screen())
	d.mouse(64, tw+10, 10, true)
	d.waitText("· paused", "G follows")
	d.keys("G")
	d.waitText("· following")
	// A drag of the border moves the split.
	d.mouse(0, tw-1, 5, true)
	d.mouse(32, tw-21, 6, true)
	d.mouse(0, tw-21, 6, false)
	d.waitFor("the border dragged 20 cells left", func(s string) bool { return d.tableW(s) == tw-20 })
	d.checkFrame(d.screen())
	// + widens it back a step. m zooms the focused pane, the table the
	// click focused; tab moves the zoom to the log pane; m goes back.
	d.keys("+")
	d.waitFor("the border a step right", func(s string) bool { return d.tableW(s) == tw-16 })
	d.keys("m")
	d.waitFor("the table zoomed", func(s string) bool {
		top := strings.SplitN(s, "\n", 2)[0]
		return strings.HasPrefix(top, "╭─ agents 3") && strings.Count(top, "╮") == 1 && strings.Contains(s, " NOW ")
	})
	d.keys("Tab")
	d.waitFor("the log pane zoomed", func(s string) bool {
		return strings.HasPrefix(s, "╭─ "+beta[:8]) && !strings.Contains(s, " NOW ")
	})
	d.keys("m")
	d.waitFor("both panes", func(s string) bool { return d.tableW(s) == tw-16 })

	// A viewer shows the rows as the host does.
	v := startViewer(t, workspace{dir: d.dir, state: d.state, socket: d.socket}, "attach", "--socket", d.socket)
	v.waitRow(oops, "oops: disk full · exit 3")
	v.waitFor("alpha's newest line in the viewer's row", func(s string) bool { return strings.Contains(tableRow(s, alpha), "alpha step ") })
	v.keys("q")
	v.waitExit()

	d.keys("q")
	d.waitText("Quit?")
	d.keys("y")
	d.waitExit()
	d.checkRestored()
}

// TestWatchMouseOff: with --mouse=false the dashboard asks for no mouse
// reports (the terminal's own selection works with a plain drag), and a
// report that comes anyway selects nothing; a dashboard that attaches
// with --mouse=false and a viewer whose config file says mouse = false
// ask for none either.
func TestWatchMouseOff(t *testing.T) {
	d := startDash(t, 120, 40, nil, "--mouse=false", "--command", watchCommand, "--spawn", "alpha", "--spawn", "beta")
	alpha, beta := d.agentID("alpha"), d.agentID("beta")
	d.waitText(alpha[:8]+" · #1/1", beta[:8]+" ", "alpha step ")
	if out, err := d.tm("display-message", "-p", "-t", "dash", "#{mouse_any_flag}#{mouse_sgr_flag}"); err != nil || strings.TrimSpace(out) != "00" {
		t.Fatalf("the pane's mouse flags %q (%v), want none", out, err)
	}
	x, y := cellOf(t, d.screen(), beta[:8]+" ")
	d.mouse(0, x, y, true)
	d.mouse(0, x, y, false)
	d.keys("?") // a key round trip: the click would be handled by now
	d.waitText("╭─ help")
	d.keys("Escape")
	d.waitText(alpha[:8] + " · #1/1")
	if s := d.screen(); strings.Contains(s, beta[:8]+" · #1/1") {
		t.Fatalf("a click with --mouse=false selected beta:\n%s", s)
	}

	// The mouse is a viewer's own: subdash --mouse=false attaches (no
	// host setting differs), and so does attach with the file's mouse.
	v := startViewer(t, workspace{dir: d.dir, state: d.state, socket: d.socket}, "--dir", d.dir, "--socket", d.socket, "--mouse=false")
	v.waitText(alpha[:8]+" · #1/1", "alpha step ")
	if out, err := v.tm("display-message", "-p", "-t", "dash", "#{mouse_any_flag}#{mouse_sgr_flag}"); err != nil || strings.TrimSpace(out) != "00" {
		t.Fatalf("the viewer's mouse flags %q (%v), want none", out, err)
	}
	v.keys("q")
	v.waitExit()
	env, _ := configHome(t, "mouse = false\n")
	f := &dash{t: t, server: fmt.Sprintf("subdash-view-%d-%d", os.Getpid(), time.Now().UnixNano()), dir: d.dir, state: d.state, socket: d.socket, w: 120, h: 40}
	f.run(nil, []string{env}, "attach", "--socket", d.socket)
	f.waitText(alpha[:8]+" · #1/1", "alpha step ")
	if out, err := f.tm("display-message", "-p", "-t", "dash", "#{mouse_any_flag}#{mouse_sgr_flag}"); err != nil || strings.TrimSpace(out) != "00" {
		t.Fatalf("the mouse flags of a viewer whose file says mouse = false: %q (%v), want none", out, err)
	}
	f.keys("q")
	f.waitExit()
}
