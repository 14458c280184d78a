// Package agenttable is the table of agents, shaped like bubbles' table: a
// Model with a KeyMap, Styles, SetSize, Update and View. Each row shows an
// agent's short id, its status as a symbol and a word (with the reason when
// errored), its number of submissions, the elapsed time of its latest
// submission and its last message (or, for agent CLI presets, what it is
// doing now). Only the rows that fit are rendered.
package agenttable

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/internal/cells"
)

// KeyMap is the table's bindings: moving the selection. It implements
// help.KeyMap; the dashboard gives the table every key that matches one of
// them (keymap.Matches).
type KeyMap struct {
	Up, Down, First, Last, PageUp, PageDown key.Binding
}

// DefaultKeyMap returns the table's bindings from keymap.DefaultKeyMap,
// where every key of the dashboard is declared.
func DefaultKeyMap() KeyMap {
	k := keymap.DefaultKeyMap()
	return KeyMap{Up: k.Up, Down: k.Down, First: k.FirstAgent, Last: k.LastAgent, PageUp: k.AgentsPageUp, PageDown: k.AgentsPageDown}
}

// ShortHelp returns the bindings the table's one-line help would show.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down} }

// FullHelp returns every binding of the table.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.First, k.Last, k.PageUp, k.PageDown}}
}

// Styles are the table's styles.
type Styles struct {
	Header, Cell, Muted, Selected                 lipgloss.Style
	Running, Completed, Errored, Closed, Stopping lipgloss.Style
	NeedsYou                                      lipgloss.Style // the "◆ needs you" mark
}

// DefaultStyles returns the table's styles taken from t.
func DefaultStyles(t theme.Styles) Styles {
	return Styles{
		Header: t.Header, Cell: t.Text, Muted: t.Muted, Selected: t.Selected,
		Running: t.Running, Completed: t.Completed, Errored: t.Errored, Closed: t.Closed, Stopping: t.Stopping,
		NeedsYou: t.Warning.Bold(true),
	}
}

// Frames are the spinner frames of a running agent.
var Frames = spinner.MiniDot.Frames

// Status symbols; running uses a spinner frame in the table.
const (
	SymRunning   = "●"
	SymCompleted = "✓"
	SymErrored   = "✗"
	SymClosed    = "■"
	SymStopping  = "◌"
)

// Symbol returns the symbol of a status.
func Symbol(s proto.Status) string {
	switch s {
	case proto.StatusRunning:
		return SymRunning
	case proto.StatusCompleted:
		return SymCompleted
	case proto.StatusErrored:
		return SymErrored
	case proto.StatusClosed:
		return SymClosed
	}
	return "?"
}

// Reason returns the short reason an errored submission ended: "exit 2",
// "interrupted", "SIGKILL", "timed out", "no result", or its error text.
func Reason(sub proto.SubmissionInfo) string {
	le := ""
	if sub.LastError != nil {
		le = *sub.LastError
	}
	switch {
	case le == "interrupted":
		return le
	case strings.HasPrefix(le, "timed out"):
		return "timed out"
	case sub.Signal != "":
		return sub.Signal
	case sub.ExitCode != nil && *sub.ExitCode != 0:
		return fmt.Sprintf("exit %d", *sub.ExitCode)
	case le == "ended without a result":
		return "no result"
	}
	return termtext.OneLine(le, 0)
}

// SubmissionText returns how submission sub went, as a symbol and a word:
// "● running", "◌ stopping", "✓ completed", "✗ interrupted" or "✗ errored
// (exit 2)". stopping says the dashboard asked for a stop that the snapshot
// may not show yet.
func SubmissionText(sub proto.SubmissionInfo, stopping bool) string {
	running := sub.EndedAt.IsZero()
	switch {
	case running && (sub.Stopping || stopping):
		return SymStopping + " stopping"
	case running:
		return SymRunning + " running"
	case sub.Status == proto.StatusErrored:
		switch r := Reason(sub); r {
		case "interrupted":
			return SymErrored + " interrupted"
		case "":
			return SymErrored + " errored"
		default:
			return SymErrored + " errored (" + r + ")"
		}
	}
	return Symbol(sub.Status) + " " + string(sub.Status)
}

