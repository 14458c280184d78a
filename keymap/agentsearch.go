package keymap

import "charm.land/bubbles/v2/key"

// AgentSearch holds the bindings of the results of a search across agents
// (SPEC §7, ui/agentsearch): move between the hits, jump to one, close.
// It implements help.KeyMap.
type AgentSearch struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Jump, Close                             key.Binding
}

// DefaultAgentSearch returns the bindings of the search results.
func DefaultAgentSearch() AgentSearch {
	return AgentSearch{
		Up:       bind([]string{"k", "up"}, "k/↑", "previous hit"),
		Down:     bind([]string{"j", "down"}, "j/↓", "next hit"),
		PageUp:   bind([]string{"pgup", "b"}, "pgup/b", "page up"),
		PageDown: bind([]string{"pgdown", "space"}, "pgdn/space", "page down"),
		Top:      bind([]string{"g", "home"}, "g/home", "first hit"),
		Bottom:   bind([]string{"G", "end"}, "G/end", "last hit"),
		Jump:     bind([]string{"enter"}, "enter", "show it in its agent's log"),
		Close:    bind([]string{"esc", "q"}, "esc", "close the results"),
	}
}

// ShortHelp returns the results' one-line help.
func (k AgentSearch) ShortHelp() []key.Binding {
	return []key.Binding{k.Down, k.Up, k.Jump, k.Close}
}

// FullHelp returns every binding of the results.
func (k AgentSearch) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Jump, k.Close}}
}
