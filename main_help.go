package main

import (
	"image/color"

	"charm.land/fang/v2"
	"charm.land/lipgloss/v2"

	"github.com/subdash/subdash/theme"
)

// colorScheme is fang's colours for help, from the dashboard's colour
// roles (theme.DefaultRoles), so that help looks like subdash.
func colorScheme(ld lipgloss.LightDarkFunc) fang.ColorScheme {
	r := theme.DefaultRoles()
	c := func(role theme.LightDark) color.Color {
		return ld(lipgloss.Color(role.Light), lipgloss.Color(role.Dark))
	}
	return fang.ColorScheme{
		Base:           c(r.Text),
		Title:          c(r.Accent),
		Description:    c(r.Text),
		Codeblock:      c(r.Selection),
		Program:        c(r.Accent),
		Command:        c(r.Completed),
		DimmedArgument: c(r.Muted),
		Comment:        c(r.Muted),
		Flag:           c(r.Stopping),
		FlagDefault:    c(r.Muted),
		QuotedString:   c(r.Completed),
		Argument:       c(r.Text),
		Help:           c(r.Text),
		Dash:           c(r.Muted),
		ErrorHeader:    [2]color.Color{c(r.MatchText), c(r.Errored)},
		ErrorDetails:   c(r.Errored),
	}
}
