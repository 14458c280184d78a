// Package keymap declares every key binding of the dashboard once, with its
// help text. The ui matches keys with key.Matches against these bindings and
// generates both the short help line and the full help overlay from them, so
// a binding, its effect and its documentation cannot drift apart. The
// widgets (ui/agenttable, ui/logview, ui/lineinput) build their KeyMaps
// from these bindings and implement help.KeyMap; the dashboard forwards a
// key to the widget whose KeyMap Matches it.
//
// The keys SPEC §7 fixes are spawn n, send s, interrupt i, close c, resume r,
// j/k and the arrows between agents, / search, ? help, q and ctrl+c quit.
// Because n spawns, search results move with ctrl+n/ctrl+p.
package keymap

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Matches reports whether k matches a binding of km (any of its
// FullHelp): how the dashboard gives a key to the widget that owns it
// (the agents table, the log pane) without listing that widget's keys a
// second time.
func Matches(k tea.KeyPressMsg, km help.KeyMap) bool {
	for _, col := range km.FullHelp() {
		if key.Matches(k, col...) {
			return true
		}
	}
	return false
}

// KeyMap holds the bindings of the dashboard's normal mode: nothing has
// focus but the dashboard itself. It implements help.KeyMap.
type KeyMap struct {
	// Agents.
	Up, Down                                 key.Binding
	Spawn, Send, Resend, EditResend          key.Binding
	Interrupt, Close, Resume, Forget         key.Binding
	PrevSubmission, NextSubmission           key.Binding
	LineUp, LineDown, HalfUp, HalfDown       key.Binding
	PageUp, PageDown, Top, Bottom            key.Binding
	Follow, Wrap, Transcript, Pager          key.Binding
	Search, NextMatch, PrevMatch, ClearMatch key.Binding
	// SearchAgents searches every agent's output (SPEC §7; the results
	// have their own keys, AgentSearch).
	SearchAgents key.Binding
	// Diff pages what the shown submission changed in its work tree
	// (SPEC §15).
	Diff       key.Binding
	Help, Quit key.Binding
	// Approvals (SPEC §12): answer the selected agent's oldest pending
	// tool permission request.
	Approve, ApproveAlways, Deny key.Binding
	// AnswerQuestion opens the question panel of the selected agent's
	// oldest pending question (SPEC §12 "Questions"); enter on its row
	// does too. The panel's own keys are Question's.
	AnswerQuestion key.Binding
	// Attention and many agents (SPEC §11).
	NextNeedsYou, CancelQueue, Filter                   key.Binding
	FirstAgent, LastAgent, AgentsPageUp, AgentsPageDown key.Binding
	// The agent tree (SPEC §14): fold the selected subtree, fold or
	// unfold all, and the file-tree arrows (fold or go to the parent,
	// unfold or go to the first child).
	Fold, FoldAll, FoldOrParent, UnfoldOrChild key.Binding
	// CloseShown closes every agent the table shows (the filtered set),
	// after one confirmation.
	CloseShown key.Binding
	// The layout (SPEC §7 "the split"): move the border between the
	// table and the log pane, zoom the focused pane to the whole screen
	// and back, move the focus between the two.
	SplitLess, SplitMore, Zoom, FocusPane key.Binding
	// Tiles shows the running agents' output side by side, and back
	// (ClearMatch's esc goes back too); TileOpen opens the selected tile
	// in the usual view (SPEC §7 "Tiles").
	Tiles, TileOpen key.Binding
}

// Group is a titled set of bindings, one section of the full help.
type Group struct {
	Title    string
	Bindings []key.Binding
}

func bind(keys []string, help, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

// DefaultKeyMap returns the dashboard's key bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:             bind([]string{"k", "up"}, "k/↑", "previous agent"),
		Down:           bind([]string{"j", "down"}, "j/↓", "next agent"),
		Spawn:          bind([]string{"n"}, "n", "spawn"),
		Send:           bind([]string{"s"}, "s", "send"),
		Resend:         bind([]string{"R"}, "R", "resend: rerun the last message"),
		EditResend:     bind([]string{"e"}, "e", "edit & resend"),
		Interrupt:      bind([]string{"i"}, "i", "interrupt"),
		Close:          bind([]string{"c"}, "c", "close: stop & archive"),
		Resume:         bind([]string{"r"}, "r", "resume: reopen, no run"),
		Forget:         bind([]string{"x"}, "x", "forget (for good)"),
		PrevSubmission: bind([]string{"["}, "[", "earlier submission"),
		NextSubmission: bind([]string{"]"}, "]", "later submission"),
		LineUp:         bind([]string{"K", "ctrl+y"}, "K/ctrl+y", "scroll up a line"),
		LineDown:       bind([]string{"J", "ctrl+e"}, "J/ctrl+e", "scroll down a line"),
		HalfUp:         bind([]string{"ctrl+u"}, "ctrl+u", "half page up"),
		HalfDown:       bind([]string{"ctrl+d"}, "ctrl+d", "half page down"),
		PageUp:         bind([]string{"pgup", "b"}, "pgup/b", "page up"),
		PageDown:       bind([]string{"pgdown", "space"}, "pgdn/space", "page down"),
		Top:            bind([]string{"g", "home"}, "g/home", "top of log"),
		Bottom:         bind([]string{"G", "end"}, "G/end", "bottom, follow"),
		Follow:         bind([]string{"f"}, "f", "follow on/off"),
		Wrap:           bind([]string{"w"}, "w", "wrap on/off"),
		Transcript:     bind([]string{"t"}, "t", "transcript/raw"),
		Pager:          bind([]string{"o"}, "o", "log in $PAGER"),
		Search:         bind([]string{"/"}, "/", "search"),
		NextMatch:      bind([]string{"ctrl+n"}, "ctrl+n", "next match"),
		PrevMatch:      bind([]string{"ctrl+p"}, "ctrl+p", "previous match"),
		ClearMatch:     bind([]string{"esc"}, "esc", "clear search"),
		SearchAgents:   bind([]string{"S"}, "S", "search every agent"),
		Diff:           bind([]string{"D"}, "D", "what the submission changed, in $PAGER"),
		Help:           bind([]string{"?"}, "?", "help"),
		Quit:           bind([]string{"q", "ctrl+c"}, "q", "quit"),
		NextNeedsYou:   bind([]string{"a"}, "a", "next agent that needs you"),
		FirstAgent:     bind([]string{"<"}, "<", "first agent"),
		LastAgent:      bind([]string{">"}, ">", "last agent"),
		AgentsPageUp:   bind([]string{"{"}, "{", "agents page up"),
		AgentsPageDown: bind([]string{"}"}, "}", "agents page down"),
		Filter:         bind([]string{"F"}, "F", "filter agents (status, text)"),
		CloseShown:     bind([]string{"C"}, "C", "close every agent shown"),
		CancelQueue:    bind([]string{"u"}, "u", "cancel the (last) queued message"),
		Fold:           bind([]string{"z"}, "z", "fold/unfold the agent's subtree"),
		FoldAll:        bind([]string{"Z"}, "Z", "fold all/unfold all"),
		FoldOrParent:   bind([]string{"left"}, "←", "fold, else go to the parent"),
		UnfoldOrChild:  bind([]string{"right"}, "→", "unfold, else go to the first child"),
		Approve:        bind([]string{"y"}, "y", "allow the tool request"),
		ApproveAlways:  bind([]string{"Y"}, "Y", "allow the tool for the session"),
		Deny:           bind([]string{"d"}, "d", "deny the tool request (reason optional)"),
		AnswerQuestion: bind([]string{"A"}, "A", "answer the question asked"),
		SplitLess:      bind([]string{"-"}, "-", "narrow the table (the split)"),
		SplitMore:      bind([]string{"+", "="}, "+", "widen the table (the split)"),
		Zoom:           bind([]string{"m"}, "m", "zoom the focused pane, and back"),
		FocusPane:      bind([]string{"tab"}, "tab", "focus the table or the log pane"),
		Tiles:          bind([]string{"v"}, "v", "tiles: running agents side by side, and back"),
		TileOpen:       bind([]string{"enter"}, "enter", "tiles: open the selected one"),
	}
}

