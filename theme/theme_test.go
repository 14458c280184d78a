package theme

import (
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// styles returns every lipgloss.Style field of s.
func styles(s Styles) map[string]lipgloss.Style {
	out := map[string]lipgloss.Style{}
	v := reflect.ValueOf(s)
	for i := 0; i < v.NumField(); i++ {
		if st, ok := v.Field(i).Interface().(lipgloss.Style); ok {
			out[v.Type().Field(i).Name] = st
		}
	}
	return out
}

func TestNoColorRendersPlainText(t *testing.T) {
	s := New(Options{Profile: termenv.Ascii, Dark: true})
	if !s.NoColor {
		t.Fatal("Ascii profile must set NoColor")
	}
	for name, st := range styles(s) {
		if got := st.Render("text"); got != "text" {
			t.Errorf("%s renders %q without colour", name, got)
		}
	}
}

func TestColoursAdaptToTheBackground(t *testing.T) {
	dark := New(Options{Profile: termenv.TrueColor, Dark: true})
	light := New(Options{Profile: termenv.TrueColor, Dark: false})
	if dark.NoColor || light.NoColor {
		t.Fatal("colour profiles must not set NoColor")
	}
	for name, st := range styles(dark) {
		d, l := st.Render("x"), styles(light)[name].Render("x")
		if !strings.Contains(d, "\x1b[") {
			t.Errorf("%s draws nothing with colour", name)
		}
		if fg := DefaultRoles().Text; name == "Text" && (d == l || !strings.Contains(d, "38;2;")) {
			t.Errorf("Text does not adapt: dark %q light %q (%v)", d, l, fg)
		}
	}
}

func TestRolesHaveBothVariants(t *testing.T) {
	v := reflect.ValueOf(DefaultRoles())
	for i := 0; i < v.NumField(); i++ {
		c := v.Field(i).Interface().(lipgloss.AdaptiveColor)
		if c.Light == "" || c.Dark == "" || c.Light == c.Dark {
			t.Errorf("role %s: light %q dark %q", v.Type().Field(i).Name, c.Light, c.Dark)
		}
	}
}

// TestMarksDrawAttributesOnly: NO_COLOR forbids colour, not attributes;
// search matches are marked with reverse video even with the Ascii profile.
func TestMarksDrawAttributesOnly(t *testing.T) {
	s := New(Options{Profile: termenv.Ascii, Dark: true})
	if got := s.MatchMark.Render("hit"); got != "\x1b[7mhit\x1b[m" {
		t.Errorf("MatchMark renders %q", got)
	}
	if got := s.MatchActiveMark.Render("hit"); got != "\x1b[1;4;7mhit\x1b[m" {
		t.Errorf("MatchActiveMark renders %q", got)
	}
	if got := (Mark{}).Render("hit"); got != "hit" {
		t.Errorf("the zero Mark renders %q", got)
	}
}

// TestDetectNotATerminal: output that is not a terminal (a pipe, a file)
// gets no colour, whatever TERM and CI say.
func TestDetectNotATerminal(t *testing.T) {
	t.Setenv("TERM", "xterm-256color")
	t.Setenv("COLORTERM", "truecolor")
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
	if o := Detect(f); o.Profile != termenv.Ascii {
		t.Fatalf("Detect(file).Profile = %v, want Ascii", o.Profile)
	}
	if o := Detect(nil); o.Profile != termenv.Ascii {
		t.Fatalf("Detect(nil).Profile = %v, want Ascii", o.Profile)
	}
}

// The roles resolved for a profile draw what the adaptive colours drew,
// for every style, profile and background.
func TestResolvedColoursDrawTheSame(t *testing.T) {
	for _, p := range []termenv.Profile{termenv.TrueColor, termenv.ANSI256, termenv.ANSI} {
		for _, dark := range []bool{true, false} {
			got := New(Options{Profile: p, Dark: dark})
			r := lipgloss.NewRenderer(io.Discard)
			r.SetColorProfile(p)
			r.SetHasDarkBackground(dark)
			roles := DefaultRoles()
			for name, st := range styles(got) {
				// the same style on unresolved roles: rebuild it from
				// the adaptive colour whose resolved form it holds
				want := st.Render("x")
				fg, bg := st.GetForeground(), st.GetBackground()
				base := r.NewStyle().Bold(st.GetBold()).Italic(st.GetItalic()).Reverse(st.GetReverse())
				if c, ok := fg.(lipgloss.AdaptiveColor); ok {
					base = base.Foreground(unresolved(t, roles, p, dark, c))
				}
				if c, ok := bg.(lipgloss.AdaptiveColor); ok {
					base = base.Background(unresolved(t, roles, p, dark, c))
				}
				if old := base.Render("x"); old != want {
					t.Errorf("profile %v dark %v: %s draws %q, the adaptive colours drew %q", p, dark, name, want, old)
				}
			}
		}
	}
}

// unresolved returns the role of roles that resolves to c.
func unresolved(t *testing.T, roles Roles, p termenv.Profile, dark bool, c lipgloss.AdaptiveColor) lipgloss.AdaptiveColor {
	t.Helper()
	v, rv := reflect.ValueOf(roles), reflect.ValueOf(roles.resolved(p, dark))
	for i := 0; i < v.NumField(); i++ {
		if rv.Field(i).Interface() == c {
			return v.Field(i).Interface().(lipgloss.AdaptiveColor)
		}
	}
	t.Fatalf("no role resolves to %v", c)
	return c
}
