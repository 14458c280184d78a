package ui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/internal/cells"
	"github.com/subdash/subdash/ui/screen"
)

// Notify says how a dashboard raises a notification in its own terminal
// when an agent starts needing you (SPEC §11): a BEL, one desktop
// notification (OSC 9, or OSC 777 where the terminal prefers it; never
// both, which would pop up twice), wrapped in tmux's DCS passthrough
// inside tmux. The zero value raises nothing (--notify off).
type Notify struct {
	Bell bool // write BEL
	OSC  int  // 9 or 777 for a desktop notification; 0 for none
	Tmux bool // wrap the OSC in tmux's passthrough (tmux needs allow-passthrough on to pass it on)
}

// NotifyModes are the values of --notify.
var NotifyModes = []string{"auto", "bell", "osc", "off"}

// ResolveNotify turns --notify (auto, bell, osc, off; "" means auto) and
// the terminal's environment into a Notify. OSC 777 is chosen for
// terminals known to prefer it (rxvt, foot, VTE-based ones); OSC 9
// otherwise. Errors: an unknown mode, naming the valid ones.
func ResolveNotify(mode string, getenv func(string) string) (Notify, error) {
	osc := 9
	term := getenv("TERM")
	if strings.HasPrefix(term, "rxvt") || strings.HasPrefix(term, "foot") || getenv("VTE_VERSION") != "" {
		osc = 777
	}
	n := Notify{Tmux: getenv("TMUX") != ""}
	switch strings.TrimSpace(mode) {
	case "", "auto":
		n.Bell, n.OSC = true, osc
	case "bell":
		n.Bell = true
	case "osc":
		n.OSC = osc
	case "off":
		return Notify{}, nil
	default:
		return Notify{}, fmt.Errorf("invalid --notify %q: use one of %s", mode, strings.Join(NotifyModes, ", "))
	}
	return n, nil
}

// maxNotifyBody bounds the desktop notification's text, in characters.
const maxNotifyBody = 120

// Sequence returns the bytes that raise a notification saying text: BEL
// and/or one OSC 9 / OSC 777 (terminated by ST, so that the only BEL is
// the bell), the OSC wrapped for tmux when asked. The text is cleaned of
// control characters, cut to maxNotifyBody characters, and starts with
// "subdash: ", never with a digit and ';' (OSC 9;4 is a progress report
// in some terminals). It returns nil when n raises nothing.
func (n Notify) Sequence(text string) []byte {
	var b strings.Builder
	if n.Bell {
		b.WriteByte('\a')
	}
	body, _ := cells.Cut(termtext.OneLine(text, 0), maxNotifyBody)
	body = strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			return -1 // nothing may end the OSC early or start another
		}
		return r
	}, body)
	var osc string
	switch n.OSC {
	case 9:
		osc = "\x1b]9;subdash: " + body + "\x1b\\"
	case 777:
		osc = "\x1b]777;notify;subdash;" + body + "\x1b\\"
	}
	if osc != "" && n.Tmux {
		osc = "\x1bPtmux;" + strings.ReplaceAll(osc, "\x1b", "\x1b\x1b") + "\x1b\\"
	}
	b.WriteString(osc)
	if b.Len() == 0 {
		return nil
	}
	return []byte(b.String())
}

// Terminal is the dashboard's output: the terminal file, with writes
// serialized, so that a notification written from a command never lands
// inside a frame Bubble Tea's renderer is writing (each frame is one
// Write). It keeps the file's Fd, so Bubble Tea still sees a terminal.
type Terminal struct {
	*os.File
	mu sync.Mutex
}

// NewTerminal wraps f, normally os.Stdout.
func NewTerminal(f *os.File) *Terminal { return &Terminal{File: f} }

// Write writes p whole before any other Write starts.
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.File.Write(p)
}

// onTerminal runs an ExecCommand (the pager, the editor) on the terminal
// file itself: Bubble Tea hands it the program's output, a *Terminal,
// which as a plain io.Writer would reach the command as a pipe, and a
// pager on a pipe is no pager. The dashboard's Screen (scr, nil in model
// tests) gives the terminal to the command and takes it back after.
type onTerminal struct {
	tea.ExecCommand
	scr *screen.Screen
}

// SetStdout passes the terminal's file, unwrapped.
func (c onTerminal) SetStdout(w io.Writer) {
	if t, ok := w.(*Terminal); ok {
		c.ExecCommand.SetStdout(t.File)
		return
	}
	c.ExecCommand.SetStdout(w)
}

// minExec is the least time an ExecCommand takes (onTerminal.Run).
const minExec = 50 * time.Millisecond

// Run runs the command and returns no sooner than minExec after it
// started. Bubble Tea stops its renderer before the command and starts
// it after, and the stopped renderer's goroutine stops the shared frame
// ticker once it gets to run: when that comes after the restart, nothing
// is drawn again until the program quits (a Bubble Tea race,
// charmbracelet/bubbletea#1778). A command that ends at once (a pager or
// editor not installed) left that goroutine no time; minExec does.
//
// The terminal goes back to the modes it had before the dashboard for the
// command's run, and the dashboard's frame is drawn whole after it; an
// error of either is the command's error when it had none.
func (c onTerminal) Run() error {
	start := time.Now()
	var err error
	if c.scr != nil {
		err = c.scr.Release()
	}
	if err == nil {
		err = c.ExecCommand.Run()
	}
	if c.scr != nil {
		err = errors.Join(err, c.scr.Restore())
	}
	if rest := minExec - time.Since(start); rest > 0 {
		time.Sleep(rest)
	}
	return err
}

// notifyMsg reports that a notification was written (or failed).
type notifyMsg struct{ err error }

// notifyCmd writes the notification for an agent that needs you to the
// terminal, in a command: never in Update or View.
func notifyCmd(out io.Writer, n Notify, at proto.Attention) tea.Cmd {
	seq := n.Sequence(at.Text)
	if out == nil || seq == nil {
		return nil
	}
	return func() tea.Msg {
		_, err := out.Write(seq)
		return notifyMsg{err: err}
	}
}
