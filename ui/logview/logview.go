// Package logview is the log pane: a window onto a log that may hold
// millions of items, of which it holds and renders only the ones on screen
// and about a screen either side. It is shaped like the bubbles widgets
// (Model, KeyMap, Styles, SetSize, Update, View).
//
// The pane never reads the log itself: it says which items it needs
// (Request) and its owner fetches them in a command, off the Update
// goroutine, and hands the answer back (SetPage). Between two pages the
// owner tells it what changed from the events it gets (SetBounds, Changed),
// so a paused view costs no fetch while lines arrive below it, and a
// following one costs one fetch per change, one in flight at most.
//
// Positions are absolute item numbers, which never change when old items
// are trimmed from the front of the log. In follow mode the pane shows the
// bottom of the log. Scrolling up pauses following: the top row then stays
// on the same item as items arrive or are trimmed, and NewItems counts what
// arrived since the pause. Following resumes when the view reaches the
// bottom again. A scroll past what the pane holds moves as far as it holds
// and finishes when the page with the rest arrives.
package logview

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

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

// Page is a range of a log's items, fetched for a Request.
type Page struct {
	First int64  // absolute number of the oldest item the log holds
	Total int64  // one past the absolute number of the newest item
	From  int64  // absolute number of Items[0]: max(the request's From, First), or Total-len(Items) for the last items
	Items []Item // the items asked for that the log holds
}

// Request is a range of items the pane needs and does not hold. The owner
// fetches it in a command and passes the Request back to SetPage with the
// answer.
type Request struct {
	From int64 // absolute number of the first item; < 0 asks for the last N items
	N    int   // how many items, ≥ 1
	gen  int   // the log it is for (SetLog)
	at   int   // the number of Changed calls when it was made
}

// KeyMap is the pane's bindings: scrolling, follow and wrap, and moving
// between the search's matches. It implements help.KeyMap; the dashboard
// gives the pane every key that matches one of them (keymap.Matches).
type KeyMap struct {
	LineUp, LineDown, HalfUp, HalfDown key.Binding
	PageUp, PageDown, Top, Bottom      key.Binding
	Follow, Wrap                       key.Binding
	NextMatch, PrevMatch, ClearMatch   key.Binding
}

// DefaultKeyMap returns the pane's bindings from keymap.DefaultKeyMap,
// where every key of the dashboard is declared.
func DefaultKeyMap() KeyMap { return KeyMapOf(keymap.DefaultKeyMap()) }

// KeyMapOf returns the pane's bindings from the dashboard's k (the
// defaults, or those the config file rebound).
func KeyMapOf(k keymap.KeyMap) KeyMap {
	return KeyMap{k.LineUp, k.LineDown, k.HalfUp, k.HalfDown, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Follow, k.Wrap,
		k.NextMatch, k.PrevMatch, k.ClearMatch}
}

// ShortHelp returns the bindings the pane's one-line help would show.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.LineUp, k.LineDown, k.Top, k.Bottom, k.NextMatch, k.PrevMatch}
}

// FullHelp returns every binding of the pane: scrolling, then the view,
// then the search.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.LineUp, k.LineDown, k.HalfUp, k.HalfDown, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Follow, k.Wrap},
		{k.NextMatch, k.PrevMatch, k.ClearMatch},
	}
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
	// Styles are shared by the copies of the Model (New makes them): read
	// only.
	Styles *Styles

	open          bool // a log is shown (SetLog)
	width, height int
	wrap          bool
	focused       bool

	st           State
	first, total int64    // the log's bounds, from the last page or SetBounds
	rows         []string // exactly height rows of exactly width cells
	move         int      // rows still to scroll once their items arrive: < 0 up, > 0 down

	// What the pane holds and asks for.
	gen      int  // the log shown; increases with every SetLog
	changes  int  // Changed calls since SetLog
	inFlight bool // a Request of gen is out
	fetched  bool // a page of gen arrived
	held     Page // the items held: held.From up to held.From+len(held.Items)
	heldTail bool // held was asked for as the last items
	heldAt   int  // changes when held was asked for
	blocked  bool // the last request failed: ask again only after something changes
	err      error

	search searchState
}

