package theme

import (
	"image/color"
	"os"
	"reflect"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
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
	for _, p := range []colorprofile.Profile{colorprofile.ASCII, colorprofile.NoTTY} {
		s := New(Options{Profile: p, Dark: true})
		if !s.NoColor {
			t.Fatalf("profile %v must set NoColor", p)
		}
		for name, st := range styles(s) {
			if got := st.Render("text"); got != "text" {
				t.Errorf("%v: %s renders %q without colour", p, name, got)
			}
		}
	}
}

func TestColoursAdaptToTheBackground(t *testing.T) {
	dark := New(Options{Profile: colorprofile.TrueColor, Dark: true})
	light := New(Options{Profile: colorprofile.TrueColor, Dark: false})
	if dark.NoColor || light.NoColor {
		t.Fatal("colour profiles must not set NoColor")
	}
	for name, st := range styles(dark) {
		d, l := st.Render("x"), styles(light)[name].Render("x")
		if !strings.Contains(d, "\x1b[") {
			t.Errorf("%s draws nothing with colour", name)
		}
		if name == "Text" && (d != "\x1b[38;2;230;237;243mx\x1b[m" || l != "\x1b[38;2;31;35;40mx\x1b[m") {
			t.Errorf("Text does not adapt: dark %q light %q", d, l)
		}
	}
}

func TestRolesHaveBothVariants(t *testing.T) {
	v := reflect.ValueOf(DefaultRoles())
	for i := 0; i < v.NumField(); i++ {
		c := v.Field(i).Interface().(LightDark)
		if c.Light == "" || c.Dark == "" || c.Light == c.Dark {
			t.Errorf("role %s: light %q dark %q", v.Type().Field(i).Name, c.Light, c.Dark)
		}
	}
}

// TestMarksDrawAttributesOnly: NO_COLOR forbids colour, not attributes;
// search matches are marked with reverse video even with the Ascii profile.
func TestMarksDrawAttributesOnly(t *testing.T) {
	s := New(Options{Profile: colorprofile.ASCII, Dark: true})
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
// gets no colour, whatever TERM, COLORTERM and CI say.
func TestDetectNotATerminal(t *testing.T) {
	env := []string{"TERM=xterm-256color", "COLORTERM=truecolor", "CI=true"}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
	if o := Detect(f, env); !New(o).NoColor {
		t.Fatalf("Detect(file).Profile = %v, want no colour", o.Profile)
	}
	if o := Detect(nil, env); !New(o).NoColor {
		t.Fatalf("Detect(nil).Profile = %v, want no colour", o.Profile)
	}
}

// TestDetectCOLORFGBG: the background COLORFGBG names is the guess until
// the terminal answers; without it the guess is dark.
func TestDetectCOLORFGBG(t *testing.T) {
	for v, dark := range map[string]bool{"": true, "15;0": true, "0;15": false, "0;default;7": false, "7;8": true, "15;default": true, "x": true} {
		env := []string{"TERM=xterm-256color"}
		if v != "" {
			env = append(env, "COLORFGBG="+v)
		}
		if got := Detect(nil, env).Dark; got != dark {
			t.Errorf("COLORFGBG=%q: Dark = %v, want %v", v, got, dark)
		}
	}
}

// The colours picked for a profile are the profile's own kind (an ANSI
// or 256-colour index, or RGB), so the renderer converts nothing, and each
// is the colour the profile converts the role's hex to.
func TestPickedColoursAreTheProfiles(t *testing.T) {
	kind := map[colorprofile.Profile]string{colorprofile.TrueColor: "\x1b[38;2;", colorprofile.ANSI256: "\x1b[38;5;", colorprofile.ANSI: "\x1b[3"}
	for p, prefix := range kind {
		for _, dark := range []bool{true, false} {
			got := reflect.ValueOf(DefaultRoles().pick(p, dark))
			roles := reflect.ValueOf(DefaultRoles())
			for i := 0; i < roles.NumField(); i++ {
				name := roles.Type().Field(i).Name
				c := roles.Field(i).Interface().(LightDark)
				hex := map[bool]string{true: c.Dark, false: c.Light}[dark]
				g := got.FieldByName(name).Interface().(color.Color)
				drawn := lipgloss.NewStyle().Foreground(g).Render("x")
				if want := lipgloss.NewStyle().Foreground(p.Convert(lipgloss.Color(hex))).Render("x"); drawn != want || !strings.HasPrefix(drawn, prefix) && !strings.HasPrefix(drawn, "\x1b[9") {
					t.Errorf("profile %v dark %v: %s draws %q, want %q (%q…)", p, dark, name, drawn, want, prefix)
				}
			}
		}
	}
}
