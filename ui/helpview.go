package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
	"github.com/subdash/subdash/ui/agenttable"
	"github.com/subdash/subdash/ui/internal/cells"
)

// helpGroups are the sections of the full help, generated from the key
// maps: the dashboard's groups and the input line's editing keys.
func (m Model) helpGroups() []keymap.Group {
	groups := m.keys.Groups()
	var in []key.Binding
	for _, col := range m.input.KeyMap.FullHelp() {
		in = append(in, col...)
	}
	return append(groups, keymap.Group{Title: "Input line", Bindings: in})
}

// helpView draws the full help in a box of w×h cells: the bindings in as
// many columns as fit after every current note, a legend of the status
// symbols and the control socket. It scrolls when taller than the box.
func (m Model) helpView(w, h int) []string {
	groups := m.helpGroups()
	keyW, descW := 0, 0
	for _, g := range groups {
		for _, b := range g.Bindings {
			keyW = max(keyW, cells.Width(b.Help().Key))
			descW = max(descW, cells.Width(b.Help().Desc))
		}
	}
	colW := 2 + keyW + 2 + descW
	inner := w - 4 // border and one space of padding each side
	ncol := max(1, min(len(groups), (inner+2)/(colW+2)))
	colW = min(colW, inner)

	blocks := make([][]string, len(groups))
	for i, g := range groups {
		b := []string{m.styles.Title.Render(g.Title)}
		for _, k := range g.Bindings {
			h := k.Help()
			b = append(b, "  "+m.styles.HelpKey.Render(cells.Fit(h.Key, keyW))+"  "+m.styles.HelpDesc.Render(h.Desc))
		}
		blocks[i] = append(b, "")
	}
	cols := balance(blocks, ncol)
	height := 0
	for _, col := range cols {
		height = max(height, len(col))
	}
	lines := m.notesHelp(inner) // every note in full, first: they may be why help was opened
	for i := 0; i < height; i++ {
		var row strings.Builder
		for j, col := range cols {
			cell := ""
			if i < len(col) {
				cell = col[i]
			}
			if j > 0 {
				row.WriteString("  ")
			}
			row.WriteString(cells.Fit(cell, colW))
		}
		lines = append(lines, row.String())
	}
	lines = append(lines, m.legend(inner)...)
	lines = append(lines, m.styles.Title.Render("Mouse"))
	for _, l := range strings.Split(ansi.Wordwrap(m.mouseHelp(), max(inner-2, 10), ""), "\n") {
		lines = append(lines, "  "+m.styles.HelpDesc.Render(l))
	}
	lines = append(lines, "")
	if p := m.opts.SocketPath; p != "" {
		lines = append(lines, m.styles.Muted.Render("control socket: "+termtext.OneLine(p, 0)))
	}
	if !m.multi() {
		lines = append(lines, m.styles.Muted.Render("agent command: "+termtext.OneLine(m.cfg.Command, 0)))
	}
	for _, h := range m.hosts {
		lines = append(lines, m.styles.Muted.Render("agent command of "+termtext.OneLine(h.Name+": "+h.Command, 0)))
	}
	if l := m.storageLine(); l != "" {
		lines = append(lines, m.styles.Muted.Render(l))
	}

	body := h - 2
	top := max(min(m.helpTop, len(lines)-body), 0)
	shown := lines[top:min(len(lines), top+body)]
	for i, l := range shown {
		shown[i] = " " + cells.Fit(l, w-4) + " "
	}
	footer := ""
	if len(lines) > body {
		footer = "j/k scroll"
	}
	return m.box("help", footer, strings.Join(shown, "\n"), w, h)
}

