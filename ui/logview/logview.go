// Package logview is the log pane: a window onto a log that may hold
// millions of items, of which it fetches and renders only the ones on
// screen. It is shaped like the bubbles widgets (Model, KeyMap, Styles,
// SetSize, Update, View).
//
// Positions are absolute item numbers, which never change when old items
// are trimmed from the front of the log. In follow mode the pane shows the
// bottom of the log. Scrolling up pauses following: the top row then stays
// on the same item as items arrive or are trimmed, and NewItems counts what
// arrived since the pause. Following resumes when the view reaches the
// bottom again.
package logview

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/theme"
)

// Item is one entry of a log: a display line, or a transcript entry whose
// Text may span several lines separated by "\n". Text holds printable text
// and SGR sequences.
type Item struct {
	Text   string
	Stderr bool // drawn in the stderr style when Text has no style of its own
}

// Page is a range of a log's items.
type Page struct {
	First   int64  // absolute number of the oldest item held
	Total   int64  // one past the absolute number of the newest item
	Items   []Item // the items asked for that are held, from max(from, First)
	Evicted bool   // the items are not in memory; the owner must reload them
}

// Source gives the items of one log. Page must copy at most n items and
// cost time independent of the log's size.
type Source interface {
	Page(from int64, n int) (Page, error)
}

// KeyMap is the pane's scrolling bindings.
type KeyMap struct {
	LineUp, LineDown, HalfUp, HalfDown key.Binding
	PageUp, PageDown, Top, Bottom      key.Binding
	Follow, Wrap                       key.Binding
}

// DefaultKeyMap returns the pane's bindings from keymap.DefaultKeyMap.
func DefaultKeyMap() KeyMap {
	k := keymap.DefaultKeyMap()
	return KeyMap{k.LineUp, k.LineDown, k.HalfUp, k.HalfDown, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Follow, k.Wrap}
}

// Styles are the pane's styles.
type Styles struct {
	Stderr, Match, MatchActive lipgloss.Style
	// MatchMark and MatchActiveMark replace Match and MatchActive when
	// NoColor is set: attributes only, which NO_COLOR allows.
	MatchMark, MatchActiveMark theme.Mark
	// NoColor strips the SGR of log lines too (NO_COLOR).
	NoColor bool
}

// DefaultStyles returns the pane's styles taken from t.
func DefaultStyles(t theme.Styles) Styles {
	return Styles{
		Stderr: t.Stderr, Match: t.Match, MatchActive: t.MatchActive,
		MatchMark: t.MatchMark, MatchActiveMark: t.MatchActiveMark, NoColor: t.NoColor,
	}
}

// Pos is a position in the log: an item and a row within it (rows differ
// from lines when wrapping or for multi-line transcript entries).
type Pos struct {
	Item int64
	Row  int
}

// State is the part of a Model worth keeping per log, to come back to the
// same place.
type State struct {
	Follow   bool
	Top      Pos
	PausedAt int64 // Total when following was paused
}

// Model is the log pane.
type Model struct {
	KeyMap KeyMap
	Styles Styles

	src           Source
	width, height int
	wrap          bool
	focused       bool

	st           State
	first, total int64
	rows         []string // exactly height rows of exactly width cells
	evicted      bool
	err          error

	search searchState
	cache  map[int64]cached
}

type cached struct {
	text string
	rows []string
}

// New returns a pane in follow mode with no source.
func New(s Styles) Model {
	return Model{KeyMap: DefaultKeyMap(), Styles: s, st: State{Follow: true}, focused: true, cache: map[int64]cached{}}
}

// SetSource shows src, at the position st (the zero State means the bottom
// in follow mode is not implied: pass State{Follow: true} for that).
func (m *Model) SetSource(src Source, st State) {
	m.src = src
	m.st = st
	m.first, m.total = 0, 0
	m.search.matches, m.search.current = nil, -1
	m.cache = map[int64]cached{}
	m.Refresh()
}

// State returns the pane's position, to restore later with SetSource.
func (m Model) State() State { return m.st }

// SetSize sets the pane's size in cells and renders again.
func (m *Model) SetSize(w, h int) {
	if w != m.width {
		m.cache = map[int64]cached{}
	}
	m.width, m.height = max(w, 0), max(h, 0)
	m.Refresh()
}

// Width returns the pane's width in cells.
func (m Model) Width() int { return m.width }

