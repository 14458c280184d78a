package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/theme"
)

// End-to-end tests of the dashboard: the real binary in a tmux pane, real
// child commands (the rows of /work/shared/cases), keys sent with
// `tmux send-keys` and the screen read with `tmux capture-pane`. Waiting is
// done by polling the screen with a deadline, never by sleeping alone. The
// tmux harness is in harness_tmux_test.go; the pager's tests are in
// pager_test.go, the rows of the cases in cases_test.go.

// dashCommand is the agent command of the main end-to-end test: it echoes
// its task, then ticks every 50 ms for a while; a task starting with
// "stubborn" ignores SIGTERM, so stopping it takes the grace period.
const dashCommand = `read m; case "$m" in stubborn*) trap '' TERM INT;; esac; echo "task: $m"; i=0; while [ $i -lt 2000 ]; do echo "tick $i"; i=$((i+1)); sleep 0.05; done`

// TestDashboardEndToEnd spawns two agents, watches their output arrive,
// interrupts one, resends it, closes it, resumes it and quits; afterwards
// no child process is left and the terminal is restored.
func TestDashboardEndToEnd(t *testing.T) {
	raceChecked(t)
	d := startDash(t, 120, 35, nil, "--command", dashCommand, "--grace", "1s",
		"--spawn", "stubborn alpha", "--spawn", "beta")
	alpha, beta := d.agentID("stubborn alpha"), d.agentID("beta")
	d.waitRow(alpha, "running")
	d.waitRow(beta, "running")
	s := d.waitText("task: stubborn alpha", "tick 3")
	d.checkFrame(s)
	if !strings.Contains(tableRow(s, alpha), "›") {
		t.Fatalf("the first agent is not selected:\n%s", s)
	}

	d.keys("j")
	d.waitText("task: beta", beta[:8]+" · #1/1")
	d.keys("k")
	d.waitText("task: stubborn alpha", alpha[:8]+" · #1/1")

	// Interrupt: "stopping" while the grace period runs (alpha ignores
	// SIGTERM, so its group lives 1 s more), then the final status once the
	// group is gone. Seeing "stopping" at all means it was drawn before the
	// group ended: the final status replaces it.
	d.keys("i")
	d.waitRow(alpha, "◌ stopping")
	d.waitRow(alpha, "✗ errored")
	d.waitRow(alpha, "interrupted")
	d.waitText("interrupted " + alpha[:8])
	d.waitRow(beta, "running")

	// Resend: the same task again, as submission 2.
	d.keys("R")
	d.waitText(alpha[:8] + " · #2/2")
	d.waitRow(alpha, "running")
	d.waitText("task: stubborn alpha", "tick 2")

	// Close a running agent: asks first.
	d.keys("c")
	d.waitText("? Close " + alpha[:8] + "? It is running and will be stopped.")
	d.keys("y")
	d.waitRow(alpha, "■ closed")

	// Resume: back to the status it had, errored by the interrupt.
	d.keys("r")
	d.waitRow(alpha, "✗ errored")
	d.waitRow(alpha, "interrupted")
	d.waitText("reopened " + alpha[:8] + " (errored): nothing runs until you send (s)")

	// Send a new message through the input line.
	d.keys("s")
	d.waitText("send " + alpha[:8] + " › ")
	d.typeText("stubborn again")
	d.keys("Enter")
	d.waitText(alpha[:8] + " · #3/3")
	d.waitText("task: stubborn again")

	// Quit while both run: asks, then stops them.
	d.keys("q")
	d.waitText("? Quit? 2 agents are running and will be stopped.")
	d.keys("y")
	if code := d.waitExit(); code != 0 {
		t.Fatalf("exit status %d:\n%s", code, d.screen())
	}
	d.checkRestored()
}

// TestDashboardSignalsRestoreTerminal: SIGINT, SIGTERM and SIGHUP end the
// dashboard like quitting: every running submission is terminated and the
// terminal restored.
func TestDashboardSignalsRestoreTerminal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			d := startDash(t, 100, 30, nil, "--command", "sleep 300 & sleep 301 & echo started; wait", "--grace", "300ms", "--spawn", "x", "--spawn", "y")
			d.waitText("started")
			d.waitFor("two running agents", func(s string) bool { return strings.Contains(s, "2/4 running") })
			pid := d.dashPID()
			if pid == 0 {
				t.Fatal("no dashboard process")
			}
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatal(err)
			}
			if code := d.waitExit(); code != 128+int(sig) {
				t.Errorf("exit status %d after %v, want %d as shells expect", code, sig, 128+int(sig))
			}
			d.checkRestored()
		})
	}
}

