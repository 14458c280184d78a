package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/internal/cells"
)

// A note is something the message line has to say when no operation
// outcome is shown: a failure of subdash itself (a log file or the journal
// that cannot be written, the control socket, the log pane's read), a
// warning about the configuration, or a fact worth knowing. Notes never
// hide each other (SPEC §7): the message line shows the most important one
// and how many more there are; the help overlay lists them all.
type note struct {
	level level
	text  string
}

// hostErrMsg is an error of the host's other parts (Options.HostErrors).
type hostErrMsg struct{ err error }

// waitHostErr waits for the next error on ch; nil when there is no channel.
func waitHostErr(ch <-chan error) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		err, ok := <-ch
		if !ok {
			return nil
		}
		return hostErrMsg{err}
	}
}

// onHostErr keeps a host error as a note and waits for the next one.
func (m *Model) onHostErr(msg hostErrMsg) tea.Cmd {
	if msg.err != nil {
		m.hostErrs = append(m.hostErrs, msg.err.Error())
	}
	return waitHostErr(m.opts.HostErrors)
}

// notes returns every current note, most important first: a viewer's
// link that is down, failures of agents' logs and the journal, host errors, the log pane's read error,
// configuration warnings, then notes.
func (m Model) notes() []note {
	var out []note
	seen := map[string]bool{}
	add := func(level level, text string) {
		if text != "" && !seen[text] {
			seen[text] = true
			out = append(out, note{level, text})
		}
	}
	add(levelWarn, m.linkDown)
	// One note per failure, naming its agents: a journal that cannot be
	// written (a full disk) is every agent's failure, not a note per
	// agent.
	var failures []string
	failing := map[string][]string{}
	for _, a := range m.agents {
		if a.Failure != "" {
			if failing[a.Failure] == nil {
				failures = append(failures, a.Failure)
			}
			failing[a.Failure] = append(failing[a.Failure], m.label(a.AgentID))
		}
	}
	for _, f := range failures {
		add(levelError, agentList(failing[f])+": "+f)
	}
	for _, e := range m.hostErrs {
		add(levelError, e)
	}
	if err := m.log.Err(); err != nil {
		add(levelError, "log pane: "+err.Error())
	}
	for _, s := range m.cfg.Warnings {
		add(levelWarn, s)
	}
	for _, s := range m.cfg.Notes {
		if fewer, ok := proto.RestoredNoteLess(s, m.forgotten); ok {
			s = fewer // "" once every agent it counted is forgotten
		}
		add(levelInfo, s)
	}
	return out
}

// noteSymbol is the symbol a note of level starts with.
func noteSymbol(level level) string {
	switch level {
	case levelError:
		return "✗ "
	case levelWarn:
		return "⚠ "
	}
	return "ℹ "
}

// renderNote styles one note's text (already one line) for its level.
func (m Model) renderNote(n note, text string) string {
	switch n.level {
	case levelError:
		return m.styles.Error.Render(text)
	case levelWarn:
		return m.styles.Warning.Render(text)
	}
	return m.styles.Note.Render(text)
}

// notesLine is the message line when no operation outcome is shown: the
// notes that fit whole, most important first, and how many more there are
// (listed by the help overlay); the first is cut when it alone is too wide.
func (m Model) notesLine(w int) string {
	ns := m.notes()
	if len(ns) == 0 {
		return cells.Fit("", w)
	}
	moreText := func(n int) string {
		if n == 0 {
			return ""
		}
		return fmt.Sprintf(" · %d more (? lists them)", n)
	}
	texts := make([]string, len(ns))
	for i, n := range ns {
		texts[i] = noteSymbol(n.level) + termtext.OneLine(n.text, 0)
	}
	// k notes fit whole when their widths, the gaps and the count of the
	// rest do.
	k, used := 0, 0
	for k < len(ns) {
		add := cells.Width(texts[k])
		if k > 0 {
			add += 2
		}
		if used+add+cells.Width(moreText(len(ns)-k-1)) > w {
			break
		}
		used += add
		k++
	}
	var b strings.Builder
	if k == 0 { // the most important one, cut
		more := moreText(len(ns) - 1)
		t, _ := cells.Cut(texts[0], max(w-cells.Width(more), 0))
		b.WriteString(m.renderNote(ns[0], t))
		b.WriteString(m.styles.Muted.Render(more))
		return cells.Fit(b.String(), w)
	}
	for i := 0; i < k; i++ {
		if i > 0 {
			b.WriteString("  ")
		}
		b.WriteString(m.renderNote(ns[i], texts[i]))
	}
	b.WriteString(m.styles.Muted.Render(moreText(len(ns) - k)))
	return cells.Fit(b.String(), w)
}

// notesHelp are the help overlay's lines listing every note in full,
// wrapped to w cells; none when there is no note.
func (m Model) notesHelp(w int) []string {
	ns := m.notes()
	if len(ns) == 0 {
		return nil
	}
	lines := []string{m.styles.Title.Render("Notes")}
	for _, n := range ns {
		rows, _ := cells.Wrap(noteSymbol(n.level)+termtext.OneLine(n.text, 0), max(w-4, 1), 0)
		for i, r := range rows {
			prefix := "  "
			if i > 0 {
				prefix = "    "
			}
			lines = append(lines, prefix+m.renderNote(n, r.Text))
		}
	}
	return append(lines, "")
}

// agentList names agents for a note: up to three, then how many more
// ("3fa2c1d0, 7b9e4c21, c0ffee42 and 8 more agents").
func agentList(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more agents", strings.Join(names[:3], ", "), len(names)-3)
}
