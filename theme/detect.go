package theme

import (
	"os"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"
)

// Detect returns the Options for the terminal on out: its colour profile
// from TERM and COLORTERM, NO_COLOR and CLICOLOR_FORCE honoured, and whether
// its background is dark (asked with OSC 11; dark when the terminal does not
// answer). Output that is not a terminal gets the Ascii profile.
//
// Detect asks the terminal, so call it before anything else reads the
// terminal's input (Bubble Tea would receive the reply as keys). It sets
// what it found on lipgloss's default renderer too, which bubbles' own
// styles use: that renderer would otherwise ask the terminal again, which
// costs up to 5 s on a terminal that does not answer.
//
// Unlike termenv's default detection, a set CI variable does not turn colour
// off: termenv takes CI to mean "not a terminal", but the dashboard only runs
// on a real terminal, and VHS recordings made in CI (GitHub Actions sets
// CI=true) must keep their colours. Whether out is a terminal is checked
// directly instead.
func Detect(out *os.File) Options {
	if out == nil || !term.IsTerminal(out.Fd()) {
		return Options{Profile: termenv.Ascii, Dark: true}
	}
	o := termenv.NewOutput(out, termenv.WithTTY(true))
	opts := Options{Profile: o.EnvColorProfile()}
	term := os.Getenv("TERM")
	multiplexer := strings.HasPrefix(term, "tmux") || strings.HasPrefix(term, "screen")
	switch {
	case multiplexer:
		// termenv never asks under TERM=tmux* or screen* (for fear of a
		// Linux console behind them), so a light tmux pane got the dark
		// colours: near-white text on white. tmux answers OSC 11 with the
		// pane's background; a terminal that does not answers the cursor
		// position query termenv sends after it, so nothing waits.
		q := termenv.NewOutput(out, termenv.WithTTY(true), termenv.WithEnvironment(termAs{"xterm-256color"}))
		opts.Dark = q.HasDarkBackground()
	case os.Getenv("CI") == "":
		// Bubble Tea's init asked the terminal already, through
		// lipgloss's default renderer, which keeps the answer: asking
		// again would cost a second round trip (5 s when nothing answers).
		opts.Dark = lipgloss.HasDarkBackground()
	default:
		// That renderer skipped the question, taking CI for "not a
		// terminal".
		opts.Dark = o.HasDarkBackground()
	}
	lipgloss.SetColorProfile(opts.Profile)
	lipgloss.SetHasDarkBackground(opts.Dark)
	return opts
}

// termAs is the process environment with TERM replaced, for termenv's
// background query under a terminal multiplexer.
type termAs struct{ term string }

// Getenv returns the variable key, TERM replaced.
func (e termAs) Getenv(key string) string {
	if key == "TERM" {
		return e.term
	}
	return os.Getenv(key)
}

// Environ returns the environment, TERM replaced.
func (e termAs) Environ() []string {
	env := []string{"TERM=" + e.term}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TERM=") {
			env = append(env, kv)
		}
	}
	return env
}
