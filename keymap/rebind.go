package keymap

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
)

// Action names one binding of KeyMap as the config file's [keys] table
// does: `spawn = "N"` rebinds Spawn. The names are declared here, not
// derived from the field names, so that renaming a field never breaks a
// user's file.
type Action struct {
	Name    string // the [keys] name: "spawn", "next-needs-you"
	binding func(*KeyMap) *key.Binding
}

// Binding returns the binding of k that a names.
func (a Action) Binding(k *KeyMap) *key.Binding { return a.binding(k) }

// Actions returns every action of KeyMap, in the order of the full help.
// The caller owns the slice.
func Actions() []Action {
	return []Action{
		{"up", func(k *KeyMap) *key.Binding { return &k.Up }},
		{"down", func(k *KeyMap) *key.Binding { return &k.Down }},
		{"spawn", func(k *KeyMap) *key.Binding { return &k.Spawn }},
		{"send", func(k *KeyMap) *key.Binding { return &k.Send }},
		{"resend", func(k *KeyMap) *key.Binding { return &k.Resend }},
		{"edit-resend", func(k *KeyMap) *key.Binding { return &k.EditResend }},
		{"interrupt", func(k *KeyMap) *key.Binding { return &k.Interrupt }},
		{"close", func(k *KeyMap) *key.Binding { return &k.Close }},
		{"resume", func(k *KeyMap) *key.Binding { return &k.Resume }},
		{"forget", func(k *KeyMap) *key.Binding { return &k.Forget }},
		{"cancel-queue", func(k *KeyMap) *key.Binding { return &k.CancelQueue }},
		{"next-needs-you", func(k *KeyMap) *key.Binding { return &k.NextNeedsYou }},
		{"first-agent", func(k *KeyMap) *key.Binding { return &k.FirstAgent }},
		{"last-agent", func(k *KeyMap) *key.Binding { return &k.LastAgent }},
		{"agents-page-up", func(k *KeyMap) *key.Binding { return &k.AgentsPageUp }},
		{"agents-page-down", func(k *KeyMap) *key.Binding { return &k.AgentsPageDown }},
		{"filter", func(k *KeyMap) *key.Binding { return &k.Filter }},
		{"close-shown", func(k *KeyMap) *key.Binding { return &k.CloseShown }},
		{"fold", func(k *KeyMap) *key.Binding { return &k.Fold }},
		{"fold-all", func(k *KeyMap) *key.Binding { return &k.FoldAll }},
		{"fold-or-parent", func(k *KeyMap) *key.Binding { return &k.FoldOrParent }},
		{"unfold-or-child", func(k *KeyMap) *key.Binding { return &k.UnfoldOrChild }},
		{"prev-submission", func(k *KeyMap) *key.Binding { return &k.PrevSubmission }},
		{"next-submission", func(k *KeyMap) *key.Binding { return &k.NextSubmission }},
		{"line-up", func(k *KeyMap) *key.Binding { return &k.LineUp }},
		{"line-down", func(k *KeyMap) *key.Binding { return &k.LineDown }},
		{"half-up", func(k *KeyMap) *key.Binding { return &k.HalfUp }},
		{"half-down", func(k *KeyMap) *key.Binding { return &k.HalfDown }},
		{"page-up", func(k *KeyMap) *key.Binding { return &k.PageUp }},
		{"page-down", func(k *KeyMap) *key.Binding { return &k.PageDown }},
		{"top", func(k *KeyMap) *key.Binding { return &k.Top }},
		{"bottom", func(k *KeyMap) *key.Binding { return &k.Bottom }},
		{"follow", func(k *KeyMap) *key.Binding { return &k.Follow }},
		{"wrap", func(k *KeyMap) *key.Binding { return &k.Wrap }},
		{"transcript", func(k *KeyMap) *key.Binding { return &k.Transcript }},
		{"pager", func(k *KeyMap) *key.Binding { return &k.Pager }},
		{"search", func(k *KeyMap) *key.Binding { return &k.Search }},
		{"next-match", func(k *KeyMap) *key.Binding { return &k.NextMatch }},
		{"prev-match", func(k *KeyMap) *key.Binding { return &k.PrevMatch }},
		{"clear-match", func(k *KeyMap) *key.Binding { return &k.ClearMatch }},
		{"search-agents", func(k *KeyMap) *key.Binding { return &k.SearchAgents }},
		{"diff", func(k *KeyMap) *key.Binding { return &k.Diff }},
		{"narrow-table", func(k *KeyMap) *key.Binding { return &k.SplitLess }},
		{"widen-table", func(k *KeyMap) *key.Binding { return &k.SplitMore }},
		{"zoom", func(k *KeyMap) *key.Binding { return &k.Zoom }},
		{"switch-pane", func(k *KeyMap) *key.Binding { return &k.FocusPane }},
		{"tiles", func(k *KeyMap) *key.Binding { return &k.Tiles }},
		{"open-tile", func(k *KeyMap) *key.Binding { return &k.TileOpen }},
		{"help", func(k *KeyMap) *key.Binding { return &k.Help }},
		{"quit", func(k *KeyMap) *key.Binding { return &k.Quit }},
		{"approve", func(k *KeyMap) *key.Binding { return &k.Approve }},
		{"approve-always", func(k *KeyMap) *key.Binding { return &k.ApproveAlways }},
		{"deny", func(k *KeyMap) *key.Binding { return &k.Deny }},
		{"answer", func(k *KeyMap) *key.Binding { return &k.AnswerQuestion }},
	}
}

