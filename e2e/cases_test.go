package e2e

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The rows of /work/shared/cases/README.md that concern the screen, run as
// the agent command of the real dashboard in tmux.

// checkColoursInside fails when a cell outside the log pane's interior
// shows red or reverse video, the styles the agent left open (H01).
func (d *dash) checkColoursInside() {
	d.t.Helper()
	styled := d.styledScreen()
	plain := d.screen()
	for i, row := range parseStyled(styled) {
		for j, c := range row {
			if d.inLogPane(plain, i, j) {
				continue
			}
			if c.fg == "31" || c.reverse {
				d.t.Fatalf("cell %d,%d (%q) outside the log pane has the agent's style (fg %s, reverse %v):\n%s",
					i, j, c.r, c.fg, c.reverse, d.screen())
			}
		}
	}
}

func TestCaseH01ColourLeftOpen(t *testing.T) {
	d := startDash(t, 120, 35, nil, "--command",
		`printf '\033[31;1mRED-NO-RESET\nline two\n\033[7mREVERSE-NO-RESET\n'; echo plain`, "--spawn", "one", "--spawn", "two")
	d.waitFor("both completed", func(s string) bool {
		// Count the table's rows: the log pane's title shows a status too.
		n := 0
		for _, l := range strings.Split(s, "\n") {
			table, _, _ := strings.Cut(l, "││")
			if strings.HasPrefix(table, "│") && strings.Contains(table, "✓ completed") {
				n++
			}
		}
		return n == 2
	})
	d.waitText("RED-NO-RESET", "REVERSE-NO-RESET", "plain")
	d.checkColoursInside()
	// The red text really is red inside the pane: styles are kept there.
	red := false
	plain := d.screen()
	for i, row := range parseStyled(d.styledScreen()) {
		for j, c := range row {
			red = red || c.fg == "31" && d.inLogPane(plain, i, j)
		}
	}
	if !red {
		t.Fatal("the agent's colours were not kept inside the log pane")
	}
	for _, k := range []struct{ key, want string }{
		{"j", "› "}, {"k", "› "}, {"w", "· wrap ·"}, {"K", "RED-NO-RESET"}, {"g", "RED-NO-RESET"},
		{"G", "following"}, {"?", "╭─ help"}, {"Escape", "╭─ agents"},
	} {
		d.keys(k.key)
		d.waitText(k.want)
		d.checkColoursInside()
	}
}

