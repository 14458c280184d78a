package theme

import (
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/colorprofile"
)

// Detect returns the Options for a terminal on out in the environment
// environ (os.Environ()), from the environment alone: the colour profile
// as colorprofile.Detect finds it (TERM, COLORTERM, NO_COLOR, CLICOLOR,
// CLICOLOR_FORCE; output that is not a terminal, or TERM=dumb, gets no
// colour), and the background COLORFGBG names (dark when it names none,
// see DarkFromCOLORFGBG).
//
// Detect asks the terminal nothing, so nothing of a reply can reach the
// input: the dashboard asks for the background once its program reads the
// input (tea.RequestBackgroundColor in Init) and builds the styles again
// from the answer, which wins over COLORFGBG. A set CI variable does not
// turn colour off (VHS recordings made in CI keep their colours).
func Detect(out io.Writer, environ []string) Options {
	dark := true
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "COLORFGBG="); ok {
			if d, ok := DarkFromCOLORFGBG(v); ok {
				dark = d
			}
		}
	}
	return Options{Profile: colorprofile.Detect(out, environ), Dark: dark}
}

// DarkFromCOLORFGBG reads the background out of a COLORFGBG value
// ("15;0", "0;default;15": the last field is the background's ANSI colour
// number, as rxvt and Konsole set it). Colours 7 (white) and 9 to 15
// (the bright ones) are light, the others dark; ok is false when v names
// no colour number.
func DarkFromCOLORFGBG(v string) (dark, ok bool) {
	i := strings.LastIndexByte(v, ';')
	if i < 0 {
		return false, false
	}
	n, err := strconv.Atoi(v[i+1:])
	if err != nil || n < 0 || n > 255 {
		return false, false
	}
	light := n == 7 || n >= 9 && n <= 15
	return !light, true
}