// Height returns the pane's height in rows.
func (m Model) Height() int { return m.height }

// Focus lets Update act on keys.
func (m *Model) Focus() { m.focused = true }

// Blur makes Update ignore keys.
func (m *Model) Blur() { m.focused = false }

// Following reports whether the pane is in follow mode.
func (m Model) Following() bool { return m.st.Follow }

// Wrap reports whether long lines wrap.
func (m Model) Wrap() bool { return m.wrap }

// NewItems returns how many items arrived since following was paused; 0
// while following.
func (m Model) NewItems() int64 {
	if m.st.Follow {
		return 0
	}
	return max(m.total-m.st.PausedAt, 0)
}

// Bounds returns the absolute number of the oldest held item and one past
// the newest, as of the last render.
func (m Model) Bounds() (first, total int64) { return m.first, m.total }

// Top returns the position of the top row, as of the last render.
func (m Model) Top() Pos { return m.st.Top }

// Evicted reports whether the source said its items are not in memory.
func (m Model) Evicted() bool { return m.evicted }

// Err returns the source's last error.
func (m Model) Err() error { return m.err }

// Update scrolls for the pane's keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || !m.focused {
		return m, nil
	}
	half := max(m.height/2, 1)
	page := max(m.height-1, 1)
	switch km := m.KeyMap; {
	case key.Matches(k, km.LineUp):
		m.ScrollUp(1)
	case key.Matches(k, km.LineDown):
		m.ScrollDown(1)
	case key.Matches(k, km.HalfUp):
		m.ScrollUp(half)
	case key.Matches(k, km.HalfDown):
		m.ScrollDown(half)
	case key.Matches(k, km.PageUp):
		m.ScrollUp(page)
	case key.Matches(k, km.PageDown):
		m.ScrollDown(page)
	case key.Matches(k, km.Top):
		m.GotoTop()
	case key.Matches(k, km.Bottom):
		m.GotoBottom()
	case key.Matches(k, km.Follow):
		m.ToggleFollow()
	case key.Matches(k, km.Wrap):
		m.SetWrap(!m.wrap)
	}
	return m, nil
}

// View returns exactly Height rows of exactly Width cells.
func (m Model) View() string { return strings.Join(m.rows, "\n") }

// pause leaves follow mode at the current top row.
func (m *Model) pause() {
	if m.st.Follow {
		m.st.Follow = false
		m.st.PausedAt = m.total
	}
}

// ScrollUp moves the view n rows towards the start of the log, pausing
// follow mode when it moves.
func (m *Model) ScrollUp(n int) {
	if m.src == nil || n <= 0 {
		return
	}
	p := m.back(m.st.Top, n)
	if p == m.st.Top {
		return
	}
	m.pause()
	m.st.Top = p
	m.Refresh()
}

// ScrollDown moves the view n rows towards the end of the log; reaching the
// bottom resumes follow mode.
func (m *Model) ScrollDown(n int) {
	if m.src == nil || n <= 0 || m.st.Follow {
		return
	}
	p := m.forward(m.st.Top, n)
	if m.rowsFrom(p, m.height+1) <= m.height {
		m.st.Follow = true
	} else {
		m.st.Top = p
	}
	m.Refresh()
}

// GotoTop shows the oldest held item and pauses follow mode.
func (m *Model) GotoTop() {
	if m.src == nil {
		return
	}
	m.pause()
	m.st.Top = Pos{m.first, 0}
	m.Refresh()
}

// GotoBottom shows the newest items and resumes follow mode.
func (m *Model) GotoBottom() {
	m.st.Follow = true
	m.Refresh()
}

// ToggleFollow pauses follow mode where the view is, or resumes it at the
// bottom.
func (m *Model) ToggleFollow() {
	if m.st.Follow {
		m.pause()
		m.Refresh()
		return
	}
	m.GotoBottom()
}

// SetWrap turns wrapping of long lines on or off.
func (m *Model) SetWrap(on bool) {
	if on == m.wrap {
		return
	}
	m.wrap = on
	m.st.Top.Row = 0
	m.cache = map[int64]cached{}
	m.Refresh()
}

// GotoItem pauses follow mode and shows item abs near the top third of the
// pane.
func (m *Model) GotoItem(abs int64) {
	if m.src == nil {
		return
	}
	m.pause()
	m.st.Top = m.back(Pos{abs, 0}, m.height/3)
	m.Refresh()
}
