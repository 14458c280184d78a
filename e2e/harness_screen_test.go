package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// tableRow returns the screen line holding agent id's table row.
func tableRow(screen, id string) string {
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, id[:8]+" "); i >= 0 && i < 12 {
			return l
		}
	}
	return ""
}

// needsYou reports whether a table row is marked as needing you: the
// glyph column before the cursor (SPEC §11).
func needsYou(row string) bool { return strings.HasPrefix(row, "│"+"◆") }

// waitNeedsYou waits until agent id's row is marked as needing you.
func (d *dash) waitNeedsYou(id string) string {
	d.t.Helper()
	return d.waitFor(fmt.Sprintf("row of %s marked as needing you", id[:8]), func(s string) bool {
		return needsYou(tableRow(s, id))
	})
}

// checkFrame checks that the panes' borders are where the layout puts
// them: nothing drawn by an agent moved or overwrote them.
func (d *dash) checkFrame(s string) {
	d.t.Helper()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) < d.h {
		d.t.Fatalf("screen has %d lines, want %d:\n%s", len(lines), d.h, s)
	}
	mainH := d.h - 3
	tableW := d.tableW(s)
	for i := 0; i < mainH; i++ {
		r := []rune(lines[i])
		if len(r) != d.w {
			d.t.Fatalf("line %d is %d cells, want %d:\n%s", i, len(r), d.w, s)
		}
		edges := []int{0, d.w - 1}
		if tableW > 0 {
			edges = append(edges, tableW-1, tableW)
		}
		for _, c := range edges {
			if !strings.ContainsRune("╭╮╰╯│", r[c]) {
				d.t.Fatalf("line %d column %d is %q, not a border:\n%s", i, c, r[c], s)
			}
		}
	}
}

// checkCellFrame checks that every line of s is exactly the pane's width
// counted as tmux counts (each code point's wcwidth; capture-pane prints a
// wide character once) and that the panes' right borders end their lines.
func (d *dash) checkCellFrame(s string) {
	d.t.Helper()
	c := runewidth.NewCondition()
	c.EastAsianWidth = false
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines[:min(len(lines), d.h)] {
		if i < d.h-3 && !strings.HasSuffix(l, "╮") && !strings.HasSuffix(l, "│") && !strings.HasSuffix(l, "╯") {
			d.t.Fatalf("line %d does not end with a border: %q\n%s", i, l, s)
		}
		if w := c.StringWidth(l); w > d.w || i < d.h-3 && w != d.w {
			d.t.Fatalf("line %d is %d cells, want %d: %q\n%s", i, w, d.w, l, s)
		}
	}
}

// logRows returns the text inside the log pane (wide layout), one string
// per row.
func (d *dash) logRows(s string) []string {
	tableW := d.tableW(s)
	var rows []string
	for i, l := range strings.Split(s, "\n") {
		if i == 0 || i >= d.h-4 {
			continue
		}
		r := []rune(l)
		if len(r) == d.w {
			rows = append(rows, string(r[tableW+1:d.w-1]))
		}
	}
	return rows
}

// logRowOf returns the log pane row showing text exactly (trimmed), or -1.
func (d *dash) logRowOf(s, text string) int {
	for i, r := range d.logRows(s) {
		if strings.TrimSpace(r) == text {
			return i
		}
	}
	return -1
}

// aboveStatus returns the lines of s above the status line.
func (d *dash) aboveStatus(s string) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:min(len(lines), d.h-2)], "\n")
}

// inLogPane reports whether cell (row, col) of screen s is inside the
// log pane of the wide layout.
func (d *dash) inLogPane(s string, row, col int) bool {
	tableW := d.tableW(s)
	return tableW > 0 && row >= 1 && row < d.h-4 && col > tableW && col < d.w-1
}

// inNowColumn reports whether cell (row, col) of screen s is in the NOW
// column of the table's rows (SPEC §7), which shows each agent's newest
// output line.
func (d *dash) inNowColumn(s string, row, col int) bool {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if j := strings.Index(l, " NOW "); j >= 0 {
			end := d.tableW(s)
			if end == 0 {
				end = d.w
			}
			return row > i && col > len([]rune(l[:j])) && col < end-1
		}
	}
	return false
}

// tableW returns the table's width on screen s beside the log pane (the
// table takes what its rows need: SPEC §7 "the split"), 0 when the panes
// are stacked or one is zoomed.
func (d *dash) tableW(s string) int {
	top := []rune(strings.SplitN(s, "\n", 2)[0])
	for i, r := range top {
		if r == '╮' && i < len(top)-1 {
			return i + 1
		}
	}
	return 0
}

// cell is one screen cell with the attributes that matter here.
type cell struct {
	r       rune
	fg      string // "" for the default colour
	reverse bool
}

var sgrRe = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// parseStyled turns `capture-pane -e` output into cells.
func parseStyled(s string) [][]cell {
	var screen [][]cell
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		var row []cell
		var cur cell
		for len(line) > 0 {
			if loc := sgrRe.FindStringSubmatchIndex(line); loc != nil && loc[0] == 0 {
				applySGR(&cur, line[loc[2]:loc[3]])
				line = line[loc[1]:]
				continue
			}
			r, size := utf8.DecodeRuneInString(line)
			c := cur
			c.r = r
			row = append(row, c)
			line = line[size:]
		}
		screen = append(screen, row)
	}
	return screen
}

func applySGR(c *cell, params string) {
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		switch p := ps[i]; {
		case p == "" || p == "0":
			c.fg, c.reverse = "", false
		case p == "7":
			c.reverse = true
		case p == "27":
			c.reverse = false
		case p == "39":
			c.fg = ""
		case p == "38" && i+2 < len(ps) && ps[i+1] == "5":
			c.fg = "5;" + ps[i+2]
			i += 2
		case p == "38" && i+4 < len(ps) && ps[i+1] == "2":
			c.fg = "2;" + strings.Join(ps[i+2:i+5], ";")
			i += 4
		case p == "48" && i+1 < len(ps) && ps[i+1] == "5":
			i += 2
		case p == "48" && i+1 < len(ps) && ps[i+1] == "2":
			i += 4
		default:
			if n, err := strconv.Atoi(p); err == nil && (n >= 30 && n <= 37 || n >= 90 && n <= 97) {
				c.fg = p
			}
		}
	}
}