// ActionOf returns the [keys] name of the binding of k whose help is h
// ("" when none is): how the README's table names each row.
func ActionOf(k KeyMap, h key.Help) string {
	for _, a := range Actions() {
		if a.Binding(&k).Help() == h {
			return a.Name
		}
	}
	return ""
}

// Rebinding is one line of the config file's [keys]: Action's keys become
// Keys, its defaults dropped.
type Rebinding struct {
	Action string   // an Actions name
	Keys   []string // Bubble Tea key names: "n", "N", "ctrl+n", "enter", "pgdown"
	Where  string   // where it was written, for errors: "config.toml line 12"
}

// Rebind returns a copy of k with each rebinding applied: the action's
// keys replaced, and the key shown in help (and in README's table)
// following them, so help always names the keys that work. k itself is
// unchanged.
//
// Errors, all of them joined: an unknown action, a key Bubble Tea never
// reports (ValidKey), an action named twice, and a key of two actions
// (SPEC §7's keys are the defaults): the error names both actions and
// where each got the key, a default or a line.
func (k KeyMap) Rebind(binds []Rebinding) (KeyMap, error) {
	actions := map[string]Action{}
	for _, a := range Actions() {
		actions[a.Name] = a
	}
	where := map[string]string{} // action → the line that rebound it
	var errs []error
	for _, r := range binds {
		a, ok := actions[r.Action]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: unknown action %q in [keys]; the actions are %s", r.Where, r.Action, strings.Join(names(), ", ")))
			continue
		}
		if w, twice := where[r.Action]; twice {
			errs = append(errs, fmt.Errorf("%s: %s is rebound twice (also %s); keep one line", r.Where, r.Action, w))
			continue
		}
		if len(r.Keys) == 0 {
			errs = append(errs, fmt.Errorf("%s: %s = []: give at least one key, or leave the line out to keep %s", r.Where, r.Action, a.Binding(&k).Help().Key))
			continue
		}
		bad := false
		for _, name := range r.Keys {
			if err := ValidKey(name); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %v", r.Where, r.Action, err))
				bad = true
			}
		}
		if bad {
			continue
		}
		b := a.Binding(&k)
		*b = key.NewBinding(key.WithKeys(slices.Compact(slices.Clone(r.Keys))...), key.WithHelp(HelpKey(r.Keys), b.Help().Desc))
		where[r.Action] = r.Where
	}
	if err := clashes(k, where); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return k, errors.Join(errs...)
	}
	return k, nil
}

