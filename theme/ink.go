package theme

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Ink is a style as the SGR before and after the text it styles, made
// once from a lipgloss.Style with InkOf. Drawing with it is two string
// joins where Style.Render measures and splits the text every time (the
// largest cost of a frame drawn with Render per cell or border): for
// what is drawn every frame, on one line of text without SGR of its own.
// It keeps a style's colours and attributes, nothing else (no padding,
// width or border). The zero Ink draws text unchanged.
type Ink struct{ Pre, Post string }

// InkOf returns the ink of st.
func InkOf(st lipgloss.Style) Ink {
	const marker = "\x00"
	s := st.Render(marker)
	i := strings.Index(s, marker)
	if i < 0 {
		return Ink{}
	}
	return Ink{s[:i], s[i+len(marker):]}
}

// On returns s drawn in the ink: s must be one line without SGR, as
// Render would draw it.
func (k Ink) On(s string) string {
	if k.Pre == "" || s == "" {
		return s
	}
	return k.Pre + s + k.Post
}
