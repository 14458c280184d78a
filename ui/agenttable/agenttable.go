// Package agenttable is the table of agents, shaped like bubbles' table: a
// Model with a KeyMap, Styles, SetSize, Update and View. Each row shows
// whether its agent needs you (a glyph column), the agent (its task name,
// else its short id), its status as a symbol and a word, its number of
// submissions, the elapsed time of its latest submission and NOW: what
// it is doing now or how it ended (Summary.Now, SPEC §7). Need says the
// width its rows ask beside the log pane; RowAt says which row a mouse
// event hit.
//
// With a host of the tree (SPEC §14) the agents are drawn as a tree:
// children under their parent with tree glyphs, a subtree folds into its
// parent's row, which then counts what it hides; a filter shows each
// match with its ancestors, muted. Which columns a narrow table drops
// first is one table, columns.go.
//
// Cost: a frame is proportional to the rows on screen, not to the agents.
// The order of the rows (tree.go) is rebuilt when agents come or go, a
// fold or the filter changes, or a change touches what a row of the
// order shows (a folded subtree's counts, a filter's match); the rows'
// text (RowOf) is made in View for the rows it draws, and the column
// widths from the width, the host's features and the order alone.
package agenttable

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/internal/cells"
)

// KeyMap is the table's bindings: moving the selection, folding the
// tree. It implements help.KeyMap; the dashboard gives the table every key
// that matches one of them (keymap.Matches).
type KeyMap struct {
	Up, Down, First, Last, PageUp, PageDown key.Binding
	// Fold folds or unfolds the selected agent's subtree; FoldAll folds
	// every subtree, or unfolds them all when any is folded;
	// FoldOrParent folds the selected subtree, or selects the parent;
	// UnfoldOrChild unfolds it, or selects its first child.
	Fold, FoldAll, FoldOrParent, UnfoldOrChild key.Binding
}

// DefaultKeyMap returns the table's bindings from keymap.DefaultKeyMap,
// where every key of the dashboard is declared.
func DefaultKeyMap() KeyMap { return KeyMapOf(keymap.DefaultKeyMap()) }

// KeyMapOf returns the table's bindings from the dashboard's k (the
// defaults, or those the config file rebound).
func KeyMapOf(k keymap.KeyMap) KeyMap {
	return KeyMap{Up: k.Up, Down: k.Down, First: k.FirstAgent, Last: k.LastAgent, PageUp: k.AgentsPageUp, PageDown: k.AgentsPageDown,
		Fold: k.Fold, FoldAll: k.FoldAll, FoldOrParent: k.FoldOrParent, UnfoldOrChild: k.UnfoldOrChild}
}

// ShortHelp returns the bindings the table's one-line help would show.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down} }

// FullHelp returns every binding of the table.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.First, k.Last, k.PageUp, k.PageDown},
		{k.Fold, k.FoldAll, k.FoldOrParent, k.UnfoldOrChild}}
}

// Styles are the table's styles.
type Styles struct {
	Header, Cell, Muted, Selected                 lipgloss.Style
	Running, Completed, Errored, Closed, Stopping lipgloss.Style
	NeedsYou                                      lipgloss.Style // the "◆ needs you" mark
	Tree                                          lipgloss.Style // the tree's glyphs
}

// DefaultStyles returns the table's styles taken from t.
func DefaultStyles(t theme.Styles) Styles {
	needsYou := t.Warning
	if !t.NoColor { // NO_COLOR: no attribute either, as every style of t
		needsYou = needsYou.Bold(true)
	}
	return Styles{
		Header: t.Header, Cell: t.Text, Muted: t.Muted, Selected: t.Selected,
		Running: t.Running, Completed: t.Completed, Errored: t.Errored, Closed: t.Closed, Stopping: t.Stopping,
		NeedsYou: needsYou, Tree: t.Muted,
	}
}