// TestDashboardQuitWithoutWaiting: with a grace period longer than the
// test's patience (60 s) and an agent that ignores SIGTERM, q, y, q
// still ends the dashboard and the agent: the second q kills at once. So
// does a ctrl+c after SIGTERM ended the screen, while the shell shows the
// stopping line.
func TestDashboardQuitWithoutWaiting(t *testing.T) {
	for _, how := range []string{"q twice", "SIGTERM, then ctrl+c"} {
		t.Run(how, func(t *testing.T) {
			d := startDash(t, 120, 35, nil, "--grace", "60s", "--command", `trap '' TERM; echo stubborn; exec sleep 600`, "--spawn", "x")
			// The agent's output in the log pane and the count quit reads:
			// the status line names the command (…echo stubborn…) from the
			// first frame on, before the agent runs.
			d.waitText("│stubborn", "1/4 running")
			if how == "q twice" {
				d.keys("q")
				d.waitText("? Quit? 1 agent is running")
				d.keys("y")
				d.waitText("kill them now and quit")
				d.keys("q")
			} else {
				_ = syscall.Kill(d.dashPID(), syscall.SIGTERM)
				d.waitText("stopping 1 running agent(s)… (ctrl+c: kill them now)")
				d.keys("C-c")
			}
			d.waitExit() // within dashWait (20 s), well before the 60 s grace
			d.checkRestored()
		})
	}
}

// TestDashboardNoColor: with NO_COLOR the dashboard draws no colour at all,
// agent output included, and statuses stay readable as symbol and word.
func TestDashboardNoColor(t *testing.T) {
	d := startDash(t, 120, 35, []string{"NO_COLOR=1"}, "--command", `printf '\033[31;1mRED\033[m ok\n'; exit 2`, "--spawn", "x")
	d.waitText("RED ok · exit 2", "✗ errored")
	if s := d.styledScreen(); strings.Contains(s, "\x1b[") {
		t.Fatalf("NO_COLOR screen holds SGR: %q", s)
	}

	// NO_COLOR forbids colour, not attributes: a search match is drawn in
	// reverse video, and still no colour.
	d.keys("/")
	d.typeText("RED")
	d.keys("Enter")
	d.waitText("/RED 1/1")
	styled := d.styledScreen()
	for _, m := range sgrRe.FindAllStringSubmatch(styled, -1) {
		for _, p := range strings.Split(m[1], ";") {
			// 39 and 49 are the default colours, which tmux resets to.
			if n, err := strconv.Atoi(p); err == nil && n != 39 && n != 49 && (n >= 30 && n <= 48 || n >= 90 && n <= 107) {
				t.Fatalf("NO_COLOR screen holds colour SGR %q: %q", m[0], styled)
			}
		}
	}
	marked := ""
	for _, row := range parseStyled(styled) {
		for _, c := range row {
			if c.reverse {
				marked += string(c.r)
			}
		}
	}
	if marked != "RED" {
		t.Fatalf("reverse video on %q, want the match %q: %q", marked, "RED", styled)
	}
}

// TestDashboardColourUnderCI: CI=true (GitHub Actions, where VHS demos are
// often recorded) does not take the colours away (termenv, used before,
// read a set CI as "not a terminal"; this failed on the CI machine then).
func TestDashboardColourUnderCI(t *testing.T) {
	d := startDash(t, 120, 35, []string{"CI=true"}, "--command", `printf '\033[31mRED\033[m ok\n'`, "--spawn", "x")
	d.waitText("RED ok", "✓ completed")
	red, themed := false, false
	plain := d.screen()
	for i, row := range parseStyled(d.styledScreen()) {
		for j, c := range row {
			red = red || c.fg == "31" && d.inLogPane(plain, i, j)
			themed = themed || strings.HasPrefix(c.fg, "5;") || strings.HasPrefix(c.fg, "2;")
		}
	}
	if !red || !themed {
		t.Fatalf("with CI=true: agent red kept %v, theme colours drawn %v:\n%q", red, themed, d.styledScreen())
	}
}

