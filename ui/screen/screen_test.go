package screen

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"github.com/subdash/subdash/internal/testkit"
)

// terminal is a terminal emulator the Screen draws on, recording every
// byte as well, so a test reads both what a user would see and what was
// sent.
type terminal struct {
	mu    sync.Mutex
	emu   *vt.Emulator
	sent  strings.Builder
	fail  error // returned by every Write once set
	count int   // Writes
}

// newTerminal returns a terminal of w×h cells whose answers to queries
// (the emulator's replies) are read and dropped. The reading goroutine
// ends with the test binary: the emulator's Close races with its Read.
func newTerminal(w, h int) *terminal {
	emu := vt.NewEmulator(w, h)
	go func() { _, _ = io.Copy(io.Discard, emu) }()
	return &terminal{emu: emu}
}

func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fail != nil {
		return 0, t.fail
	}
	t.count++
	t.sent.Write(p)
	return t.emu.Write(p)
}

// screenText is what the emulator shows, rows joined by newlines, each
// without its trailing blanks.
func (t *terminal) screenText() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var rows []string
	for _, r := range strings.Split(t.emu.String(), "\n") {
		rows = append(rows, strings.TrimRight(r, " "))
	}
	return strings.Join(rows, "\n")
}

func (t *terminal) output() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent.String()
}

func newScreen(t *testing.T, term *terminal, mouse bool) *Screen {
	t.Helper()
	s := New(Options{Out: term, Env: []string{"TERM=xterm-256color"}, Profile: colorprofile.TrueColor, Mouse: mouse})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// frame is h rows of text, the first rows given.
func frame(h int, rows ...string) string {
	for len(rows) < h {
		rows = append(rows, "")
	}
	return strings.Join(rows, "\n")
}

func waitShown(t *testing.T, term *terminal, want string) {
	t.Helper()
	testkit.Poll(t, 10*time.Second, "the terminal to show "+want, func() (string, bool) {
		got := term.screenText()
		return got, strings.Contains(got, want)
	})
}

func TestAFrameIsDrawnOnTheAlternateScreenWithTheDashboardsModes(t *testing.T) {
	term := newTerminal(20, 4)
	s := newScreen(t, term, true)
	s.Resize(20, 4)
	s.Show(frame(4, "agents 1", "› 13e28050 running"), true)
	waitShown(t, term, "› 13e28050 running")
	out := term.output()
	for _, mode := range []struct{ name, seq string }{
		{"alternate screen", ansi.SetModeAltScreenSaveCursor},
		{"cursor hidden", ansi.ResetModeTextCursorEnable},
		{"bracketed paste", ansi.SetModeBracketedPaste},
		{"focus reports", ansi.SetModeFocusEvent},
		{"mouse buttons and drags", ansi.SetModeMouseButtonEvent},
		{"SGR mouse reports", ansi.SetModeMouseExtSgr},
		{"kitty keyboard flags", ansi.PushKittyKeyboard(kittyFlags)},
	} {
		if !strings.Contains(out, mode.seq) {
			t.Errorf("no %s (%q) in %q", mode.name, mode.seq, out)
		}
	}
	if got := term.screenText(); !strings.HasPrefix(got, "agents 1\n› 13e28050 running") {
		t.Fatalf("screen:\n%s", got)
	}
}

func TestWithoutTheMouseNoMouseReportsAreAsked(t *testing.T) {
	term := newTerminal(20, 2)
	s := newScreen(t, term, false)
	s.Resize(20, 2)
	s.Show(frame(2, "no mouse"), true)
	waitShown(t, term, "no mouse")
	if out := term.output(); strings.Contains(out, ansi.SetModeMouseButtonEvent) || strings.Contains(out, ansi.SetModeMouseExtSgr) {
		t.Fatalf("mouse reports asked with Mouse off: %q", out)
	}
}

func TestTheNewestFrameIsWhatStaysOnTheScreen(t *testing.T) {
	term := newTerminal(30, 3)
	s := newScreen(t, term, false)
	s.Resize(30, 3)
	for i := range 200 {
		s.Show(frame(3, "line of frame "+strings.Repeat("x", i%7), "frame "+string(rune('a'+i%26))), i%3 == 0)
	}
	s.Show(frame(3, "the last frame", "says so"), false)
	waitShown(t, term, "the last frame\nsays so")
}

func TestOnlyTheCellsThatChangedAreWritten(t *testing.T) {
	term := newTerminal(40, 5)
	s := newScreen(t, term, false)
	s.Resize(40, 5)
	rows := []string{"header of the table", "row one", "row two", "status line"}
	s.Show(frame(5, rows...), true)
	waitShown(t, term, "status line")
	before := len(term.output())
	rows[2] = "row 2"
	s.Show(frame(5, rows...), true)
	waitShown(t, term, "row 2")
	sent := term.output()[before:]
	if strings.Contains(sent, "header of the table") || strings.Contains(sent, "status line") {
		t.Fatalf("unchanged rows written again: %q", sent)
	}
}

func TestAResizeDrawsTheWholeFrameAtTheNewSize(t *testing.T) {
	term := newTerminal(30, 3)
	s := newScreen(t, term, false)
	s.Resize(30, 3)
	s.Show(frame(3, "wide frame of thirty cells...", "b"), true)
	waitShown(t, term, "wide frame")
	term.mu.Lock()
	term.emu.Resize(12, 2)
	term.mu.Unlock()
	s.Resize(12, 2)
	s.Show(frame(2, "narrow", "frame"), true)
	waitShown(t, term, "narrow\nframe")
}

func TestReleaseGivesTheTerminalBackAndRestoreDrawsTheFrameWhole(t *testing.T) {
	term := newTerminal(20, 3)
	s := newScreen(t, term, true)
	s.Resize(20, 3)
	s.Show(frame(3, "the dashboard"), true)
	waitShown(t, term, "the dashboard")
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	out := term.output()
	leave := strings.LastIndex(out, ansi.ResetModeAltScreenSaveCursor)
	if leave < 0 || !strings.Contains(out[leave:], ansi.SetModeTextCursorEnable) {
		t.Fatalf("release did not leave the alternate screen and show the cursor: %q", out)
	}
	for _, seq := range []string{ansi.ResetModeMouseButtonEvent, ansi.ResetModeFocusEvent, ansi.ResetModeBracketedPaste, ansi.PopKittyKeyboard(1)} {
		if !strings.Contains(out, seq) {
			t.Errorf("release left %q set: %q", seq, out)
		}
	}
	// A pager draws on the main screen meanwhile; frames handed over wait.
	if _, err := term.Write([]byte("\x1b[2J\x1b[Hthe pager's text")); err != nil {
		t.Fatal(err)
	}
	s.Show(frame(3, "the dashboard, later"), false)
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	waitShown(t, term, "the dashboard, later")
	after := term.output()[len(out):]
	if !strings.Contains(after, ansi.SetModeAltScreenSaveCursor) {
		t.Fatalf("restore did not enter the alternate screen again: %q", after)
	}
}

func TestCloseLeavesTheTerminalAsItWasOnce(t *testing.T) {
	term := newTerminal(20, 2)
	s := New(Options{Out: term, Env: []string{"TERM=xterm"}, Profile: colorprofile.ANSI256})
	s.Resize(20, 2)
	s.Show(frame(2, "bye"), true)
	waitShown(t, term, "bye")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	out := term.output()
	if strings.Count(out, ansi.ResetModeAltScreenSaveCursor) != 1 || !strings.HasSuffix(out, ansi.SetModeTextCursorEnable) {
		t.Fatalf("close did not end on the main screen with the cursor shown: %q", out)
	}
	if err := s.Close(); err != nil || term.output() != out {
		t.Fatalf("a second close wrote or failed: %v", err)
	}
	s.Show(frame(2, "after close"), true)
	if term.output() != out {
		t.Fatalf("a frame was drawn after close: %q", term.output()[len(out):])
	}
}

func TestCloseWithNoFrameWritesNothing(t *testing.T) {
	term := newTerminal(20, 2)
	s := New(Options{Out: term})
	if err := s.Close(); err != nil || term.output() != "" {
		t.Fatalf("close of a screen that drew nothing: %v, %q", err, term.output())
	}
}

func TestAFailedWriteIsTheScreensError(t *testing.T) {
	term := newTerminal(20, 2)
	term.fail = errors.New("input/output error")
	s := New(Options{Out: term})
	s.Resize(20, 2)
	s.Show(frame(2, "lost"), true)
	testkit.Eventually(t, 10*time.Second, "the write error", func() bool { return s.Err() != nil })
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("close returned %v, want the write's error", err)
	}
}

func TestSynchronizedOutputWrapsFramesOnceTheTerminalHasIt(t *testing.T) {
	term := newTerminal(20, 2)
	s := newScreen(t, term, false)
	s.Resize(20, 2)
	s.Show(frame(2, "one"), true)
	waitShown(t, term, "one")
	if strings.Contains(term.output(), ansi.SetModeSynchronizedOutput) {
		t.Fatalf("synchronized output used before the terminal said it has it")
	}
	if !strings.Contains(term.output(), ansi.RequestModeSynchronizedOutput) {
		t.Fatalf("the terminal was not asked: %q", term.output())
	}
	s.Report(tea.ModeReportMsg{Mode: ansi.ModeSynchronizedOutput, Value: ansi.ModeReset})
	before := len(term.output())
	s.Show(frame(2, "two"), true)
	waitShown(t, term, "two")
	sent := term.output()[before:]
	if !strings.HasPrefix(sent, ansi.SetModeSynchronizedOutput) || !strings.HasSuffix(sent, ansi.ResetModeSynchronizedOutput) {
		t.Fatalf("frame not in a synchronized update: %q", sent)
	}
}

func TestColoursAreBroughtDownToTheProfile(t *testing.T) {
	term := newTerminal(20, 2)
	s := New(Options{Out: term, Env: []string{"TERM=dumb"}, Profile: colorprofile.Ascii})
	t.Cleanup(func() { _ = s.Close() })
	s.Resize(20, 2)
	s.Show(frame(2, "\x1b[38;2;255;0;0mred\x1b[0m"), true)
	waitShown(t, term, "red")
	if out := term.output(); strings.Contains(out, "38;2;") || strings.Contains(out, "38;5;") || strings.Contains(out, "\x1b[31m") {
		t.Fatalf("colour written for an Ascii profile: %q", out)
	}
}

func TestAskSupportFollowsBubbleTeasRule(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want bool
	}{
		{[]string{"TERM=xterm-256color"}, true},
		{[]string{"TERM=xterm-256color", "TERM_PROGRAM=Apple_Terminal"}, false},
		{[]string{"TERM=xterm-256color", "SSH_TTY=/dev/pts/1"}, false},
		{[]string{"TERM=xterm-kitty", "SSH_TTY=/dev/pts/1"}, true},
		{[]string{"TERM=tmux-256color", "TERM_PROGRAM=tmux"}, true},
	} {
		if got := askSupport(c.env); got != c.want {
			t.Errorf("askSupport(%q) = %v, want %v", c.env, got, c.want)
		}
	}
}