func TestCaseH02CursorMovement(t *testing.T) {
	d := startDash(t, 120, 35, nil, "--command",
		`printf 'step 1/3\n'; sleep 0.3; printf '\033[1A\033[2Kstep 2/3\n'; sleep 0.3; printf '\033[1A\033[2Kstep 3/3\n\033[5;5HJUNK\n'`,
		"--spawn", "x")
	s := d.waitText("✓ completed", "JUNK", "step 3/3")
	d.checkFrame(s)
	drawn := d.aboveStatus(s) // the status line shows the command itself
	for _, bad := range []string{"[1A", "[2K", "[5;5H", "5;5H"} {
		if strings.Contains(drawn, bad) {
			t.Fatalf("screen shows %q:\n%s", bad, s)
		}
	}
	for i, l := range strings.Split(drawn, "\n") {
		r := []rune(l)
		for _, word := range []string{"JUNK", "step "} {
			// the log pane, or the agent's row's NOW, which says its last line
			if j := strings.Index(l, word); j >= 0 && !d.inLogPane(drawn, i, len([]rune(l[:j]))) && !d.inNowColumn(drawn, i, len([]rune(l[:j]))) {
				t.Fatalf("%q drawn outside the log pane at line %d: %q", word, i, string(r))
			}
		}
	}
	want := []string{"step 1/3", "step 2/3", "step 3/3", "JUNK"}
	var got []string
	for _, r := range d.logRows(s) {
		if t := strings.TrimSpace(r); t != "" {
			got = append(got, t)
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("log pane shows %q, want %q", got, want)
	}
}

func TestCaseH03ClearAndReset(t *testing.T) {
	d := startDash(t, 120, 35, nil, "--command",
		`printf 'old 1\nold 2\n'; sleep 0.3; printf '\033[2J\033[Hnew after clear\n'; sleep 0.3; printf '\033cafter reset\n'`,
		"--spawn", "x")
	s := d.waitText("✓ completed", "after reset", "new after clear", "old 1")
	d.checkFrame(s)
	if drawn := d.aboveStatus(s); strings.Contains(drawn, "cafter reset") || strings.Contains(drawn, "[2J") {
		t.Fatalf("escape sequence text leaked:\n%s", s)
	}
	out, _ := d.tm("display", "-p", "-t", "dash", "#{alternate_on}")
	if strings.TrimSpace(out) != "1" {
		t.Fatal("the terminal left the alternate screen: the reset reached it")
	}
}

func TestCaseH05LongLine(t *testing.T) {
	d := startDash(t, 120, 35, nil, "--command", `printf '%0200000d' 0; echo; echo after-long-line`, "--spawn", "x")
	// NOW says after-long-line too: wait for the log pane's own rows.
	s := d.waitFor("the log pane's last line", func(s string) bool {
		rows := d.logRows(s)
		return strings.Contains(s, "✓ completed") && slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, "after-long-line") })
	})
	d.checkFrame(s)
	cut := false
	for _, r := range d.logRows(s) {
		cut = cut || strings.HasPrefix(r, "0000") && strings.HasSuffix(r, "0…")
	}
	if !cut {
		t.Fatalf("the long line is not shown cut with a marker:\n%s", s)
	}
	for i := 0; i < 2; i++ {
		start := time.Now()
		d.keys("w")
		s = d.waitFor("wrap on", func(s string) bool { return strings.Contains(s, "· wrap ·") })
		t.Logf("wrap on: %v", time.Since(start))
		d.checkFrame(s)
		d.keys("K", "g")
		s = d.waitText("paused")
		d.checkFrame(s)
		d.keys("G")
		s = d.waitText("after-long-line", "following")
		d.checkFrame(s)
		start = time.Now()
		d.keys("w")
		d.waitFor("wrap off", func(s string) bool { return !strings.Contains(s, "· wrap ·") })
		t.Logf("wrap off: %v", time.Since(start))
	}
}

func TestCaseH07Tabs(t *testing.T) {
	d := startDash(t, 120, 35, nil, "--command", `printf 'a\tb\n1234567\tc\n12345678\td\n\tindented\n'`, "--spawn", "x")
	s := d.waitFor("the tabbed lines in the log pane", func(s string) bool {
		rows := d.logRows(s)
		return strings.Contains(s, "✓ completed") && len(rows) > 0 && strings.Contains(strings.Join(rows, "\n"), "indented")
	})
	d.checkFrame(s)
	if strings.Contains(s, "\t") {
		t.Fatal("a raw tab reached the terminal")
	}
	want := map[string]int{"a": 8, "1234567": 8, "12345678": 16, "": 8}
	found := 0
	for _, r := range d.logRows(s) {
		f := strings.Fields(r)
		if len(f) == 0 {
			continue
		}
		last := f[len(f)-1]
		col := strings.Index(r, last)
		if exp, ok := want[strings.Join(f[:len(f)-1], "")]; ok && len(last) <= 8 {
			if col != exp {
				t.Errorf("%q: %q at column %d, want %d", r, last, col, exp)
			}
			found++
		}
	}
	if found != 4 {
		t.Fatalf("found %d of the 4 tab lines:\n%s", found, s)
	}
}

// floodSeconds is how long H17 floods; SUBDASH_FLOOD_SECONDS overrides it.
func floodSeconds() time.Duration {
	if v, err := strconv.Atoi(os.Getenv("SUBDASH_FLOOD_SECONDS")); err == nil && v > 0 {
		return time.Duration(v) * time.Second
	}
	return 5 * time.Second
}

// keyLatency presses key and returns how long until cond holds on screen.
func (d *dash) keyLatency(key string, cond func(string) bool) time.Duration {
	d.t.Helper()
	start := time.Now()
	d.keys(key)
	d.waitFor("the answer to "+key, cond)
	return time.Since(start)
}

