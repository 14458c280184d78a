// Package theme holds the dashboard's colour roles and the styles built from
// them. Colours are adaptive (one value for light terminals, one for dark
// ones); the background is detected by main.go before the program starts and
// passed in through Options; only Detect queries the terminal.
//
// With the Ascii profile (NO_COLOR, or output that is not a terminal) every
// lipgloss style renders plain text: the dashboard then relies on symbols,
// words and markers alone, never on colour. NO_COLOR forbids colour, not
// attributes, so search matches are then marked with the attribute-only
// Marks (reverse video), which lipgloss's Ascii renderer would drop.
package theme

import (
	"io"
	"reflect"
	"strconv"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Roles are the named colours of the dashboard. Each is adaptive: Light is
// used on light backgrounds, Dark on dark ones.
type Roles struct {
	Text        lipgloss.AdaptiveColor // ordinary text
	Muted       lipgloss.AdaptiveColor // secondary text: headers, hints, help descriptions
	Accent      lipgloss.AdaptiveColor // titles, keys in help, the input prompt
	Border      lipgloss.AdaptiveColor // pane borders
	Selection   lipgloss.AdaptiveColor // background of the selected table row
	Running     lipgloss.AdaptiveColor // status running
	Completed   lipgloss.AdaptiveColor // status completed
	Errored     lipgloss.AdaptiveColor // status errored, operation errors
	Closed      lipgloss.AdaptiveColor // status closed
	Stopping    lipgloss.AdaptiveColor // a stop was requested; warnings
	Match       lipgloss.AdaptiveColor // background of a search match
	MatchActive lipgloss.AdaptiveColor // background of the current search match
	MatchText   lipgloss.AdaptiveColor // text on a search match
	Stderr      lipgloss.AdaptiveColor // unstyled lines that came from stderr
}

// DefaultRoles returns the dashboard's colours, chosen to keep contrast on
// both light and dark terminals.
func DefaultRoles() Roles {
	c := func(light, dark string) lipgloss.AdaptiveColor {
		return lipgloss.AdaptiveColor{Light: light, Dark: dark}
	}
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
	// Profile is the terminal's colour profile; termenv.Ascii renders no
	// colour and no attribute at all (NO_COLOR).
	Profile termenv.Profile
	// Dark tells whether the terminal background is dark.
	Dark bool
	// Roles are the colours; the zero value means DefaultRoles.
	Roles *Roles
}

// Styles are every style the dashboard draws with. Build them with New.
type Styles struct {
	// NoColor is true when the profile is Ascii: styles render plain text,
	// and the ui strips SGR from agent output too.
	NoColor bool
	// Renderer is the lipgloss renderer the styles were built with.
	Renderer *lipgloss.Renderer

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

// New builds the styles for o.
func New(o Options) Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(o.Profile)
	r.SetHasDarkBackground(o.Dark)
	roles := DefaultRoles()
	if o.Roles != nil {
		roles = *o.Roles
	}
	roles = roles.resolved(o.Profile, o.Dark)
	st := func() lipgloss.Style { return r.NewStyle() }
	fg := func(c lipgloss.AdaptiveColor) lipgloss.Style { return st().Foreground(c) }
	return Styles{
		NoColor:         o.Profile == termenv.Ascii,
		Renderer:        r,
		Text:            fg(roles.Text),
		Muted:           fg(roles.Muted),
		Title:           fg(roles.Accent).Bold(true),
		Border:          fg(roles.Border),
		Header:          fg(roles.Muted).Bold(true),
		Selected:        st().Background(roles.Selection).Foreground(roles.Text).Bold(true),
		Running:         fg(roles.Running),
		Completed:       fg(roles.Completed),
		Errored:         fg(roles.Errored),
		Closed:          fg(roles.Closed),
		Stopping:        fg(roles.Stopping).Bold(true),
		Warning:         fg(roles.Stopping),
		Error:           fg(roles.Errored).Bold(true),
		Note:            fg(roles.Accent),
		Prompt:          fg(roles.Accent).Bold(true),
		Cursor:          st().Reverse(true),
		Confirm:         fg(roles.Stopping).Bold(true),
		HelpKey:         fg(roles.Accent).Bold(true),
		HelpDesc:        fg(roles.Muted),
		HelpSep:         fg(roles.Border),
		Match:           st().Background(roles.Match).Foreground(roles.MatchText),
		MatchActive:     st().Background(roles.MatchActive).Foreground(roles.MatchText).Bold(true),
		Stderr:          fg(roles.Stderr),
		MatchMark:       Mark{SGR: "7"},
		MatchActiveMark: Mark{SGR: "1;4;7"},
		Assistant:       fg(roles.Text),
		Thinking:        fg(roles.Muted).Italic(true),
		Tool:            fg(roles.Accent),
		ToolOutput:      fg(roles.Muted),
		ToolError:       fg(roles.Errored),
		Retry:           fg(roles.Stopping),
		Result:          fg(roles.Completed).Bold(true),
	}
}

// resolved returns the roles with each colour already converted for
// profile and the background (dark): both variants the colour the profile
// draws, as an ANSI or 256-colour number or the hex it was. The rendering
// is the same, but a style no longer converts a hex colour to the
// profile's on every Render (a nearest-colour search in HSLuv: 18 % of a
// frame of the dashboard with 1,000 agents, BENCHMARKS "A thousand
// agents"). With the Ascii profile the roles are kept: nothing is drawn.
func (ro Roles) resolved(profile termenv.Profile, dark bool) Roles {
	if profile == termenv.Ascii {
		return ro
	}
	v := reflect.ValueOf(&ro).Elem()
	for i := 0; i < v.NumField(); i++ {
		c, ok := v.Field(i).Interface().(lipgloss.AdaptiveColor)
		if !ok {
			continue
		}
		hex := c.Light
		if dark {
			hex = c.Dark
		}
		var to string
		switch pc := profile.Color(hex).(type) {
		case termenv.ANSIColor:
			to = strconv.Itoa(int(pc))
		case termenv.ANSI256Color:
			to = strconv.Itoa(int(pc))
		case termenv.RGBColor:
			to = string(pc)
		default:
			continue // not a colour the profile knows: left for lipgloss to say
		}
		v.Field(i).Set(reflect.ValueOf(lipgloss.AdaptiveColor{Light: to, Dark: to}))
	}
	return ro
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
func Plain() Styles { return New(Options{Profile: termenv.Ascii, Dark: true}) }
