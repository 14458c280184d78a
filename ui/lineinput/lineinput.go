// Package lineinput is a one-line text input shaped like the bubbles
// widgets: a Model with a KeyMap, Styles, Focus/Blur, SetWidth and
// Update/View. It edits a message for spawn, send or search.
//
// Pasted or preset text keeps its line breaks and tabs in the value (an
// agent task may span lines; Makefiles, diffs and Go code need their tabs)
// and shows them as "↵" and "⇥", one cell each. Code points terminals
// disagree on the width of stay in the value but are not drawn. The view
// scrolls horizontally to keep the cursor visible and never exceeds its
// width.
package lineinput

import (
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/mattn/go-runewidth"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/theme"
)

// KeyMap is the input's key bindings.
type KeyMap = keymap.Input

// DefaultKeyMap returns the input's default bindings.
func DefaultKeyMap() KeyMap { return keymap.DefaultInput() }

// Styles are the input's styles.
type Styles struct {
	Prompt, Text, Placeholder, Cursor lipgloss.Style
	// NoColor draws the cursor as a visible "▏" instead of a reversed cell,
	// which renders as nothing without attributes.
	NoColor bool
}

// DefaultStyles returns the input's styles taken from t.
func DefaultStyles(t theme.Styles) Styles {
	return Styles{Prompt: t.Prompt, Text: t.Text, Placeholder: t.Muted, Cursor: t.Cursor, NoColor: t.NoColor}
}

// Model is a one-line input.
type Model struct {
	KeyMap KeyMap
	// Styles are shared by the copies of the Model (New makes them): read
	// only.
	Styles      *Styles
	Prompt      string // drawn before the text, e.g. "spawn › "
	Placeholder string // drawn when the value is empty

	value   []rune
	cursor  int // index into value
	width   int // cells for prompt and text together
	focused bool
}

// New returns an empty, blurred input.
func New(s Styles) Model { return Model{KeyMap: DefaultKeyMap(), Styles: &s} }

// Value returns the text.
func (m Model) Value() string { return string(m.value) }

// SetValue replaces the text and puts the cursor at its end. Tabs and line
// breaks are kept, so Value returns s unless s held "\r" (read as a line
// break) or another control character (dropped).
func (m *Model) SetValue(s string) {
	m.value = []rune(sanitize(s))
	m.cursor = len(m.value)
}

// Reset clears the text.
func (m *Model) Reset() { m.value, m.cursor = nil, 0 }

// Focus gives the input the keyboard.
func (m *Model) Focus() { m.focused = true }

// Blur takes the keyboard away; Update then ignores keys.
func (m *Model) Blur() { m.focused = false }

// Focused reports whether the input has the keyboard.
func (m Model) Focused() bool { return m.focused }

// SetWidth sets the width of the whole input, prompt included, in cells.
func (m *Model) SetWidth(w int) { m.width = max(w, 0) }

// Width returns the width set with SetWidth.
func (m Model) Width() int { return m.width }

// Update edits the text for a key or a paste (tea.PasteMsg, its line
// breaks and tabs kept) when focused. Submit and Cancel are left to the
// owner, which matches them before calling Update.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if !m.focused {
		return m, nil
	}
	if p, ok := msg.(tea.PasteMsg); ok {
		m.insert([]rune(sanitize(p.Content)))
		return m, nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	km := m.KeyMap
	switch {
	case key.Matches(k, km.Left):
		m.cursor = m.prevStop()
	case key.Matches(k, km.Right):
		m.cursor = m.nextStop()
	case key.Matches(k, km.WordLeft):
		m.cursor = m.wordStart()
	case key.Matches(k, km.WordRight):
		m.cursor = m.wordEnd()
	case key.Matches(k, km.Home):
		m.cursor = 0
	case key.Matches(k, km.End):
		m.cursor = len(m.value)
	case key.Matches(k, km.DeleteBack):
		start := m.prevStop()
		m.value = append(m.value[:start], m.value[m.cursor:]...)
		m.cursor = start
	case key.Matches(k, km.DeleteForward):
		m.value = append(m.value[:m.cursor], m.value[m.nextStop():]...)
	case key.Matches(k, km.DeleteWordBack):
		start := m.wordStart()
		m.value = append(m.value[:start], m.value[m.cursor:]...)
		m.cursor = start
	case key.Matches(k, km.DeleteToStart):
		m.value = append([]rune(nil), m.value[m.cursor:]...)
		m.cursor = 0
	case key.Matches(k, km.DeleteToEnd):
		m.value = m.value[:m.cursor]
	case k.Code == tea.KeyTab && k.Mod == 0:
		m.insert([]rune{'\t'}) // as a paste keeps it; nothing else uses tab here
	case k.Text != "" && k.Mod&^(tea.ModShift|tea.ModCapsLock) == 0:
		m.insert([]rune(sanitize(k.Text))) // typed text; a ctrl or alt key types nothing
	}
	return m, nil
}

func (m *Model) insert(r []rune) {
	v := make([]rune, 0, len(m.value)+len(r))
	v = append(v, m.value[:m.cursor]...)
	v = append(v, r...)
	v = append(v, m.value[m.cursor:]...)
	m.value = v
	m.cursor += len(r)
}