// ShortHelp returns the bindings of the one-line help, most used first.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Spawn, k.Send, k.Interrupt, k.Close, k.Resume, k.Resend, k.Search, k.Help, k.Quit}
}

// FullHelp returns every binding in columns, as help.KeyMap wants.
func (k KeyMap) FullHelp() [][]key.Binding {
	groups := k.Groups()
	out := make([][]key.Binding, len(groups))
	for i, g := range groups {
		out[i] = g.Bindings
	}
	return out
}

// Groups returns every binding in titled groups for the help overlay.
func (k KeyMap) Groups() []Group {
	return []Group{
		{"Agents", []key.Binding{k.Up, k.Down, k.Spawn, k.Send, k.Resend, k.EditResend, k.Interrupt, k.Close, k.Resume, k.Forget, k.CancelQueue}},
		{"Many agents", []key.Binding{k.NextNeedsYou, k.FirstAgent, k.LastAgent, k.AgentsPageUp, k.AgentsPageDown, k.Filter, k.CloseShown}},
		{"Agent tree", []key.Binding{k.Fold, k.FoldAll, k.FoldOrParent, k.UnfoldOrChild}},
		{"Log", []key.Binding{k.PrevSubmission, k.NextSubmission, k.LineUp, k.LineDown, k.HalfUp, k.HalfDown, k.PageUp, k.PageDown, k.Top, k.Bottom}},
		{"View", []key.Binding{k.Follow, k.Wrap, k.Transcript, k.Pager, k.Search, k.NextMatch, k.PrevMatch, k.ClearMatch, k.SearchAgents, k.Diff}},
		{"Layout", []key.Binding{k.SplitLess, k.SplitMore, k.Zoom, k.FocusPane, k.Tiles, k.TileOpen}},
		{"General", []key.Binding{k.Help, k.Quit}},
		{"Approvals (--approvals)", []key.Binding{k.Approve, k.ApproveAlways, k.Deny}},
		{"Questions", []key.Binding{k.AnswerQuestion}},
	}
}