// legend is the help's symbol sections in inner cells: every glyph the
// screen can show and what it means, the words wrapped under themselves.
// The table's and the status line's come from agenttable.Legend, the
// log pane's from transcript.Marks, the lines' from this package.
func (m Model) legend(inner int) []string {
	var log []agenttable.LegendEntry
	for _, mk := range transcript.Marks() {
		log = append(log, agenttable.LegendEntry{Glyph: mk.Glyph, Words: mk.Words})
	}
	lines := m.legendSection(inner, "Symbols: the table and the status line", agenttable.Legend(m.keys))
	lines = append(lines, m.legendSection(inner, "Symbols: the log pane's transcript ("+m.keys.Transcript.Help().Key+": raw output)", log)...)
	return append(lines, m.legendSection(inner, "Symbols: the message and input lines", lineLegend())...)
}

// lineLegend explains the glyphs of the message line (messageLine, the
// notes' noteSymbol) and of the input line (lineinput's glyphs).
func lineLegend() []agenttable.LegendEntry {
	return []agenttable.LegendEntry{
		{Glyph: "?", Words: "a question: its keys are on the line"},
		{Glyph: "✓", Words: "an operation done, and what it did"},
		{Glyph: strings.Join([]string{noteSymbol(levelInfo), noteSymbol(levelWarn), noteSymbol(levelError)}, ""), Words: "a note, a warning, an error: the most important in view, every current one listed at the top of this help"},
		{Glyph: "↵ ⇥", Words: "a line break and a tab in what you type or paste"},
	}
}

// legendSection is one titled section of the legend.
func (m Model) legendSection(inner int, title string, entries []agenttable.LegendEntry) []string {
	glyphW := 0
	for _, e := range entries {
		glyphW = max(glyphW, cells.Width(e.Glyph))
	}
	lines := []string{m.styles.Title.Render(title)}
	indent := strings.Repeat(" ", 2+glyphW+2)
	for _, e := range entries {
		words := strings.Split(ansi.Wordwrap(e.Words, max(inner-len(indent), 10), ""), "\n")
		lines = append(lines, "  "+m.styles.HelpKey.Render(cells.Fit(e.Glyph, glyphW))+"  "+m.styles.HelpDesc.Render(words[0]))
		for _, w := range words[1:] {
			lines = append(lines, indent+m.styles.HelpDesc.Render(w))
		}
	}
	return append(lines, "")
}

// mouseHelp says in one line what the mouse does here (mouse.go), or
// that it is off.
func (m Model) mouseHelp() string {
	if m.opts.NoMouse {
		return "off (--mouse=false, or mouse = false in the config file): a drag selects text as in any terminal"
	}
	return "a click selects a row (on a fold's +N or a parent's tree glyphs it unfolds or folds) · the wheel moves the selection over the table and scrolls the log pane · a drag of the border between the panes moves it · shift+drag selects text in most terminals (--mouse=false, or mouse = false in the config file, turns the mouse off)"
}

// balance splits blocks, in order, into at most n columns so that the
// tallest column is as short as possible.
func balance(blocks [][]string, n int) [][]string {
	n = max(min(n, len(blocks)), 1)
	// best[i][k]: the least tallest column for blocks[i:] in k columns.
	heights := make([]int, len(blocks)+1)
	for i := len(blocks) - 1; i >= 0; i-- {
		heights[i] = heights[i+1] + len(blocks[i])
	}
	memo := map[[2]int]int{}
	var best func(i, k int) int
	best = func(i, k int) int {
		if k == 1 || i == len(blocks) {
			return heights[i]
		}
		key := [2]int{i, k}
		if v, ok := memo[key]; ok {
			return v
		}
		v := heights[i]
		for j := i + 1; j <= len(blocks); j++ {
			v = min(v, max(heights[i]-heights[j], best(j, k-1)))
		}
		memo[key] = v
		return v
	}
	limit := best(0, n)
	cols := make([][]string, 0, n)
	var col []string
	for _, b := range blocks {
		if len(col) > 0 && len(col)+len(b) > limit && len(cols) < n-1 {
			cols = append(cols, col)
			col = nil
		}
		col = append(col, b...)
	}
	return append(cols, col)
}