// Row is what the table shows of one agent.
type Row struct {
	ID          string
	Status      proto.Status
	Stopping    bool   // a stop was requested and the process group is not gone yet
	Reason      string // why the latest submission errored
	Submissions int
	Elapsed     time.Duration
	Usage       string // tokens and cost of all its submissions (presets), "" when none reported
	Message     string // activity or last message, one clean line
	// Restored is set for an agent restored from an earlier run (SPEC
	// §10) that has run nothing since: the time column shows its Age
	// (since it was last updated) and the row is muted.
	Restored bool
	Age      time.Duration
	// Failing is set when subdash failed to write the agent's log file or
	// the journal (Summary.Failure, SPEC §5): the status cell says so.
	Failing  bool
	NeedsYou string // why the agent needs you (SPEC §11), "" when it does not
	Queued   string // the message queued after its submission, one clean line; "" for none
}

// RowOf builds the row of agent a at time now; stopping says the dashboard
// asked for a stop that the snapshot may not show yet.
func RowOf(a proto.AgentInfo, now time.Time, stopping bool) Row {
	r := Row{ID: a.AgentID, Status: a.Status, Stopping: a.Stopping || stopping && a.Running(), Submissions: len(a.Submissions)}
	if n := len(a.Submissions); n > 0 {
		last := a.Submissions[n-1]
		end := last.EndedAt
		if end.IsZero() {
			end = now
		}
		r.Elapsed = max(end.Sub(last.StartedAt), 0)
		if a.Status == proto.StatusErrored {
			r.Reason = Reason(last)
		}
	}
	r.Message = termtext.OneLine(a.LastMessage, 0)
	if a.Activity != "" && a.Running() {
		r.Message = "→ " + termtext.OneLine(a.Activity, 0)
	}
	r.Usage = Usage(a.Usage)
	r.Failing = strings.HasPrefix(a.Failure, "log file ") // the journal's failure is every agent's, said once below the table
	if a.Restored {
		r.Restored, r.Age = true, max(now.Sub(a.UpdatedAt.Time), 0)
	}
	if a.NeedsYou != nil {
		r.NeedsYou = a.NeedsYou.Reason
	}
	if a.QueuedMessage != "" {
		r.Queued, _ = cells.Cut(termtext.OneLine(cells.Head(a.QueuedMessage, 1024), 0), 200)
	}
	return r
}

// Marks of SPEC §11 in the message column, a symbol and words so that
// NO_COLOR loses nothing. SymQueued is U+25B8, one column in every width
// table and present in the common monospace fonts (U+23F5, used before,
// is missing from the font VHS renders with).
const (
	SymNeedsYou = "◆"
	SymQueued   = "▸"
)

// MessageText is the message cell of r: "◆ needs you · " when the agent
// needs you, "▸ queued: “…” · " when a message waits, then the activity
// or last message.
func MessageText(r Row) string {
	msg := r.Message
	if r.Queued != "" {
		msg = SymQueued + " queued: “" + r.Queued + "” · " + msg
	}
	if r.NeedsYou != "" {
		msg = SymNeedsYou + " needs you · " + msg
	}
	return msg
}

// SymRestored marks the age of an agent restored from an earlier run.
const SymRestored = "↺"

// Age formats how long ago an agent restored from an earlier run was last
// updated, in at most six cells: "↺ 42s", "↺ 3m", "↺ 5h", "↺ 12d".
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%s %ds", SymRestored, int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%s %dm", SymRestored, int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%s %dh", SymRestored, int(d/time.Hour))
	}
	return fmt.Sprintf("%s %dd", SymRestored, int(d/(24*time.Hour)))
}