// Model is the table of agents.
type Model struct {
	KeyMap KeyMap
	// EmptyHint follows "no agents yet: " in a table without agents: how
	// to spawn one, with the dashboard's key.
	EmptyHint string
	// Styles are the table's styles, shared by the copies of the Model
	// (Bubble Tea copies a model per message: a pointer, not 6 KB);
	// change them with SetStyles, never in place.
	Styles *Styles
	inks   inks

	agents   []proto.AgentInfo // oldest first; the caller's, never written here
	match    []bool            // the filter's verdict per agent; nil: no filter
	stopping map[string]bool   // stops the dashboard asked for (RowOf)
	tree     bool              // draw the tree (the host has it)
	inner    bool              // draw inner agents' rows (the host has them)
	activity bool              // draw the ACTIVITY column (the host sends output rates)
	folded   map[string]bool   // agents whose subtree is folded (hosts: hostKey); copied before a change
	hosts    *hostIndex        // the hosts of a table of several hosts (hosts.go); nil for one
	now      time.Time

	order  order // the rows, built by rebuild
	cursor int   // selected row
	offset int   // first row drawn

	width, height int // height counts the header
	frame         int
	focused       bool
}

// New returns an empty, focused table.
func New(s Styles) Model {
	return Model{KeyMap: DefaultKeyMap(), EmptyHint: "press n to spawn one", Styles: &s, inks: inksOf(s), focused: true}
}

// SetStyles replaces the table's styles.
func (m *Model) SetStyles(s Styles) { m.Styles, m.inks = &s, inksOf(s) }

// SetAgents replaces the agents, oldest first, and the filter's verdict
// on each (match[i] for agents[i]; nil shows every agent). The table keeps
// both slices and reads them until the next SetAgents or Changed: the
// caller must not change them in between but through Changed. The selected
// agent stays selected when it still shows (else its nearest shown
// ancestor, else the row at its place), a selected inner agent too.
// Cost: O(agents).
func (m *Model) SetAgents(agents []proto.AgentInfo, match []bool) {
	id, task := m.SelectedID(), m.selectedTask()
	m.agents, m.match = agents, match
	m.rebuildAt(id, task)
}

// Changed says that agents[i] changed in place for each i in changed (same
// agents, same order as the last SetAgents, match updated by the caller):
// the order is rebuilt only when a change touches it (a filter's verdict,
// a folded subtree's counts, a parent), so a change of an agent whose row
// is only drawn costs nothing here. It reports whether it rebuilt the
// order (the rows may all draw differently).
func (m *Model) Changed(changed []int) (rebuilt bool) {
	for _, i := range changed {
		if m.order.touches(i, m.agents, m.match) {
			m.rebuild(m.selectedKey())
			return true
		}
	}
	return false
}

// Redraws reports whether agents[i] changing from was to now must be
// drawn at once, the order aside (Changed): it has a row on screen and
// that row (RowOf, all a row shows of its agent) differs in more than
// the NOW text of an agent that runs on. A change of an agent off screen,
// or of what its row does not show (its output), draws the same table.
// A running agent's new NOW waits for the next SetClock, which draws the
// rows of running agents anew (their spinner and time) a few times a
// second: with every row on screen printing a line a second, drawing
// each line at once would draw a frame per batch of the host. Cost: O(1).
func (m Model) Redraws(i int, was, now *proto.AgentInfo) bool {
	if i < 0 || i >= len(m.order.rowOf) {
		return true
	}
	first, end := m.Shown()
	if r := int(m.order.rowOf[i]); r < first || r >= end {
		return false
	}
	stop := m.stopping[was.AgentID]
	a, b := RowOf(*was, m.now, stop), RowOf(*now, m.now, stop)
	if was.Running() && now.Running() {
		a.Message = b.Message
	}
	return a != b
}

// SetTree says whether to draw the tree (SPEC §14: the host has the
// `tree` feature); without it every agent is a row of a flat table, as
// before the tree.
func (m *Model) SetTree(on bool) {
	if m.tree != on {
		m.tree = on
		m.rebuild(m.selectedKey())
	}
}

// SetInner says whether to draw the inner agents of each agent's latest
// submission as its child rows (SPEC §8: the host has the `inner-agents`
// feature).
func (m *Model) SetInner(on bool) {
	if m.inner != on {
		m.inner = on
		m.rebuild(m.selectedKey())
	}
}

