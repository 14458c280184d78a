package keymap

import (
	"reflect"
	"testing"

	"charm.land/bubbles/v2/key"
)

// bindings returns every key.Binding field of a key map struct by name.
func bindings(km any) map[string]key.Binding {
	out := map[string]key.Binding{}
	v := reflect.ValueOf(km)
	for i := 0; i < v.NumField(); i++ {
		if b, ok := v.Field(i).Interface().(key.Binding); ok {
			out[v.Type().Field(i).Name] = b
		}
	}
	return out
}

func checkNoConflicts(t *testing.T, name string, km any) {
	t.Helper()
	owner := map[string]string{}
	for field, b := range bindings(km) {
		if len(b.Keys()) == 0 {
			t.Errorf("%s.%s has no key", name, field)
		}
		if h := b.Help(); h.Key == "" || h.Desc == "" {
			t.Errorf("%s.%s has no help", name, field)
		}
		for _, k := range b.Keys() {
			if other, ok := owner[k]; ok {
				t.Errorf("%s: key %q is bound to both %s and %s", name, k, other, field)
			}
			owner[k] = field
		}
	}
}

func TestNoConflictingKeys(t *testing.T) {
	checkNoConflicts(t, "KeyMap", DefaultKeyMap())
	checkNoConflicts(t, "Input", DefaultInput())
	checkNoConflicts(t, "Question", DefaultQuestion())
	checkNoConflicts(t, "Confirm", DefaultConfirm())
	checkNoConflicts(t, "HelpOverlay", DefaultHelpOverlay())
}

func TestSpecKeys(t *testing.T) {
	k := DefaultKeyMap()
	for _, c := range []struct {
		b    key.Binding
		keys []string
	}{
		{k.Spawn, []string{"n"}}, {k.Send, []string{"s"}}, {k.Interrupt, []string{"i"}}, {k.Close, []string{"c"}},
		{k.Resume, []string{"r"}}, {k.Down, []string{"j", "down"}}, {k.Up, []string{"k", "up"}},
		{k.Search, []string{"/"}}, {k.Help, []string{"?"}}, {k.Quit, []string{"q", "ctrl+c"}},
	} {
		if !reflect.DeepEqual(c.b.Keys(), c.keys) {
			t.Errorf("%s bound to %v, want %v (SPEC §7)", c.b.Help().Desc, c.b.Keys(), c.keys)
		}
	}
}

func TestFullHelpListsEveryBinding(t *testing.T) {
	k := DefaultKeyMap()
	listed := map[string]bool{}
	for _, g := range k.Groups() {
		for _, b := range g.Bindings {
			listed[b.Help().Key+" "+b.Help().Desc] = true
		}
	}
	for field, b := range bindings(k) {
		if !listed[b.Help().Key+" "+b.Help().Desc] {
			t.Errorf("%s is missing from the full help", field)
		}
	}
	if len(k.FullHelp()) != len(k.Groups()) {
		t.Error("FullHelp and Groups disagree")
	}
}

func TestConfirmWithHelp(t *testing.T) {
	c := DefaultConfirm().WithHelp("close", "keep it")
	if c.Yes.Help().Desc != "close" || c.No.Help().Desc != "keep it" {
		t.Fatal("WithHelp did not name the answers")
	}
	if DefaultConfirm().Yes.Help().Desc != "yes" {
		t.Fatal("WithHelp changed the defaults")
	}
}
