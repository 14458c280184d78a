package lineinput

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/subdash/subdash/theme"
)

func newInput(w int) Model {
	m := New(DefaultStyles(theme.Plain()))
	m.Prompt = "send › "
	m.SetWidth(w)
	m.Focus()
	return m
}

func press(m Model, msgs ...tea.Msg) Model {
	for _, k := range msgs {
		m, _ = m.Update(k)
	}
	return m
}

// runes is text typed as one key, as a grapheme of several runes arrives.
func runes(s string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: tea.KeyExtended, Text: s} }

func TestEditing(t *testing.T) {
	m := press(newInput(40), runes("hello world"))
	if m.Value() != "hello world" {
		t.Fatalf("value %q", m.Value())
	}
	m = press(m, tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl})
	if m.Value() != "hello " {
		t.Fatalf("ctrl+w: %q", m.Value())
	}
	m = press(m, tea.KeyPressMsg{Code: tea.KeyHome}, runes(">"), tea.KeyPressMsg{Code: tea.KeyEnd}, runes("there"))
	if m.Value() != ">hello there" {
		t.Fatalf("home/end: %q", m.Value())
	}
	m = press(m, tea.KeyPressMsg{Code: tea.KeyLeft}, tea.KeyPressMsg{Code: tea.KeyLeft}, tea.KeyPressMsg{Code: 'k', Mod: tea.ModCtrl})
	if m.Value() != ">hello the" {
		t.Fatalf("ctrl+k: %q", m.Value())
	}
	m = press(m, tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	if m.Value() != "" {
		t.Fatalf("ctrl+u: %q", m.Value())
	}
	m = press(m, runes("ab"), tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyLeft}, tea.KeyPressMsg{Code: tea.KeyDelete})
	if m.Value() != "" {
		t.Fatalf("backspace/delete: %q", m.Value())
	}
}

func TestBlurredIgnoresKeys(t *testing.T) {
	m := newInput(40)
	m.Blur()
	if m = press(m, runes("x")); m.Value() != "" {
		t.Fatal("a blurred input took a key")
	}
}

func TestControlCharactersAreDropped(t *testing.T) {
	m := press(newInput(40), tea.PasteMsg{Content: "a\x1b[2Jb\tc\r\nd"})
	if m.Value() != "a[2Jb\tc\nd" {
		t.Fatalf("value %q", m.Value())
	}
	if v := m.View(); strings.ContainsAny(v, "\x1b\t\r\n") {
		t.Fatalf("view holds a control character: %q", v)
	}
	if !strings.Contains(m.View(), "b⇥c↵d") {
		t.Fatalf("a tab is not shown as ⇥ or a line break as ↵: %q", m.View())
	}
}

func TestViewFitsAndFollowsTheCursor(t *testing.T) {
	m := press(newInput(20), runes(strings.Repeat("abcdefghij", 5)+"XYZ"))
	v := m.View()
	if w := ansi.StringWidth(v); w > 20 {
		t.Fatalf("view is %d cells wide: %q", w, v)
	}
	if !strings.Contains(v, "XYZ") {
		t.Fatalf("the cursor's end is not visible: %q", v)
	}
	m = press(m, tea.KeyPressMsg{Code: tea.KeyHome})
	if v := m.View(); !strings.Contains(v, "▏abc") || ansi.StringWidth(v) > 20 {
		t.Fatalf("after home: %q", v)
	}
	wide := press(newInput(12), runes("日本語日本語日本語"))
	if w := ansi.StringWidth(wide.View()); w > 12 {
		t.Fatalf("wide characters overflow: %d cells", w)
	}
	tiny := newInput(3)
	if w := ansi.StringWidth(tiny.View()); w > 3 {
		t.Fatalf("tiny input overflows: %q", tiny.View())
	}
}

func TestPlaceholder(t *testing.T) {
	m := newInput(40)
	m.Placeholder = "message"
	if v := m.View(); v != "send › ▏message" {
		t.Fatalf("view %q", v)
	}
}

// TestWidthAmbiguousCodePointsAreNotDrawn: VS16, skin tones and ZWJ make
// terminals disagree on a character's width. The view leaves them out, the
// cursor steps over them with the character they belong to, and the value
// keeps every code point as typed.
func TestWidthAmbiguousCodePointsAreNotDrawn(t *testing.T) {
	const msg = "fix ⚠️ warnings 👍🏽"
	m := press(newInput(40), tea.PasteMsg{Content: msg})
	if m.Value() != msg {
		t.Fatalf("value %q, want %q", m.Value(), msg)
	}
	if v, want := m.View(), "send › fix ⚠ warnings 👍▏"; v != want {
		t.Fatalf("view %q, want %q", v, want)
	}
	m = press(m, tea.KeyPressMsg{Code: tea.KeyLeft}) // onto 👍, its skin tone with it
	if v, want := m.View(), "send › fix ⚠ warnings ▏👍"; v != want {
		t.Fatalf("after left: %q, want %q", v, want)
	}
	m = press(m, tea.KeyPressMsg{Code: tea.KeyRight}, tea.KeyPressMsg{Code: tea.KeyBackspace})
	if want := "fix ⚠️ warnings "; m.Value() != want {
		t.Fatalf("backspace left %q, want %q", m.Value(), want)
	}
	m.SetValue("⚠️!")
	m = press(m, tea.KeyPressMsg{Code: tea.KeyHome}, tea.KeyPressMsg{Code: tea.KeyDelete})
	if m.Value() != "!" {
		t.Fatalf("delete left %q, want %q", m.Value(), "!")
	}
}