// clashes returns an error for each key bound to two actions of k, led by
// the line of the file (where) that gave it the second time, and naming
// where the other action got it: a line, or its default.
func clashes(k KeyMap, where map[string]string) error {
	owner := map[string]string{}
	var errs []error
	for _, a := range Actions() {
		for _, name := range a.Binding(&k).Keys() {
			other, taken := owner[name]
			if !taken {
				owner[name] = a.Name
				continue
			}
			wOther, otherRebound := where[other]
			wMine, mineRebound := where[a.Name]
			switch {
			case otherRebound && mineRebound:
				errs = append(errs, fmt.Errorf("%s: %s takes key %q, which %s takes too (%s); give each key to one action", wMine, a.Name, name, other, wOther))
			case mineRebound:
				errs = append(errs, fmt.Errorf("%s: %s takes key %q, which is %s's by default; rebind %s too, in [keys]", wMine, a.Name, name, other, other))
			default:
				errs = append(errs, fmt.Errorf("%s: %s takes key %q, which is %s's by default; rebind %s too, in [keys]", wOther, other, name, a.Name, a.Name))
			}
		}
	}
	return errors.Join(errs...)
}

func names() []string {
	var out []string
	for _, a := range Actions() {
		out = append(out, a.Name)
	}
	return out
}

// namedKeys are the keys Bubble Tea names by a word (tea.Key.String).
var namedKeys = map[string]bool{
	"enter": true, "tab": true, "backspace": true, "esc": true, "space": true,
	"up": true, "down": true, "left": true, "right": true, "begin": true, "find": true,
	"insert": true, "delete": true, "select": true, "pgup": true, "pgdown": true, "home": true, "end": true,
}

// modifiers are the modifier prefixes in the order Bubble Tea writes them.
var modifiers = []string{"ctrl", "alt", "shift", "meta", "hyper", "super"}

// ValidKey returns an error when Bubble Tea never reports name as a key
// press (tea.Key.String): a printable character ("n", "N", "?"), a named
// key ("enter", "pgdown", "f5"), or either after modifiers in Bubble Tea's
// order ("ctrl+n", "alt+left", "ctrl+alt+x"). A shifted letter is the
// capital ("N", not "shift+n").
func ValidKey(name string) error {
	var mods []string
	base := name
	if len(name) > 1 {
		if i := strings.LastIndex(name[:len(name)-1], "+"); i >= 0 { // "ctrl++" is ctrl and +
			mods, base = strings.Split(name[:i], "+"), name[i+1:]
		}
	}
	at := 0
	for _, m := range mods {
		i := slices.Index(modifiers, m)
		if i < 0 {
			return fmt.Errorf("%q: unknown modifier %q; use %s, in that order (ctrl+alt+x)", name, m, strings.Join(modifiers, ", "))
		}
		if i < at {
			return fmt.Errorf("%q: write the modifiers in the order %s (ctrl+alt+x)", name, strings.Join(modifiers, ", "))
		}
		at = i + 1
	}
	switch {
	case namedKeys[base] || isFKey(base):
		return nil
	case utf8.RuneCountInString(base) == 1:
		r, _ := utf8.DecodeRuneInString(base)
		if !unicode.IsPrint(r) || r == ' ' {
			return fmt.Errorf("%q: not a key; write space, enter, tab or esc by name", name)
		}
		if len(mods) == 1 && mods[0] == "shift" && unicode.IsLetter(r) {
			return fmt.Errorf("%q: a shifted letter is its capital: write %q", name, string(unicode.ToUpper(r)))
		}
		return nil
	}
	return fmt.Errorf("%q: not a key; give a character (n, N, ?), a named key (enter, esc, tab, space, up, pgdown, home, f1…), or either after ctrl+ or alt+", name)
}

func isFKey(s string) bool {
	n, ok := strings.CutPrefix(s, "f")
	if !ok || n == "" || len(n) > 2 {
		return false
	}
	for _, r := range n {
		if r < '0' || r > '9' {
			return false
		}
	}
	return n != "0" && n[0] != '0'
}

// keySymbols are how help shows the named keys that have a symbol.
var keySymbols = map[string]string{
	"up": "↑", "down": "↓", "left": "←", "right": "→", "pgdown": "pgdn", "backspace": "⌫", "delete": "del",
}

// HelpKey returns how help shows keys: each by its name or symbol, joined
// with "/" ("k/↑", "pgdn/space").
func HelpKey(keys []string) string {
	shown := make([]string, 0, len(keys))
	for _, k := range keys {
		if s, ok := keySymbols[k]; ok {
			k = s
		}
		if !slices.Contains(shown, k) {
			shown = append(shown, k)
		}
	}
	return strings.Join(shown, "/")
}