// Input holds the bindings of the one-line input (spawn, send, search).
// It implements help.KeyMap.
type Input struct {
	Submit, Cancel                             key.Binding
	Left, Right, WordLeft, WordRight           key.Binding
	Home, End                                  key.Binding
	DeleteBack, DeleteForward                  key.Binding
	DeleteWordBack, DeleteToStart, DeleteToEnd key.Binding
	// NextField switches the spawn input between the message and the
	// task name (on a host of the tree, SPEC §14); elsewhere tab types a
	// tab.
	NextField key.Binding
}

// DefaultInput returns the input's bindings, readline-like.
func DefaultInput() Input {
	return Input{
		Submit:         bind([]string{"enter"}, "enter", "submit"),
		Cancel:         bind([]string{"esc", "ctrl+c"}, "esc", "cancel"),
		Left:           bind([]string{"left", "ctrl+b"}, "←", "left"),
		Right:          bind([]string{"right", "ctrl+f"}, "→", "right"),
		WordLeft:       bind([]string{"alt+left", "alt+b"}, "alt+←", "word left"),
		WordRight:      bind([]string{"alt+right", "alt+f"}, "alt+→", "word right"),
		Home:           bind([]string{"home", "ctrl+a"}, "ctrl+a", "start"),
		End:            bind([]string{"end", "ctrl+e"}, "ctrl+e", "end"),
		DeleteBack:     bind([]string{"backspace", "ctrl+h"}, "⌫", "delete back"),
		DeleteForward:  bind([]string{"delete", "ctrl+d"}, "del", "delete"),
		DeleteWordBack: bind([]string{"ctrl+w", "alt+backspace"}, "ctrl+w", "delete word"),
		DeleteToStart:  bind([]string{"ctrl+u"}, "ctrl+u", "delete to start"),
		DeleteToEnd:    bind([]string{"ctrl+k"}, "ctrl+k", "delete to end"),
		NextField:      bind([]string{"tab"}, "tab", "spawn: task name ⇄ message"),
	}
}

// ShortHelp returns the input's one-line help.
func (k Input) ShortHelp() []key.Binding {
	return []key.Binding{k.Submit, k.Cancel, k.Home, k.End, k.DeleteWordBack, k.DeleteToStart}
}

// FullHelp returns every input binding.
func (k Input) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Submit, k.Cancel},
		{k.Left, k.Right, k.WordLeft, k.WordRight, k.Home, k.End},
		{k.DeleteBack, k.DeleteForward, k.DeleteWordBack, k.DeleteToStart, k.DeleteToEnd},
		{k.NextField},
	}
}