// tabbed are messages whose tabs matter: a Makefile, a diff, Go code.
var tabbed = []string{
	"first line\nsecond line\n\tthird",
	"\t",
	"\t\t\n\t",
	"all:\n\tgo build ./...\n\tgo test ./...\n",
	"--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-\treturn 1\n+\treturn 2",
	"func f() {\n\tif x {\n\t\treturn\n\t}\n}",
	"col1\tcol2\t\tcol4\t",
	"日本\t語 ⚠️\t👍🏽\n\t",
}

// TestTabsRoundTrip: "edit & resend" preloads the previous message with
// SetValue and sends Value; moving the cursor around and resending must
// give back the message exactly, tabs included.
func TestTabsRoundTrip(t *testing.T) {
	for _, msg := range tabbed {
		m := newInput(30)
		m.SetValue(msg)
		if m.Value() != msg {
			t.Errorf("SetValue(%q): Value = %q", msg, m.Value())
		}
		m = press(m, tea.KeyPressMsg{Code: tea.KeyHome}, tea.KeyPressMsg{Code: tea.KeyRight}, tea.KeyPressMsg{Code: tea.KeyRight},
			tea.KeyPressMsg{Code: tea.KeyRight, Mod: tea.ModCtrl}, tea.KeyPressMsg{Code: tea.KeyEnd}, tea.KeyPressMsg{Code: tea.KeyLeft})
		resent := newInput(30)
		resent.SetValue(m.Value())
		if resent.Value() != msg {
			t.Errorf("%q after moving the cursor and resending: %q", msg, resent.Value())
		}
	}
}

// TestPasteKeepsTabs: a bracketed paste keeps its tabs, at the end of the
// text or in the middle of it.
func TestPasteKeepsTabs(t *testing.T) {
	for _, msg := range tabbed {
		paste := tea.PasteMsg{Content: msg}
		m := press(newInput(30), runes("<>"), paste)
		if want := "<>" + msg; m.Value() != want {
			t.Errorf("paste at the end: %q, want %q", m.Value(), want)
		}
		m = press(newInput(30), runes("<>"), tea.KeyPressMsg{Code: tea.KeyLeft}, paste)
		if want := "<" + msg + ">"; m.Value() != want {
			t.Errorf("paste in the middle: %q, want %q", m.Value(), want)
		}
	}
	m := press(newInput(30), tea.PasteMsg{Content: "a\tb\r\n\tc"})
	if m.Value() != "a\tb\n\tc" {
		t.Errorf("paste with CRLF: %q", m.Value())
	}
}

// TestTypingAfterTab: a tab is one character and one cell, so the cursor
// steps over it in one move and what is typed after it lands after it.
func TestTypingAfterTab(t *testing.T) {
	m := newInput(40)
	m.SetValue("a\tb")
	m = press(m, tea.KeyPressMsg{Code: tea.KeyHome}, tea.KeyPressMsg{Code: tea.KeyRight}, tea.KeyPressMsg{Code: tea.KeyRight}, runes("x"))
	if m.Value() != "a\txb" {
		t.Fatalf("typed after the tab: %q", m.Value())
	}
	if v, want := m.View(), "send › a⇥x▏b"; v != want {
		t.Fatalf("view %q, want %q", v, want)
	}
	m = press(m, tea.KeyPressMsg{Code: tea.KeyLeft}, runes("y"))
	if v, want := m.View(), "send › a⇥y▏xb"; m.Value() != "a\tyxb" || v != want {
		t.Fatalf("typed right after the tab: %q, view %q; want %q", m.Value(), v, want)
	}
	m = press(m, tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace})
	if v, want := m.View(), "send › a▏xb"; m.Value() != "axb" || v != want {
		t.Fatalf("backspace over the tab: %q, view %q; want %q", m.Value(), v, want)
	}
	m.SetValue("\t\t")
	m = press(m, tea.KeyPressMsg{Code: tea.KeyLeft}, runes("z"))
	if v, want := m.View(), "send › ⇥z▏⇥"; m.Value() != "\tz\t" || v != want {
		t.Fatalf("typed between two tabs: %q, view %q; want %q", m.Value(), v, want)
	}
}

// TestTabsViewFitsWidth: whatever the width and the cursor, a view of text
// with tabs holds no tab (whose width depends on the column) and never
// exceeds its width, and the cursor stays visible.
func TestTabsViewFitsWidth(t *testing.T) {
	for _, msg := range append(tabbed, strings.Repeat("\t", 50), strings.Repeat("x\t日\t", 20)) {
		for w := 1; w <= 30; w++ {
			m := newInput(w)
			m.SetValue(msg)
			for c := 0; c <= len(m.value); c++ {
				m.cursor = c
				v := m.View()
				if strings.ContainsAny(v, "\t\n") {
					t.Fatalf("%q, width %d, cursor %d: view holds a tab or line break: %q", msg, w, c, v)
				}
				if got := ansi.StringWidth(v); got > w {
					t.Fatalf("%q, width %d, cursor %d: view is %d cells: %q", msg, w, c, got, v)
				}
				if w >= ansi.StringWidth(m.Prompt)+2 && !strings.Contains(v, "▏") {
					t.Fatalf("%q, width %d, cursor %d: no cursor in %q", msg, w, c, v)
				}
			}
		}
	}
}

// TestTypedTab: the Tab key types a tab, as a paste of one would.
func TestTypedTab(t *testing.T) {
	m := newInput(40)
	m = press(m, runes("a"), tea.KeyPressMsg{Code: tea.KeyTab}, runes("b"))
	if m.Value() != "a\tb" || m.View() != "send › a⇥b▏" {
		t.Fatalf("typed a, tab, b: %q, view %q", m.Value(), m.View())
	}
}