// Usage formats the tokens and cost an agent CLI reported, e.g.
// "12.3k tok $0.0123"; "" when it reported none.
func Usage(u proto.Usage) string {
	var parts []string
	if n := u.InputTokens + u.OutputTokens; n > 0 {
		parts = append(parts, Tokens(n)+" tok")
	}
	if u.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", u.CostUSD))
	}
	return strings.Join(parts, " ")
}

// Tokens formats a token count: 950, 12.3k, 1.2M.
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Elapsed formats a duration in at most six cells: 9s, 3m04s, 1h02m.
func Elapsed(d time.Duration) string {
	s := int(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 100*3600:
		return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
	}
	return fmt.Sprintf("%dh", s/3600)
}

// Model is the table of agents.
type Model struct {
	KeyMap KeyMap
	Styles Styles

	rows          []Row
	cursor        int
	offset        int // first row drawn
	width, height int // height counts the header
	frame         int
	focused       bool
}

// New returns an empty, focused table.
func New(s Styles) Model { return Model{KeyMap: DefaultKeyMap(), Styles: s, focused: true} }

// SetRows replaces the rows, keeping the selected agent selected when it is
// still there.
func (m *Model) SetRows(rows []Row) {
	id := m.SelectedID()
	m.rows = rows
	if !m.Select(id) {
		m.cursor = min(m.cursor, max(len(rows)-1, 0))
		m.clampOffset()
	}
}

// Rows returns the rows; the caller must not change them.
func (m Model) Rows() []Row { return m.rows }

// SetSize sets the table's size in cells; height includes the header row.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = max(w, 0), max(h, 0)
	m.clampOffset()
}

// SetFrame sets the spinner frame drawn for running agents.
func (m *Model) SetFrame(f int) { m.frame = f }

// Focus lets Update act on keys.
func (m *Model) Focus() { m.focused = true }

// Blur makes Update ignore keys.
func (m *Model) Blur() { m.focused = false }

// Cursor returns the index of the selected row.
func (m Model) Cursor() int { return m.cursor }

// SelectedID returns the id of the selected agent, "" when there is none.
func (m Model) SelectedID() string {
	if m.cursor < len(m.rows) {
		return m.rows[m.cursor].ID
	}
	return ""
}

// Select selects agent id and reports whether it is in the table.
func (m *Model) Select(id string) bool {
	for i, r := range m.rows {
		if r.ID == id && id != "" {
			m.cursor = i
			m.clampOffset()
			return true
		}
	}
	return false
}

// Shown returns the rows drawn, as the half-open range [first, end) of
// Rows; all rows are drawn when first is 0 and end is len(Rows()).
func (m Model) Shown() (first, end int) {
	visible := max(m.height-1, 0) // the header takes a line
	return m.offset, min(m.offset+visible, len(m.rows))
}

// MoveUp selects the previous agent.
func (m *Model) MoveUp() { m.cursor = max(m.cursor-1, 0); m.clampOffset() }

// MoveDown selects the next agent.
func (m *Model) MoveDown() { m.cursor = max(min(m.cursor+1, len(m.rows)-1), 0); m.clampOffset() }

// MoveTop selects the first agent.
func (m *Model) MoveTop() { m.cursor = 0; m.clampOffset() }

// MoveBottom selects the last agent.
func (m *Model) MoveBottom() { m.cursor = max(len(m.rows)-1, 0); m.clampOffset() }

// PageUp moves the selection up by the rows that fit.
func (m *Model) PageUp() { m.cursor = max(m.cursor-max(m.height-1, 1), 0); m.clampOffset() }

// PageDown moves the selection down by the rows that fit.
func (m *Model) PageDown() {
	m.cursor = max(min(m.cursor+max(m.height-1, 1), len(m.rows)-1), 0)
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
	m.offset = max(min(m.offset, len(m.rows)-visible), 0)
}

// Update moves the selection for the table's keys: a row up or down, to
// the first or last row, a page up or down.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
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
	}
	return m, nil
}