// Confirm holds the bindings of a confirmation question. Yes and No carry
// the help text of the question being asked; see WithHelp.
type Confirm struct {
	Yes, No key.Binding
}

// DefaultConfirm returns the confirmation bindings: y or enter confirms,
// n or esc declines.
func DefaultConfirm() Confirm {
	return Confirm{
		Yes: bind([]string{"y", "Y", "enter"}, "y", "yes"),
		No:  bind([]string{"n", "N", "esc"}, "n", "no"),
	}
}

// WithHelp returns a copy of k whose help names what yes and no do.
func (k Confirm) WithHelp(yes, no string) Confirm {
	k.Yes.SetHelp("y", yes)
	k.No.SetHelp("n", no)
	return k
}

// ShortHelp returns the confirmation's one-line help.
func (k Confirm) ShortHelp() []key.Binding { return []key.Binding{k.Yes, k.No} }

// FullHelp returns the confirmation's bindings.
func (k Confirm) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// Question holds the bindings of the question panel (SPEC §12
// "Questions"); 1-9 choose an option by its number. It implements
// help.KeyMap.
type Question struct {
	Up, Down, Toggle, Other, Send, Close key.Binding
}

// DefaultQuestion returns the question panel's bindings.
func DefaultQuestion() Question {
	return Question{
		Up:     bind([]string{"up", "k"}, "↑/1-9", "choose"),
		Down:   bind([]string{"down", "j"}, "↓", "next option"),
		Toggle: bind([]string{"space"}, "space", "toggle (multi-select)"),
		Other:  bind([]string{"o"}, "o", "other answer"),
		Send:   bind([]string{"enter"}, "enter", "send"),
		Close:  bind([]string{"esc"}, "esc", "close, not answered"),
	}
}

// ShortHelp returns the panel's one-line help.
func (k Question) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Toggle, k.Other, k.Send, k.Close}
}

// FullHelp returns the panel's bindings.
func (k Question) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Toggle, k.Other, k.Send, k.Close}}
}

// HelpOverlay holds the bindings of the full help overlay.
type HelpOverlay struct {
	Close, Up, Down key.Binding
}

// DefaultHelpOverlay returns the help overlay's bindings.
func DefaultHelpOverlay() HelpOverlay {
	return HelpOverlay{
		Close: bind([]string{"?", "esc", "q"}, "?/esc", "close help"),
		Up:    bind([]string{"k", "up"}, "k/↑", "scroll up"),
		Down:  bind([]string{"j", "down"}, "j/↓", "scroll down"),
	}
}

// ShortHelp returns the overlay's one-line help.
func (k HelpOverlay) ShortHelp() []key.Binding { return []key.Binding{k.Close, k.Up, k.Down} }

// FullHelp returns the overlay's bindings.
func (k HelpOverlay) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// SendChoice holds the bindings of the question asked when a message is
// sent to a running agent (SPEC §11): interrupt it, steer it (only where
// the agent takes messages while it runs: WithSteer), queue the message,
// or cancel. It implements help.KeyMap.
type SendChoice struct {
	Interrupt, Steer, Queue, Cancel key.Binding
}

// DefaultSendChoice returns the bindings of that question: i interrupts,
// q (or enter) queues, esc or n cancels.
func DefaultSendChoice() SendChoice {
	return SendChoice{
		Interrupt: bind([]string{"i", "I"}, "i", "interrupt it and send"),
		Steer:     bind([]string{"s", "S"}, "s", "steer it"),
		Queue:     bind([]string{"q", "Q", "enter"}, "q/enter", "queue: send when it ends"),
		Cancel:    bind([]string{"esc", "n", "N", "ctrl+c"}, "esc", "cancel"),
	}
}

// ShortHelp returns the question's one-line help.
func (k SendChoice) ShortHelp() []key.Binding {
	return []key.Binding{k.Interrupt, k.Steer, k.Queue, k.Cancel}
}

// WithSteer returns k with Steer enabled or not: offered only where the
// agent can be steered and its host steers (SPEC §11).
func (k SendChoice) WithSteer(on bool) SendChoice {
	k.Steer.SetEnabled(on)
	return k
}

// FullHelp returns the question's bindings.
func (k SendChoice) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }
