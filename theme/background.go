package theme

import (
	"fmt"
	"strings"
)

// Background is the config file's [theme] background: the background the
// dashboard draws for. NO_COLOR still wins: without colour there is none
// to choose.
type Background string

// The backgrounds of [theme].
const (
	// BackgroundAuto asks the terminal (OSC 11), else COLORFGBG, else
	// dark (SPEC §7): the default.
	BackgroundAuto Background = "auto"
	// BackgroundDark draws for a dark background whatever the terminal says.
	BackgroundDark Background = "dark"
	// BackgroundLight draws for a light background whatever the terminal says.
	BackgroundLight Background = "light"
)

// ParseBackground returns the Background s names; an error naming the
// three otherwise. "" is BackgroundAuto.
func ParseBackground(s string) (Background, error) {
	switch b := Background(strings.TrimSpace(s)); b {
	case "", BackgroundAuto:
		return BackgroundAuto, nil
	case BackgroundDark, BackgroundLight:
		return b, nil
	}
	return "", fmt.Errorf("unknown background %q: use auto, dark or light", s)
}

// Apply returns o drawn for b: Dark set and Fixed for dark and light, o
// unchanged for auto.
func (b Background) Apply(o Options) Options {
	switch b {
	case BackgroundDark, BackgroundLight:
		o.Dark, o.Fixed = b == BackgroundDark, true
	}
	return o
}
