package screen

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// kittyFlags are the kitty keyboard protocol's flags the dashboard asks
// for: disambiguated escape codes only (ctrl+i is not tab), as Bubble
// Tea asks for by default.
const kittyFlags = 1

// enter queues, before the first frame, the modes the dashboard runs in:
// the alternate screen (saving the cursor), the cursor hidden, bracketed
// paste, focus reports, the mouse where Options.Mouse, modifyOtherKeys and
// the kitty keyboard flags, and, once, the question whether the terminal
// has synchronized output and grapheme widths (the answers come back as
// tea.ModeReportMsg: Report).
func (s *Screen) enter() {
	s.r.EnterAltScreen()
	var b strings.Builder // after the switch: some terminals keep a cursor per screen
	b.WriteString(ansi.ResetModeTextCursorEnable)
	b.WriteString(ansi.SetModeBracketedPaste)
	b.WriteString(ansi.SetModeFocusEvent)
	if s.opt.Mouse {
		b.WriteString(ansi.SetModeMouseButtonEvent + ansi.SetModeMouseExtSgr)
	}
	b.WriteString(ansi.SetModifyOtherKeys2)
	b.WriteString(ansi.PushKittyKeyboard(kittyFlags))
	if !s.asked && askSupport(s.opt.Env) {
		b.WriteString(ansi.RequestModeSynchronizedOutput + ansi.RequestModeUnicodeCore)
		s.asked = true
	}
	_, _ = s.r.WriteString(b.String())
	s.entered = true
}

// leave writes the modes enter set back as they were: keyboard, mouse,
// focus and paste reports off, the cursor at the bottom left, the main
// screen back with its cursor, the cursor shown. It does nothing when
// enter never ran.
func (s *Screen) leave() error {
	if !s.entered {
		return nil
	}
	s.entered = false
	var b strings.Builder
	b.WriteString(ansi.ResetModifyOtherKeys + ansi.PopKittyKeyboard(1))
	if s.opt.Mouse {
		b.WriteString(ansi.ResetModeMouseButtonEvent + ansi.ResetModeMouseAnyEvent + ansi.ResetModeMouseExtSgr)
	}
	b.WriteString(ansi.ResetModeFocusEvent + ansi.ResetModeBracketedPaste)
	if s.method == ansi.GraphemeWidth {
		b.WriteString(ansi.ResetModeUnicodeCore)
		s.method = ansi.WcWidth
	}
	_, _ = s.r.WriteString(b.String())
	if s.drawnH > 0 {
		s.r.MoveTo(0, s.drawnH-1)
	}
	s.r.ExitAltScreen()
	_, _ = s.r.WriteString(ansi.SetModeTextCursorEnable)
	return s.flush(false)
}

// askSupport reports whether to ask the terminal for synchronized output
// and grapheme widths: Bubble Tea's rule (tea.go,
// shouldQuerySynchronizedOutput), which leaves out Apple's Terminal and
// ssh sessions of unknown terminals, whose answers may come late.
func askSupport(env []string) bool {
	get := func(k string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	termType, _ := get("TERM")
	termProg, okProg := get("TERM_PROGRAM")
	_, okSSH := get("SSH_TTY")
	_, okWT := get("WT_SESSION")
	if (!okProg && !okSSH) || okWT || (okProg && !strings.Contains(termProg, "Apple") && !okSSH) {
		return true
	}
	for _, t := range []string{"ghostty", "wezterm", "alacritty", "kitty", "rio"} {
		if strings.Contains(termType, t) {
			return true
		}
	}
	return false
}
