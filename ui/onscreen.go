package ui

import (
	"os"
	"os/signal"
	"syscall"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/subdash/subdash/ui/screen"
)

// onScreen is the program's model when Run draws with a screen.Screen:
// the dashboard's Model, whose every frame it hands to the Screen as View
// returns it (a hand-over to the drawing goroutine: no I/O here), at
// once when it answers the user's input, with the terminal's size and
// mode reports passed on before the Model sees them.
type onScreen struct {
	Model
	scr   *screen.Screen
	input bool // the last message was the user's: a key, the mouse, a paste
}

// Update passes msg to the Model.
func (o onScreen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer o.leaveOnPanic()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		o.scr.Resize(msg.Width, msg.Height)
	case tea.ModeReportMsg:
		o.scr.Report(msg)
	}
	m, cmd := o.Model.Update(msg)
	var input bool
	switch msg.(type) {
	case tea.KeyMsg, tea.MouseMsg, tea.PasteMsg:
		input = true
	}
	return onScreen{Model: m.(Model), scr: o.scr, input: input}, cmd
}

// View returns the Model's view and hands its content to the Screen.
func (o onScreen) View() tea.View {
	defer o.leaveOnPanic()
	v := o.Model.View()
	o.scr.Show(v.Content, o.input)
	return v
}

// leaveOnPanic gives the terminal back before a panic of the Model goes
// on to Bubble Tea, which prints it: on the main screen, where it stays
// after the program ends, not on the alternate one.
func (o onScreen) leaveOnPanic() {
	if r := recover(); r != nil {
		_ = o.scr.Close()
		panic(r)
	}
}

// terminalFile returns the file under the dashboard's output when it is
// a terminal, nil otherwise (tests write to a buffer).
func terminalFile(out any) term.File {
	var f *os.File
	switch o := out.(type) {
	case *Terminal:
		f = o.File
	case *os.File:
		f = o
	}
	if f == nil || !term.IsTerminal(f.Fd()) {
		return nil
	}
	return f
}

// watchSize sends the terminal's size to the program each time the
// terminal says it changed (SIGWINCH), until stop is closed; a size that
// cannot be read is not sent.
func watchSize(f term.File, send func(tea.Msg), stop <-chan struct{}) {
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	for {
		select {
		case <-stop:
			return
		case <-winch:
		}
		if w, h, err := term.GetSize(f.Fd()); err == nil {
			send(tea.WindowSizeMsg{Width: w, Height: h})
		}
	}
}