// SetActivity says whether to draw the ACTIVITY column, the sparkline of
// each agent's output rate (SPEC §7: the host has the `output-rate`
// feature; an older host's running agents would all look flat).
func (m *Model) SetActivity(on bool) { m.activity = on }

// SetStopping gives the table the stops the dashboard asked for, by agent
// id, shown before the snapshot says so; the table reads the map in View.
func (m *Model) SetStopping(s map[string]bool) { m.stopping = s }

// SetClock sets the time the elapsed times are measured to and the
// spinner frame drawn for running agents. Cost: O(1).
func (m *Model) SetClock(now time.Time, frame int) { m.now, m.frame = now, frame }

// Len returns the number of rows: the agents shown (matches and their
// ancestors under a filter, minus what folds hide).
func (m Model) Len() int { return len(m.order.rows) }

// SetSize sets the table's size in cells; height includes the header row.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = max(w, 0), max(h, 0)
	m.clampOffset()
}

// Focus lets Update act on keys.
func (m *Model) Focus() { m.focused = true }

// Blur makes Update ignore keys.
func (m *Model) Blur() { m.focused = false }

// Cursor returns the index of the selected row.
func (m Model) Cursor() int { return m.cursor }

// SelectedID returns the id of the selected agent, "" when there is none
// (or a host's row is selected, SelectedHost); on an inner agent's row,
// its agent's (SelectedInner tells them apart).
func (m Model) SelectedID() string {
	if m.cursor < len(m.order.rows) {
		if r := m.order.rows[m.cursor]; r.host == 0 {
			return m.agents[r.agent].AgentID
		}
	}
	return ""
}

// Select selects agent id and reports whether it has a row (a fold or the
// filter may hide it; see Reveal).
func (m *Model) Select(id string) bool {
	if i, ok := m.order.pos(id); ok && id != "" {
		m.cursor = i
		m.clampOffset()
		return true
	}
	return false
}

// SelectMatch moves the selection to the first match when the selected
// row is an ancestor a filter shows only for what matches below it (a
// filter just applied shows what it found, not its context); it reports
// whether the selection moved.
func (m *Model) SelectMatch() bool {
	if m.cursor >= len(m.order.rows) || !m.order.rows[m.cursor].context {
		return false
	}
	for i, r := range m.order.rows {
		if !r.context {
			m.cursor = i
			m.clampOffset()
			return true
		}
	}
	return false
}

// Reveal unfolds every folded ancestor of agent id, then selects it; it
// reports whether the agent has a row then (the filter may still hide
// it).
func (m *Model) Reveal(id string) bool {
	if m.Select(id) {
		return true
	}
	unfolded := false
	ancestors := m.order.ancestors(id, m.agents)
	if i, ok := m.order.index[id]; ok && m.hosts != nil {
		ancestors = append(ancestors, hostKey(m.agents[i].Host))
	}
	for _, anc := range ancestors {
		if m.folded[anc] {
			m.setFold(anc, false)
			unfolded = true
		}
	}
	if unfolded {
		m.rebuild(m.selectedKey())
	}
	return m.Select(id)
}

// Shown returns the rows drawn, as the half-open range [first, end) of
// the Len rows.
func (m Model) Shown() (first, end int) {
	visible := max(m.height-1, 0) // the header takes a line
	return m.offset, min(m.offset+visible, len(m.order.rows))
}

// MoveUp selects the previous agent.
func (m *Model) MoveUp() { m.cursor = max(m.cursor-1, 0); m.clampOffset() }

// MoveDown selects the next agent.
func (m *Model) MoveDown() { m.cursor = max(min(m.cursor+1, m.Len()-1), 0); m.clampOffset() }

// MoveTop selects the first agent.
func (m *Model) MoveTop() { m.cursor = 0; m.clampOffset() }

// MoveBottom selects the last agent.
func (m *Model) MoveBottom() { m.cursor = max(m.Len()-1, 0); m.clampOffset() }

// PageUp moves the selection up by the rows that fit.
func (m *Model) PageUp() { m.cursor = max(m.cursor-max(m.height-1, 1), 0); m.clampOffset() }

// PageDown moves the selection down by the rows that fit.
func (m *Model) PageDown() {
	m.cursor = max(min(m.cursor+max(m.height-1, 1), m.Len()-1), 0)
	m.clampOffset()
}