// New returns a pane in follow mode with no log.
func New(s Styles) Model {
	return Model{KeyMap: DefaultKeyMap(), Styles: &s, st: State{Follow: true}, focused: true}
}

// SetLog shows another log (or the same one anew) at the position st (the
// zero State does not imply follow mode: pass State{Follow: true} for the
// bottom). The pane holds nothing of it until SetPage; its first Request
// asks for what st shows.
func (m *Model) SetLog(st State) {
	m.open = true
	m.st = st
	m.gen++
	m.changes, m.inFlight, m.fetched, m.blocked, m.move = 0, false, false, false, 0
	m.held, m.heldTail, m.heldAt = Page{}, false, 0
	m.first, m.total = 0, 0
	m.err = nil
	m.search.resetScan()
	m.Refresh()
}

// Clear shows no log: a blank pane.
func (m *Model) Clear() {
	m.SetLog(State{Follow: true})
	m.open = false
	m.Refresh()
}

// SetStyles replaces the pane's styles and renders again (the rows
// rendered with the old ones go).
func (m *Model) SetStyles(s Styles) {
	m.Styles = &s
	m.Refresh()
}

// State returns the pane's position, to restore later with SetLog.
func (m Model) State() State { return m.st }

// SetSize sets the pane's size in cells and renders again.
func (m *Model) SetSize(w, h int) {
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

// Err returns the error of the last fetch, nil once a page arrived.
func (m Model) Err() error { return m.err }

// Update acts on the pane's keys: it scrolls, toggles follow mode and
// wrap, and moves between the search's matches or clears the search; a
// match key with nothing to show returns a command whose SearchMsg says
// why, and clearing returns one with no error.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
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
	case key.Matches(k, km.NextMatch, km.PrevMatch):
		return m, m.moveMatch(key.Matches(k, km.NextMatch))
	case key.Matches(k, km.ClearMatch):
		if m.Query() != "" {
			m.Search("")
		}
		return m, searchSays(nil)
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
// follow mode when it moves. Rows above what the pane holds are scrolled
// once their page arrives.
func (m *Model) ScrollUp(n int) {
	if !m.open || n <= 0 {
		return
	}
	m.blocked = false
	if m.move != 0 { // waiting for items already: the rows add up
		m.pause()
		m.move -= n
		return
	}
	p, rest := m.back(m.st.Top, n)
	if p == m.st.Top && rest == 0 {
		return
	}
	m.pause()
	m.st.Top, m.move = p, -rest
	m.Refresh()
}

// ScrollDown moves the view n rows towards the end of the log; reaching the
// bottom resumes follow mode.
func (m *Model) ScrollDown(n int) {
	if !m.open || n <= 0 || m.st.Follow {
		return
	}
	m.blocked = false
	if m.move != 0 { // waiting for items already: the rows add up
		m.move += n
		return
	}
	p, rest := m.forward(m.st.Top, n)
	if rest == 0 && m.rowsFrom(p, m.height+1) <= m.height {
		m.st.Follow, m.move = true, 0
	} else {
		m.st.Top, m.move = p, rest
	}
	m.Refresh()
}

// GotoTop shows the oldest held item and pauses follow mode.
func (m *Model) GotoTop() {
	if !m.open {
		return
	}
	m.blocked = false
	m.pause()
	m.st.Top, m.move = Pos{m.first, 0}, 0
	m.Refresh()
}

// GotoBottom shows the newest items and resumes follow mode.
func (m *Model) GotoBottom() {
	m.blocked = false
	m.st.Follow, m.move = true, 0
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
	m.Refresh()
}

// GotoItem pauses follow mode and shows item abs near the top third of the
// pane (once it arrives, when the pane does not hold it).
func (m *Model) GotoItem(abs int64) {
	if !m.open {
		return
	}
	m.blocked = false
	m.pause()
	if _, ok := m.item(abs); !ok {
		m.st.Top, m.move = Pos{abs, 0}, -(m.height / 3)
		m.Refresh()
		return
	}
	p, rest := m.back(Pos{abs, 0}, m.height/3)
	m.st.Top, m.move = p, -rest
	m.Refresh()
}