// TestDashboardLightBackgroundInTmux: in a tmux pane with a white
// background the light colours are used, whatever TERM says: the
// dashboard asks the terminal (tmux answers with the pane's background).
// termenv, used before, never asked under TERM=tmux* or screen*, which
// gave near-white text on white.
func TestDashboardLightBackgroundInTmux(t *testing.T) {
	roles := theme.DefaultRoles()
	white := [][]string{{"-g", "window-style", "bg=white,fg=black"}, {"-g", "window-active-style", "bg=white,fg=black"}}
	for _, term := range []string{"tmux-256color", "screen-256color", "xterm-256color"} {
		t.Run(term, func(t *testing.T) {
			d := startDashIn(t, 120, 35, white, []string{"TERM=" + term}, "--command", "echo hi", "--spawn", "x")
			d.waitText("hi", "✓ completed")
			// the terminal's answer to the background query is a message
			// like any other: on a loaded machine the first frames may
			// come before it, drawn for the default, dark background
			s := testkit.Poll(t, dashWait, "the light accent", func() (string, bool) {
				s := d.styledScreen()
				return s, drawsFg(s, roles.Accent.Light)
			})
			if !drawsFg(s, roles.Accent.Light) || drawsFg(s, roles.Accent.Dark) {
				t.Fatalf("TERM=%s on white: want the light accent %s, not the dark %s:\n%q", term, roles.Accent.Light, roles.Accent.Dark, s)
			}
		})
	}
}

// drawsFg reports whether the styled screen s draws text in the colour
// hex: as its nearest of 256 colours, or as RGB where the terminal takes
// true colour.
func drawsFg(s, hex string) bool {
	c := lipgloss.Color(hex)
	r, g, b, _ := c.RGBA()
	return strings.Contains(s, fmt.Sprintf("38;5;%dm", colorprofile.ANSI256.Convert(c).(ansi.IndexedColor))) ||
		strings.Contains(s, fmt.Sprintf("38;2;%d;%d;%dm", r>>8, g>>8, b>>8))
}

// TestDashboardEmojiKeepTheBorders: "⚠️" (VS16) and "👍🏽" (a skin tone) are
// one and four cells wide in tmux, which counts code points, but two and two
// for a terminal counting grapheme clusters. The dashboard draws neither
// code point, so in tmux every border stays in place: in the table, the log
// pane and its title, and the input line; the message sent keeps them.
func TestDashboardEmojiKeepTheBorders(t *testing.T) {
	const msg = "fix ⚠️ warnings 👍🏽"
	d := startDash(t, 120, 35, nil, "--command", `read m; echo "task: $m"`, "--spawn", msg)
	id := d.agentID(msg)
	s := d.waitText("task: fix ⚠ warnings 👍", "✓ completed")
	d.checkCellFrame(s)
	d.keys("e") // edit & resend, pre-filled with the message
	s = d.waitText("edit & resend " + id[:8] + " › fix ⚠ warnings 👍")
	d.checkCellFrame(s)
	d.keys("Enter")
	d.waitText(id[:8] + " · #2/2")
	sent := ""
	for _, ev := range d.journal() {
		if ev["event"] == "sent" && ev["seq"] == float64(2) {
			sent, _ = ev["message"].(string)
		}
	}
	if sent != msg {
		t.Fatalf("sent %q, want %q", sent, msg)
	}
}

// TestDashboardSearchFoldsCaseAsItCounts: a query without upper-case
// letters matches "É" as "é" ("smart case", as in less and vim): the match counted in
// the search's footer is the one drawn in reverse video, every occurrence
// in the line, "É" included.
func TestDashboardSearchFoldsCaseAsItCounts(t *testing.T) {
	d := startDash(t, 120, 35, []string{"NO_COLOR=1"}, "--command", `printf 'CAFÉ au lait\ncafé noir\nthé vert\n'`, "--spawn", "x")
	d.waitText("CAFÉ au lait", "café noir", "✓ completed")
	d.keys("/")
	d.typeText("fé")
	d.keys("Enter")
	d.waitText("/fé 1/2")
	marked := func() string {
		var m string
		for _, row := range parseStyled(d.styledScreen()) {
			for _, c := range row {
				if c.reverse {
					m += string(c.r)
				}
			}
		}
		return m
	}
	// The current match is the first line's (nearest the top); the second
	// is drawn too.
	if got := marked(); got != "FÉfé" {
		t.Fatalf("reverse video on %q, want both matches %q:\n%s", got, "FÉfé", d.screen())
	}
}
