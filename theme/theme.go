// Package theme holds the dashboard's colour roles and the styles built from
// them. Each role has one colour for light terminals and one for dark ones;
// the styles are built for one background and one colour profile (Options),
// and built again when the terminal reports its background (the ui asks
// with Bubble Tea's tea.RequestBackgroundColor). Only the environment is
// read here (Detect): the terminal is never queried by this package.
//
// With NO_COLOR, or output that is not a terminal, every style renders
// plain text: the dashboard then relies on symbols, words and markers
// alone, never on colour. NO_COLOR forbids colour, not attributes, so
// search matches are then marked with the attribute-only Marks (reverse
// video).
package theme

import (
	"image/color"
	"reflect"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// LightDark is a colour role: a hex colour for light backgrounds and one
// for dark ones.
type LightDark struct {
	Light, Dark string
}

// Roles are the named colours of the dashboard.
type Roles struct {
	Text        LightDark // ordinary text
	Muted       LightDark // secondary text: headers, hints, help descriptions
	Accent      LightDark // titles, keys in help, the input prompt
	Border      LightDark // pane borders
	Selection   LightDark // background of the selected table row
	Running     LightDark // status running
	Completed   LightDark // status completed
	Errored     LightDark // status errored, operation errors
	Closed      LightDark // status closed
	Stopping    LightDark // a stop was requested; warnings
	Match       LightDark // background of a search match
	MatchActive LightDark // background of the current search match
	MatchText   LightDark // text on a search match
	Stderr      LightDark // unstyled lines that came from stderr
}

// DefaultRoles returns the dashboard's colours, chosen to keep contrast on
// both light and dark terminals.
func DefaultRoles() Roles {
	c := func(light, dark string) LightDark { return LightDark{Light: light, Dark: dark} }
	return Roles{
		Text:        c("#1f2328", "#e6edf3"),
		Muted:       c("#59636e", "#9198a1"),
		Accent:      c("#0550ae", "#58a6ff"),
		Border:      c("#8c959f", "#4d5560"),
		Selection:   c("#ddf4ff", "#1d3a5c"),
		Running:     c("#0550ae", "#58a6ff"),
		Completed:   c("#116329", "#3fb950"),
		Errored:     c("#b3141f", "#ff7b72"),
		Closed:      c("#59636e", "#9198a1"),
		Stopping:    c("#953800", "#f0883e"),
		Match:       c("#fff1a8", "#6e5a10"),
		MatchActive: c("#ffb020", "#e3b341"),
		MatchText:   c("#1f2328", "#0d1117"),
		Stderr:      c("#953800", "#f0a070"),
	}
}

// Options choose how styles render.
type Options struct {
	// Profile is the terminal's colour profile (colorprofile.Detect); Ascii
	// and below (NO_COLOR, not a terminal) render no colour and no
	// attribute at all.
	Profile colorprofile.Profile
	// Dark tells whether the terminal background is dark.
	Dark bool
	// Fixed says the user chose Dark (the config file's [theme]
	// background, Background.Apply): the terminal's report of its
	// background does not change it.
	Fixed bool
	// Roles are the colours; nil means DefaultRoles.
	Roles *Roles
}

// Styles are every style the dashboard draws with. Build them with New.
type Styles struct {
	// Options are what the styles were built for; the ui builds them
	// again with another Dark when the terminal reports its background.
	Options Options
	// NoColor is true when the profile is Ascii or below: styles render
	// plain text, and the ui strips SGR from agent output too.
	NoColor bool

	Text, Muted, Title, Border lipgloss.Style
	Header                     lipgloss.Style // table column headers
	Selected                   lipgloss.Style // the selected table row
	Running, Completed         lipgloss.Style
	Errored, Closed, Stopping  lipgloss.Style
	Warning, Error, Note       lipgloss.Style // message line
	Prompt                     lipgloss.Style // input prompt
	Cursor                     lipgloss.Style // input cursor cell
	Confirm                    lipgloss.Style // confirmation question
	HelpKey, HelpDesc, HelpSep lipgloss.Style
	Match, MatchActive         lipgloss.Style
	Stderr                     lipgloss.Style
	// MatchMark and MatchActiveMark mark search matches when NoColor is
	// set: reverse video, the current match also bold and underlined.
	MatchMark, MatchActiveMark Mark

	// Transcript entries (presets).
	Assistant, Thinking, Tool, ToolOutput, ToolError, Retry, Result lipgloss.Style
}

// New builds the styles for o. With NoColor every style is the empty one:
// no colour, no attribute.
func New(o Options) Styles {
	roles := DefaultRoles()
	if o.Roles != nil {
		roles = *o.Roles
	}
	noColor := o.Profile <= colorprofile.ASCII
	pick := roles.pick(o.Profile, o.Dark)
	st := func() lipgloss.Style { return lipgloss.NewStyle() }
	fg := func(c color.Color) lipgloss.Style { return st().Foreground(c) }
	s := Styles{
		Options:         o,
		NoColor:         noColor,
		MatchMark:       Mark{SGR: "7"},
		MatchActiveMark: Mark{SGR: "1;4;7"},
	}
	if noColor {
		return s // every style the empty one
	}
	s.Text = fg(pick.Text)
	s.Muted = fg(pick.Muted)
	s.Title = fg(pick.Accent).Bold(true)
	s.Border = fg(pick.Border)
	s.Header = fg(pick.Muted).Bold(true)
	s.Selected = st().Background(pick.Selection).Foreground(pick.Text).Bold(true)
	s.Running = fg(pick.Running)
	s.Completed = fg(pick.Completed)
	s.Errored = fg(pick.Errored)
	s.Closed = fg(pick.Closed)
	s.Stopping = fg(pick.Stopping).Bold(true)
	s.Warning = fg(pick.Stopping)
	s.Error = fg(pick.Errored).Bold(true)
	s.Note = fg(pick.Accent)
	s.Prompt = fg(pick.Accent).Bold(true)
	s.Cursor = st().Reverse(true)
	s.Confirm = fg(pick.Stopping).Bold(true)
	s.HelpKey = fg(pick.Accent).Bold(true)
	s.HelpDesc = fg(pick.Muted)
	s.HelpSep = fg(pick.Border)
	s.Match = st().Background(pick.Match).Foreground(pick.MatchText)
	s.MatchActive = st().Background(pick.MatchActive).Foreground(pick.MatchText).Bold(true)
	s.Stderr = fg(pick.Stderr)
	s.Assistant = fg(pick.Text)
	s.Thinking = fg(pick.Muted).Italic(true)
	s.Tool = fg(pick.Accent)
	s.ToolOutput = fg(pick.Muted)
	s.ToolError = fg(pick.Errored)
	s.Retry = fg(pick.Stopping)
	s.Result = fg(pick.Completed).Bold(true)
	return s
}

// picked are the roles' colours for one background and profile.
type picked struct {
	Text, Muted, Accent, Border, Selection        color.Color
	Running, Completed, Errored, Closed, Stopping color.Color
	Match, MatchActive, MatchText, Stderr         color.Color
}

// pick returns each role's colour for the background (dark), already in
// the profile's kind (an ANSI or 256-colour index, or the RGB it was): a
// style then draws the sequence the terminal takes, and Bubble Tea's
// renderer has nothing left to convert.
func (ro Roles) pick(profile colorprofile.Profile, dark bool) picked {
	var out picked
	src, dst := reflect.ValueOf(ro), reflect.ValueOf(&out).Elem()
	for i := 0; i < src.NumField(); i++ {
		c := src.Field(i).Interface().(LightDark)
		hex := c.Light
		if dark {
			hex = c.Dark
		}
		col := lipgloss.Color(hex)
		if profile > colorprofile.ASCII {
			col = profile.Convert(col)
		}
		dst.FieldByName(src.Type().Field(i).Name).Set(reflect.ValueOf(&col).Elem())
	}
	return out
}

// Mark draws text with SGR attributes only, never a colour, so that it may
// show with NO_COLOR. The zero Mark draws text unchanged.
type Mark struct {
	// SGR are the parameters of the sequence, e.g. "7" for reverse video.
	SGR string
}

// Render returns s between the Mark's SGR sequence and a reset. s must not
// hold SGR of its own: its reset would end the mark early.
func (k Mark) Render(s string) string {
	if k.SGR == "" || s == "" {
		return s
	}
	return "\x1b[" + k.SGR + "m" + s + "\x1b[m"
}

// Plain returns styles that render no colour and no attribute (search
// Marks excepted), as with NO_COLOR; tests use it for golden snapshots.
func Plain() Styles { return New(Options{Profile: colorprofile.ASCII, Dark: true}) }
