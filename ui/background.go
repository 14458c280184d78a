package ui

import (
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/agentsearch"
	"github.com/subdash/subdash/ui/agenttable"
	"github.com/subdash/subdash/ui/lineinput"
	"github.com/subdash/subdash/ui/logview"
)

// The terminal's background (SPEC §7: colours adapt to light and dark
// terminals). Init asks the terminal for it (tea.RequestBackgroundColor);
// until it answers, the dashboard draws for the background the
// environment suggests (theme.Detect: COLORFGBG, else dark), and a
// terminal that never answers keeps that. The answer, a
// tea.BackgroundColorMsg, builds the styles again when it says otherwise.

// onBackground takes the background the terminal reported: dark or
// light. Without colour (NO_COLOR) there is nothing to adapt, and a
// background the user chose (theme.Options.Fixed) stays.
func (m *Model) onBackground(dark bool) {
	if m.styles.NoColor || m.styles.Options.Fixed || m.styles.Options.Dark == dark {
		return
	}
	o := m.styles.Options
	o.Dark = dark
	m.setStyles(theme.New(o))
}

// setStyles replaces the styles of the dashboard and of every widget.
// What was drawn with the old ones goes: the help lines cached, the log
// pane's rendered rows, and a transcript's entries, which its pages hold
// drawn (fetchPage), so the pane asks for them again.
func (m *Model) setStyles(st theme.Styles) {
	m.styles = &st
	m.table.SetStyles(agenttable.DefaultStyles(st))
	m.ink = inksOf(st, m.table.Styles.NeedsYou)
	m.log.SetStyles(logview.DefaultStyles(st))
	for i := range m.tiles.shown {
		m.tiles.shown[i].log.SetStyles(logview.DefaultStyles(st))
	}
	in := lineinput.DefaultStyles(st)
	m.input.Styles = &in
	h := newHelp(st)
	h.SetWidth(m.help.Width())
	m.help = h
	if m.across.ready {
		rs := agentsearch.DefaultStyles(st)
		m.across.results.Styles = &rs
	}
	if f := m.view.frames; f != nil {
		f.mu.Lock()
		f.help = nil
		f.mu.Unlock()
	}
	if m.shown.agent != "" && m.shown.transcript {
		m.log.SetLog(m.log.State())
	}
}