func (m *Model) clampOffset() {
	visible := max(m.height-1, 1)
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+visible {
		m.offset = m.cursor - visible + 1
	}
	m.offset = max(min(m.offset, m.Len()-visible), 0)
}

// FoldMsg is what a fold key has to say on the dashboard's message line:
// what it folded or unfolded, or why it did nothing.
type FoldMsg struct{ Text string }

func says(text string) tea.Cmd { return func() tea.Msg { return FoldMsg{Text: text} } }

// Update moves the selection for the table's keys (a row up or down, to
// the first or last row, a page up or down) and folds the tree; a fold
// key answers with a FoldMsg.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || !m.focused {
		return m, nil
	}
	switch km := m.KeyMap; {
	case key.Matches(k, km.Up):
		m.MoveUp()
	case key.Matches(k, km.Down):
		m.MoveDown()
	case key.Matches(k, km.First):
		m.MoveTop()
	case key.Matches(k, km.Last):
		m.MoveBottom()
	case key.Matches(k, km.PageUp):
		m.PageUp()
	case key.Matches(k, km.PageDown):
		m.PageDown()
	case key.Matches(k, km.Fold, km.FoldAll, km.FoldOrParent, km.UnfoldOrChild):
		return m, m.foldKey(k)
	}
	return m, nil
}

// RowAt returns the row drawn at cell (x, y) of the table's inside (0, 0:
// the header's first cell), for the mouse; ok is false for the header
// and below the last row. fold is set when the cell is the fold glyph of
// a row that folds: a folded row's count (" +3"), or the tree glyphs
// before the name of a parent in the tree. Cost: O(1).
func (m Model) RowAt(x, y int) (row int, fold, ok bool) {
	first, end := m.Shown()
	row = first + y - 1
	if y < 1 || row >= end || x < 0 || x >= m.width {
		return 0, false, false
	}
	return row, m.onFoldGlyph(row, x), true
}

// onFoldGlyph reports whether cell x of row i is its fold glyph (RowAt).
func (m Model) onFoldGlyph(i, x int) bool {
	r := m.order.rows[i]
	if !m.tree && r.host == 0 || m.match != nil || r.inner > 0 || m.order.kids == nil {
		return false
	}
	w := m.layout().name
	if r.hidden > 0 { // its count, at the end of the name cell
		return x >= markW+w-len(foldCount(r.hidden)) && x < markW+w
	}
	if r.host > 0 {
		return false // a host's row folds by its count, or z
	}
	g := cells.Width(glyphs(r.depth, r.last))
	return m.order.kids[r.agent]+m.order.inners(r.agent) > 0 && x >= markW && x < markW+min(g, w)
}

// SelectRow selects row i (a click); out of range does nothing.
func (m *Model) SelectRow(i int) {
	if i >= 0 && i < m.Len() {
		m.cursor = i
		m.clampOffset()
	}
}

// ToggleFold selects row i and folds its agent's subtree, or unfolds it
// when folded (a click on its fold glyph, RowAt).
func (m *Model) ToggleFold(i int) {
	if i < 0 || i >= m.Len() || m.order.rows[i].inner > 0 {
		return
	}
	if r := m.order.rows[i]; r.host > 0 {
		m.foldHost(r, !m.folded[hostKey(m.hosts.list[r.host-1].Name)])
		return
	}
	id := m.agents[m.order.rows[i].agent].AgentID
	m.setFold(id, !m.folded[id])
	m.rebuild(id)
}

// RowAgents returns, in the rows' order, the ids of the agents that have
// a row of their own (the filter and the folds choose them; an ancestor a
// filter shows only for what matches below it is left out), those keep
// takes: the agents the dashboard's tiles show (SPEC §7). Cost: O(rows).
func (m Model) RowAgents(keep func(a *proto.AgentInfo) bool) []string {
	var ids []string
	for _, r := range m.order.rows {
		if r.inner > 0 || r.context || r.host > 0 {
			continue
		}
		if a := &m.agents[r.agent]; keep(a) {
			ids = append(ids, a.AgentID)
		}
	}
	return ids
}
