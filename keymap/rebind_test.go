package keymap

import (
	"slices"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// TestActionsNameEveryBinding: every binding of KeyMap has a [keys] name,
// one each, so that the config file can rebind any key.
func TestActionsNameEveryBinding(t *testing.T) {
	k := DefaultKeyMap()
	named := map[string]string{}
	for _, a := range Actions() {
		h := a.Binding(&k).Help()
		if other, ok := named[h.Key+h.Desc]; ok {
			t.Errorf("%s and %s name one binding", other, a.Name)
		}
		named[h.Key+h.Desc] = a.Name
	}
	for field, b := range bindings(k) {
		if _, ok := named[b.Help().Key+b.Help().Desc]; !ok {
			t.Errorf("KeyMap.%s has no action name", field)
		}
	}
}

// TestRebind: a rebound action answers its new keys only, and help shows
// them; the rest keep SPEC §7's.
func TestRebind(t *testing.T) {
	k, err := DefaultKeyMap().Rebind([]Rebinding{{Action: "spawn", Keys: []string{"N", "ctrl+n"}, Where: "line 2"}, {Action: "next-match", Keys: []string{"ctrl+j"}}})
	if err != nil {
		t.Fatal(err)
	}
	press := func(s string) tea.KeyPressMsg {
		if len(s) == 1 {
			return tea.KeyPressMsg{Code: rune(s[0]), Text: s}
		}
		return tea.KeyPressMsg{Code: 'n', Mod: tea.ModCtrl}
	}
	if !key.Matches(press("N"), k.Spawn) || !key.Matches(press("ctrl+n"), k.Spawn) || key.Matches(press("n"), k.Spawn) {
		t.Errorf("spawn bound to %v", k.Spawn.Keys())
	}
	if got := k.Spawn.Help(); got.Key != "N/ctrl+n" || got.Desc != "spawn" {
		t.Errorf("spawn's help %+v", got)
	}
	if !slices.Equal(k.Send.Keys(), []string{"s"}) {
		t.Errorf("send changed: %v", k.Send.Keys())
	}
	if !slices.Equal(DefaultKeyMap().Spawn.Keys(), []string{"n"}) {
		t.Error("Rebind changed the defaults")
	}
}

// TestRebindClash: two actions on one key is an error naming both and
// where each got the key.
func TestRebindClash(t *testing.T) {
	_, err := DefaultKeyMap().Rebind([]Rebinding{{Action: "spawn", Keys: []string{"x"}, Where: "f line 2"}, {Action: "send", Keys: []string{"x"}, Where: "f line 3"}})
	if err == nil || !strings.Contains(err.Error(), `f line 3: send takes key "x", which spawn takes too (f line 2)`) {
		t.Errorf("clash of two lines: %v", err)
	}
	_, err = DefaultKeyMap().Rebind([]Rebinding{{Action: "forget", Keys: []string{"q"}, Where: "f line 5"}})
	if err == nil || !strings.Contains(err.Error(), `f line 5: forget takes key "q", which is quit's by default; rebind quit too`) {
		t.Errorf("clash with a default: %v", err)
	}
	if _, err := DefaultKeyMap().Rebind([]Rebinding{{Action: "forget", Keys: []string{"q"}}, {Action: "quit", Keys: []string{"Q"}}}); err != nil {
		t.Errorf("a key moved from its default action: %v", err)
	}
}

// TestValidKey: the names Bubble Tea reports are taken, others are
// refused with the way to write them.
func TestValidKey(t *testing.T) {
	for _, ok := range []string{"n", "N", "?", "+", "ctrl++", "ctrl+n", "alt+left", "ctrl+alt+x", "enter", "space", "pgdown", "f5", "f12", "é"} {
		if err := ValidKey(ok); err != nil {
			t.Errorf("ValidKey(%q): %v", ok, err)
		}
	}
	for bad, says := range map[string]string{
		"shift+n": `write "N"`, "alt+ctrl+x": "in the order", "cmd+x": "unknown modifier", "return": "not a key",
		" ": "by name", "f0": "not a key", "": "not a key",
	} {
		if err := ValidKey(bad); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ValidKey(%q) = %v, want %q", bad, err, says)
		}
	}
}
