package lineinput

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
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

func press(m Model, msgs ...tea.KeyMsg) Model {
	for _, k := range msgs {
		m, _ = m.Update(k)
	}
	return m
}

func runes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

func TestEditing(t *testing.T) {
	m := press(newInput(40), runes("hello world"))
	if m.Value() != "hello world" {
		t.Fatalf("value %q", m.Value())
	}
	m = press(m, tea.KeyMsg{Type: tea.KeyCtrlW})
	if m.Value() != "hello " {
		t.Fatalf("ctrl+w: %q", m.Value())
	}
	m = press(m, tea.KeyMsg{Type: tea.KeyHome}, runes(">"), tea.KeyMsg{Type: tea.KeyEnd}, runes("there"))
	if m.Value() != ">hello there" {
		t.Fatalf("home/end: %q", m.Value())
	}
	m = press(m, tea.KeyMsg{Type: tea.KeyLeft}, tea.KeyMsg{Type: tea.KeyLeft}, tea.KeyMsg{Type: tea.KeyCtrlK})
	if m.Value() != ">hello the" {
		t.Fatalf("ctrl+k: %q", m.Value())
	}
	m = press(m, tea.KeyMsg{Type: tea.KeyCtrlU})
	if m.Value() != "" {
		t.Fatalf("ctrl+u: %q", m.Value())
	}
	m = press(m, runes("ab"), tea.KeyMsg{Type: tea.KeyBackspace}, tea.KeyMsg{Type: tea.KeyLeft}, tea.KeyMsg{Type: tea.KeyDelete})
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
	m := press(newInput(40), tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a\x1b[2Jb\tc\r\nd"), Paste: true})
	if m.Value() != "a[2Jb c\nd" {
		t.Fatalf("value %q", m.Value())
	}
	if v := m.View(); strings.ContainsAny(v, "\x1b\t\r\n") {
		t.Fatalf("view holds a control character: %q", v)
	}
	if !strings.Contains(m.View(), "c↵d") {
		t.Fatalf("a line break is not shown as ↵: %q", m.View())
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
	m = press(m, tea.KeyMsg{Type: tea.KeyHome})
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
	m := press(newInput(40), tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(msg), Paste: true})
	if m.Value() != msg {
		t.Fatalf("value %q, want %q", m.Value(), msg)
	}
	if v, want := m.View(), "send › fix ⚠ warnings 👍▏"; v != want {
		t.Fatalf("view %q, want %q", v, want)
	}
	m = press(m, tea.KeyMsg{Type: tea.KeyLeft}) // onto 👍, its skin tone with it
	if v, want := m.View(), "send › fix ⚠ warnings ▏👍"; v != want {
		t.Fatalf("after left: %q, want %q", v, want)
	}
	m = press(m, tea.KeyMsg{Type: tea.KeyRight}, tea.KeyMsg{Type: tea.KeyBackspace})
	if want := "fix ⚠️ warnings "; m.Value() != want {
		t.Fatalf("backspace left %q, want %q", m.Value(), want)
	}
	m.SetValue("⚠️!")
	m = press(m, tea.KeyMsg{Type: tea.KeyHome}, tea.KeyMsg{Type: tea.KeyDelete})
	if m.Value() != "!" {
		t.Fatalf("delete left %q, want %q", m.Value(), "!")
	}
}
