package logview

import (
	"errors"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/keymap"
)

// said runs cmd (a command of the pane's Update) and returns the error its
// SearchMsg carries; it fails the test when cmd says nothing.
func said(t *testing.T, cmd tea.Cmd) error {
	t.Helper()
	if cmd == nil {
		t.Fatal("the key said nothing")
	}
	msg, ok := cmd().(SearchMsg)
	if !ok {
		t.Fatalf("the key's command returned %T, want a SearchMsg", cmd())
	}
	return msg.Err
}

// TestThePaneOwnsItsSearch: the match keys and esc go to the pane, which
// says through a SearchMsg when there is nothing to show; / then enter
// alone searches the last query again, or moves to the next match while it
// is the current one.
func TestThePaneOwnsItsSearch(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 30)
	m := newPane(t, src, 20, 5)
	next := tea.KeyPressMsg{Code: 'n', Mod: tea.ModCtrl}
	if !keymap.Matches(next, m.KeyMap) || !keymap.Matches(tea.KeyPressMsg{Code: tea.KeyEscape}, m.KeyMap) {
		t.Fatal("ctrl+n and esc are not the pane's keys")
	}
	m, cmd := m.Update(next)
	if err := said(t, cmd); !errors.Is(err, ErrNoSearch) {
		t.Fatalf("ctrl+n without a search said %v", err)
	}

	m.Search("nothing like it")
	var none *NoMatchError
	if err := answerScans(t, &m, src); !errors.As(err, &none) || none.Query != "nothing like it" || err.Error() != "no match for “nothing like it”" {
		t.Fatalf("a search without a match said %v", err)
	}
	m, cmd = m.Update(next)
	if err := said(t, cmd); !errors.As(err, &none) {
		t.Fatalf("ctrl+n with no match said %v", err)
	}

	search(t, &m, src, "line 2")
	if cur, n := m.Matches(); n != 11 || cur == 0 {
		t.Fatalf("match %d of %d, want one of 11 current", cur, n)
	}
	first, _ := m.CurrentMatch()
	if cmd := m.SearchAgain(); cmd != nil {
		t.Fatalf("enter alone with a match to go to said %v", said(t, cmd))
	}
	if again, _ := m.CurrentMatch(); again == first {
		t.Fatal("enter alone did not move to the next match")
	}

	m, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if err := said(t, cmd); err != nil || m.Query() != "" || m.LastQuery() != "line 2" {
		t.Fatalf("esc said %v; query %q, last %q", err, m.Query(), m.LastQuery())
	}
	m.SearchAgain()
	if m.Query() != "line 2" {
		t.Fatalf("enter alone after esc searches %q, want the last query again", m.Query())
	}
}

// TestScansOfAnEarlierQueryOrLogAreDropped: one Scan is out at a time;
// the answer to one asked before the query or the log changed is ignored;
// items that arrive are scanned from where the last answer ended.
func TestScansOfAnEarlierQueryOrLogAreDropped(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 10)
	m := newPane(t, src, 20, 5)
	m.Search("line 1")
	old, ok := m.NextScan()
	if !ok || old.From != 0 || old.Query != "line 1" {
		t.Fatalf("first scan %+v %v", old, ok)
	}
	if _, again := m.NextScan(); again {
		t.Fatal("a second scan while the first is out")
	}
	m.Search("line 2")
	if found, err := m.SetScan(old, []int64{1}, 10, nil); found || err != nil {
		t.Fatalf("the answer of an earlier query: %v %v", found, err)
	}
	if _, n := m.Matches(); n != 0 {
		t.Fatalf("%d matches of the earlier query kept", n)
	}
	sc, _ := m.NextScan()
	m.SetLog(State{Follow: true})
	if _, err := m.SetScan(sc, []int64{2}, 10, nil); err != nil {
		t.Fatal(err)
	}
	if _, n := m.Matches(); n != 0 || m.Query() != "line 2" {
		t.Fatalf("after SetLog: %d matches of the earlier log, query %q (kept)", n, m.Query())
	}
	serve(t, &m, src)
	if err := answerScans(t, &m, src); err != nil {
		t.Fatal(err)
	}
	src.add("line %d", 10, 30) // line 20 … line 29 arrive
	m.Changed()
	serve(t, &m, src)
	sc, ok = m.NextScan()
	if !ok || sc.From != 10 {
		t.Fatalf("the scan of what arrived: %+v %v, want from 10", sc, ok)
	}
	if _, err := m.SetScan(sc, nil, 30, errors.New("host gone")); err == nil || err.Error() != "host gone" {
		t.Fatalf("a failed scan said %v", err)
	}
}

func TestKeyMapsCoverTheirBindings(t *testing.T) {
	km := DefaultKeyMap()
	n := 0
	for _, col := range km.FullHelp() {
		n += len(col)
	}
	if n != 13 || len(km.ShortHelp()) == 0 {
		t.Fatalf("FullHelp has %d bindings, want the 13 of the KeyMap", n)
	}
	if keymap.Matches(tea.KeyPressMsg{Code: 'n', Text: "n"}, km) {
		t.Fatal("n (spawn) is not the pane's")
	}
}