func TestCaseH17EndlessFlood(t *testing.T) {
	d := startDash(t, 120, 35, nil, "--command",
		`read m; case "$m" in flood*) exec yes 'spam spam spam spam spam spam spam spam';; esac; echo quiet`,
		"--spawn", "flood", "--spawn", "quiet")
	flood, quiet := d.agentID("flood"), d.agentID("quiet")
	d.waitText("spam spam")
	// The journal names quiet before its row reaches the table: a j pressed
	// while flood is the only row moves nothing (this test's own race, seen
	// 1 run in 6, never a lost key).
	d.waitFor("quiet's row", func(s string) bool { return tableRow(s, quiet) != "" })
	pid := d.dashPID()
	var worst time.Duration
	var samples []time.Duration
	for end := time.Now().Add(floodSeconds()); time.Now().Before(end); {
		for _, k := range []struct{ key, id string }{{"j", quiet}, {"k", flood}} {
			l := d.keyLatency(k.key, func(s string) bool { return strings.Contains(tableRow(s, k.id), "›") })
			samples = append(samples, l)
			worst = max(worst, l)
		}
		if rss := rssKiB(pid); rss > 400<<10 {
			t.Fatalf("dashboard memory grows: %d KiB", rss)
		}
	}
	t.Logf("%d key presses during the flood, slowest answer %v; dashboard RSS %d KiB", len(samples), worst, rssKiB(pid))
	if worst > 2*time.Second {
		t.Errorf("a key took %v to answer during the flood", worst)
	}
	d.keys("i")
	d.waitRow(flood, "✗ errored")
	d.waitRow(flood, "interrupted")
	d.keys("q")
	d.waitExit()
	d.checkRestored()
}

var newLinesRe = regexp.MustCompile(`↓ (\d+) new lines`)

func newLines(s string) int {
	m := newLinesRe.FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestCaseH18ScrolledUpWhileLinesArrive(t *testing.T) {
	d := startDash(t, 120, 35, nil, "--command",
		`i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); sleep 0.01; done`, "--spawn", "x")
	d.waitText("line 160")
	d.keys("g")
	d.waitFor("line 0 at the top", func(s string) bool { return d.logRowOf(s, "line 0") == 0 })
	if _, err := d.tm("send-keys", "-t", "dash", "-N", "100", "J"); err != nil {
		t.Fatal(err)
	}
	s := d.waitFor("line 100 at the top", func(s string) bool { return d.logRowOf(s, "line 100") == 0 })
	first := newLines(s)
	// Lines keep arriving: line 100 stays on the top row and the count of
	// new lines grows.
	for n := first; n < first+150; {
		s = d.screen()
		if r := d.logRowOf(s, "line 100"); r != 0 {
			t.Fatalf("line 100 moved to row %d:\n%s", r, s)
		}
		n = max(n, newLines(s))
		if strings.Contains(s, "✓ completed") {
			t.Fatal("the agent completed before enough lines arrived")
		}
	}
	d.keys("J")
	s = d.waitFor("line 101 at the top", func(s string) bool { return d.logRowOf(s, "line 101") == 0 })
	if !strings.Contains(s, "paused") {
		t.Fatalf("following resumed before the bottom:\n%s", s)
	}
	d.keys("G")
	d.waitText("following")
	s = d.waitFor("the newest lines at the bottom", func(s string) bool { return d.logRowOf(s, "line 101") < 0 })
	if newLines(s) >= 0 {
		t.Fatalf("the new-lines count stays while following:\n%s", s)
	}
}

func TestCaseH19TinyTerminal(t *testing.T) {
	d := startDash(t, 120, 35, nil, "--command", `while :; do echo tick; sleep 0.1; done`, "--spawn", "x")
	id := d.agentID("x")
	d.waitText("tick")
	for _, sz := range []struct {
		w, h int
		want string
	}{{1, 1, "…"}, {3, 2, "3x2"}, {10, 3, "have 10x3"}, {20, 5, "have 20x5"}, {39, 9, "terminal too small"}} {
		d.resize(sz.w, sz.h)
		d.waitFor(fmt.Sprintf("%dx%d", sz.w, sz.h), func(s string) bool {
			return strings.Contains(s, sz.want) && !strings.Contains(s, "tick")
		})
		if s := d.screen(); strings.Contains(s, "panic") {
			t.Fatalf("panic at %dx%d:\n%s", sz.w, sz.h, s)
		}
	}
	d.resize(120, 35)
	s := d.waitText("tick", "╭─ agents 1")
	d.checkFrame(s)
	d.waitRow(id, "running")
}