// prevStop returns where the cursor goes one character left: past every
// rune drawn in no cell (a combining mark, or a code point View drops) to
// the rune they are drawn with, so the cursor never seems stuck.
func (m Model) prevStop() int {
	i := max(m.cursor-1, 0)
	for i > 0 && invisible(m.value[i]) {
		i--
	}
	return i
}

// nextStop returns where the cursor goes one character right: past the
// runes drawn with the one under the cursor.
func (m Model) nextStop() int {
	i := min(m.cursor+1, len(m.value))
	for i < len(m.value) && invisible(m.value[i]) {
		i++
	}
	return i
}

func (m Model) wordStart() int {
	i := m.cursor
	for i > 0 && unicode.IsSpace(m.value[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(m.value[i-1]) {
		i--
	}
	return i
}

func (m Model) wordEnd() int {
	i := m.cursor
	for i < len(m.value) && unicode.IsSpace(m.value[i]) {
		i++
	}
	for i < len(m.value) && !unicode.IsSpace(m.value[i]) {
		i++
	}
	return i
}

// sanitize keeps printable characters, line breaks and tabs (View draws
// the last two as markers); "\r\n" and "\r" become "\n" and every other
// control character is dropped, so nothing typed or pasted can move the
// terminal's cursor.
func sanitize(s string) string {
	var b strings.Builder
	s = strings.ReplaceAll(s, "\r\n", "\n")
	for _, r := range s {
		switch {
		case r == '\n', r == '\t':
			b.WriteRune(r)
		case r == '\r':
			b.WriteByte('\n')
		case unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// glyph returns how rune r is drawn and its width in cells. A line break
// is drawn "↵" and a tab "⇥", one cell each whatever the column (neither is
// East Asian Ambiguous), since a tab stop means nothing in a scrolled line.
// The code points terminals disagree on the width of (variation selectors,
// ZWJ, skin tones; see termtext.DropAmbiguous) are drawn as nothing; they
// stay in the value, which is sent as typed.
func glyph(r rune) (string, int) {
	switch r {
	case '\n':
		return "↵", 1
	case '\t':
		return "⇥", 1
	}
	s := string(r)
	if termtext.DropAmbiguous(s) == "" {
		return "", 0
	}
	return s, runewidth.RuneWidth(r)
}

// invisible reports whether rune r takes no cell of its own: it is drawn
// with the rune before it, or not at all.
func invisible(r rune) bool {
	_, w := glyph(r)
	return w == 0 && r != '\n'
}

// cell is one drawn cell group of the text.
type cell struct {
	s      string
	w      int
	cursor bool
}

// View draws the prompt and the part of the text around the cursor, at
// most Width cells wide (unbounded when the width is not set).
func (m Model) View() string {
	prompt := m.Prompt
	avail := m.width - lipgloss.Width(prompt)
	if m.width > 0 && avail < 2 {
		// Not even room for one character: show what fits of the prompt.
		return m.Styles.Prompt.Render(truncate(prompt, m.width))
	}
	if len(m.value) == 0 {
		return m.Styles.Prompt.Render(prompt) + m.emptyView(avail)
	}
	cells := m.cells()
	cur := 0
	for i, c := range cells {
		if c.cursor {
			cur = i
		}
	}
	// Choose the first visible cell so that the cursor cell fits.
	start := 0
	if m.width > 0 {
		used := 0
		for i := cur; i >= 0; i-- {
			if used+cells[i].w > avail {
				start = i + 1
				break
			}
			used += cells[i].w
		}
	}
	var b strings.Builder
	b.WriteString(m.Styles.Prompt.Render(prompt))
	used := 0
	for _, c := range cells[start:] {
		if m.width > 0 && used+c.w > avail {
			break
		}
		switch {
		case c.cursor && !m.Styles.NoColor:
			b.WriteString(m.Styles.Cursor.Render(c.s))
		case c.cursor:
			b.WriteString(c.s)
		default:
			b.WriteString(m.Styles.Text.Render(c.s))
		}
		used += c.w
	}
	return b.String()
}

// cells returns the text as cells with the cursor marked: without colour
// the cursor is an extra "▏" cell before the character under it, with
// colour it is that character (or a space past the end) drawn reversed.
func (m Model) cells() []cell {
	out := make([]cell, 0, len(m.value)+2)
	for i := 0; i <= len(m.value); i++ {
		g, w := " ", 1
		if i < len(m.value) {
			g, w = glyph(m.value[i])
		}
		atCursor := i == m.cursor && m.focused
		switch {
		case atCursor && m.Styles.NoColor:
			out = append(out, cell{"▏", 1, true})
		case atCursor:
			out = append(out, cell{g, w, true})
			continue
		}
		if i < len(m.value) {
			out = append(out, cell{g, w, false})
		}
	}
	return out
}

func (m Model) emptyView(avail int) string {
	cur := m.Styles.Cursor.Render(" ")
	if m.Styles.NoColor {
		cur = "▏"
	}
	if !m.focused {
		cur = ""
	}
	ph := m.Placeholder
	if m.width > 0 {
		ph = truncate(ph, avail-lipgloss.Width(cur))
	}
	return cur + m.Styles.Placeholder.Render(ph)
}

func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return runewidth.Truncate(s, w, "")
}
