// Package screen draws the dashboard on its terminal: it keeps the
// terminal in the modes the dashboard needs (raw input, the alternate
// screen, focus reports, bracketed paste, the mouse, key disambiguation)
// and draws each frame as soon as it is handed over, writing only the
// cells that changed since the frame before (SPEC §7, "Frames").
//
// Bubble Tea's own renderer draws the latest frame at the ticks of a
// clock of its own, at most 120 a second, so a handled key waits for the
// next tick: 0 to 8.3 ms. A Screen draws when the frame is ready, on a
// goroutine of its own, and coalesces only the frames that arrive while
// it draws: the newest of them is drawn next. The program runs with
// tea.WithoutRenderer and hands the Screen each frame its View returns
// (Show), the terminal's size (Resize) and its mode reports (Report).
package screen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
)

// Options configure a Screen.
type Options struct {
	// Out receives every byte drawn, one Write a frame; the dashboard's
	// *ui.Terminal.
	Out io.Writer
	// TTY is the terminal put in raw mode while the Screen runs (its
	// termios, shared by every descriptor of the device); nil, or a file
	// that is not a terminal, leaves the modes of input alone (tests).
	TTY term.File
	// Env is the program's environment: TERM picks the terminal's
	// capabilities, TERM_PROGRAM and SSH_TTY whether to ask for
	// synchronized output (as Bubble Tea asks).
	Env []string
	// Profile is the colour profile frames are drawn in; colours a
	// terminal cannot show are brought down to it (colorprofile.Detect's
	// answer, NO_COLOR included).
	Profile colorprofile.Profile
	// Mouse asks the terminal for clicks, the wheel and drags (SGR mouse
	// reports, DECSET 1002 and 1006).
	Mouse bool
}

// Screen draws frames on one terminal. Its methods are safe to call from
// any goroutine; Show, Resize and Report never wait for the terminal.
type Screen struct {
	opt Options

	// mu guards what is handed over: the newest frame, the size, the
	// terminal's answers, and whether the Screen is paused or closed.
	mu      sync.Mutex
	frame   string
	fresh   bool // frame not drawn yet
	handed  bool // a frame was handed over
	urgent  bool // the fresh frame answers input: no MinGap
	w, h    int
	sync    bool // the terminal has synchronized output (DECRQM 2026)
	unicode bool // the terminal measures graphemes (DECRQM 2027)
	paused  bool
	closed  bool
	err     error // the first failed write or mode change

	wake chan struct{} // a frame waits; capacity 1
	quit chan struct{}
	done chan struct{}

	// draw is held while the terminal is written: by the drawing
	// goroutine for a frame, by Release, Restore and Close for modes.
	draw     sync.Mutex
	r        *uv.TerminalRenderer
	buf      uv.ScreenBuffer
	out      bytes.Buffer // the renderer's writes, one frame at a time
	entered  bool         // the dashboard's modes are set on the terminal
	asked    bool         // the terminal was asked what it supports
	drawnW   int
	drawnH   int
	method   ansi.Method
	rawState *term.State
}

// New returns a Screen for o and starts its drawing goroutine; nothing
// is written until the first frame (Show) or Start. Close ends it.
func New(o Options) *Screen {
	s := &Screen{
		opt:    o,
		wake:   make(chan struct{}, 1),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
		buf:    uv.NewScreenBuffer(0, 0),
		method: ansi.WcWidth,
	}
	s.r = s.renderer()
	go s.loop()
	return s
}

// renderer returns a renderer of cells that writes into s.out and knows
// nothing of what the terminal shows (a full repaint comes next).
func (s *Screen) renderer() *uv.TerminalRenderer {
	r := uv.NewTerminalRenderer(&s.out, s.opt.Env)
	r.SetColorProfile(s.opt.Profile)
	r.SetScrollOptim(true)
	r.SetTabStops(-1)
	return r
}

// Start puts the terminal in raw mode (Options.TTY). It returns the
// error of doing so: a dashboard whose keys would echo and wait for a
// newline must not start.
func (s *Screen) Start() error {
	s.draw.Lock()
	defer s.draw.Unlock()
	return s.makeRaw()
}

// makeRaw puts Options.TTY in raw mode, remembering the modes it had.
func (s *Screen) makeRaw() error {
	t := s.opt.TTY
	if t == nil || !term.IsTerminal(t.Fd()) || s.rawState != nil {
		return nil
	}
	st, err := term.MakeRaw(t.Fd())
	if err != nil {
		return fmt.Errorf("screen: raw mode on the terminal: %w", err)
	}
	s.rawState = st
	return nil
}

// restoreModes gives Options.TTY back the modes it had before makeRaw.
func (s *Screen) restoreModes() error {
	if s.rawState == nil {
		return nil
	}
	err := term.Restore(s.opt.TTY.Fd(), s.rawState)
	s.rawState = nil
	if err != nil {
		return fmt.Errorf("screen: restoring the terminal's modes: %w", err)
	}
	return nil
}

// MinGap is the least time between the starts of two frames that answer
// no input: output arriving, clocks ticking. Bubble Tea's renderer draws
// at most this often too; a frame that answers a key, a click or a paste
// is drawn at once (Show's now).
const MinGap = time.Second / 120

// Show hands over the frame to draw: exactly the terminal's height in
// rows, none wider than its width (ui.Model.View's content). now says
// that the frame answers input, so it is drawn as soon as the drawing
// goroutine is free; other frames are drawn no sooner than MinGap after
// the frame before. Either way a newer frame handed over first replaces
// it. Show returns at once.
func (s *Screen) Show(frame string, now bool) {
	s.mu.Lock()
	if s.frame != frame || !s.handed {
		s.frame, s.fresh, s.handed = frame, true, true
	}
	if now && s.fresh {
		s.urgent = true
	}
	s.mu.Unlock()
	s.poke()
}

// Resize tells the Screen the terminal's size in cells: the next frame
// is drawn whole at that size.
func (s *Screen) Resize(w, h int) {
	s.mu.Lock()
	if w != s.w || h != s.h {
		s.w, s.h, s.fresh = w, h, true
	}
	s.mu.Unlock()
	s.poke()
}

// Report takes the terminal's answer to the question the Screen asked
// when it set its modes (DECRQM for synchronized output and grapheme
// widths); other messages are ignored. The Update of the program calls
// it with every tea.ModeReportMsg.
func (s *Screen) Report(msg tea.ModeReportMsg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch msg.Mode {
	case ansi.ModeSynchronizedOutput:
		// Reset means supported and off: frames may turn it on.
		s.sync = msg.Value == ansi.ModeReset
	case ansi.ModeUnicodeCore:
		s.unicode = msg.Value == ansi.ModeReset || msg.Value == ansi.ModeSet || msg.Value == ansi.ModePermanentlySet
		s.fresh = true
	}
}

// Err returns the first error of writing to the terminal or changing its
// modes, nil if none.
func (s *Screen) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// fail keeps err if it is the first.
func (s *Screen) fail(err error) {
	if err == nil {
		return
	}
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// poke wakes the drawing goroutine.
func (s *Screen) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// loop draws the newest frame each time one is handed over, waiting out
// MinGap after the last frame unless the new one answers input.
func (s *Screen) loop() {
	defer close(s.done)
	var last time.Time
	gap := time.NewTimer(time.Hour)
	gap.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-s.wake:
		case <-gap.C:
		}
		s.mu.Lock()
		urgent := s.urgent
		s.mu.Unlock()
		if wait := MinGap - time.Since(last); !urgent && wait > 0 {
			gap.Reset(wait)
			continue
		}
		if s.drawFrame() {
			last = time.Now()
		}
	}
}

// drawFrame draws the newest frame if there is one to draw and the
// Screen is neither paused nor closed, and reports whether it drew.
func (s *Screen) drawFrame() bool {
	s.draw.Lock()
	defer s.draw.Unlock()
	s.mu.Lock()
	frame, fresh, w, h := s.frame, s.fresh, s.w, s.h
	syncd, unicode, stopped := s.sync, s.unicode, s.paused || s.closed
	if !stopped {
		s.fresh, s.urgent = false, false
	}
	s.mu.Unlock()
	if stopped || !fresh {
		return false
	}
	if !s.entered {
		s.enter()
	}
	method := ansi.WcWidth
	if unicode {
		method = ansi.GraphemeWidth
	}
	if method != s.method {
		s.method = method
		s.buf.Method = method
		s.r.SetWidthMethod(method)
		if method == ansi.GraphemeWidth {
			_, _ = s.r.WriteString(ansi.SetModeUnicodeCore)
		}
		s.r.Erase()
	}
	if w != s.drawnW || h != s.drawnH {
		s.r.Resize(w, h)
		s.buf.Resize(w, h)
		s.buf.Touched = nil
		s.r.Erase()
		s.drawnW, s.drawnH = w, h
	}
	s.buf.Clear()
	uv.NewStyledString(frame).Draw(s.buf, s.buf.Bounds())
	s.r.Render(s.buf.RenderBuffer)
	s.fail(s.flush(syncd))
	return true
}

// flush writes what the renderer queued and the bytes before it in one
// Write, inside a synchronized update where the terminal has them (the
// terminal then shows the frame whole, never half drawn).
func (s *Screen) flush(syncd bool) error {
	if err := s.r.Flush(); err != nil {
		return err
	}
	if s.out.Len() == 0 {
		return nil
	}
	var b []byte
	if syncd {
		b = make([]byte, 0, s.out.Len()+len(ansi.SetModeSynchronizedOutput)+len(ansi.ResetModeSynchronizedOutput))
		b = append(b, ansi.SetModeSynchronizedOutput...)
		b = append(b, s.out.Bytes()...)
		b = append(b, ansi.ResetModeSynchronizedOutput...)
	} else {
		b = s.out.Bytes()
	}
	_, err := s.opt.Out.Write(b)
	s.out.Reset()
	if err != nil {
		return fmt.Errorf("screen: writing a frame to the terminal: %w", err)
	}
	return nil
}

// Release gives the terminal back as the dashboard found it, for a
// program that runs in front of the dashboard (the pager, the editor):
// the main screen, the cursor, the modes of input. Frames handed over
// meanwhile wait; Restore draws the newest. It returns once no frame is
// being drawn, with the error of restoring the modes.
func (s *Screen) Release() error {
	s.mu.Lock()
	s.paused = true
	s.mu.Unlock()
	s.draw.Lock()
	defer s.draw.Unlock()
	err := s.leave()
	return errors.Join(err, s.restoreModes())
}

// Restore takes the terminal again after Release: raw mode, the
// dashboard's modes, and the newest frame drawn whole (what ran in front
// of the dashboard left the screen as it pleased).
func (s *Screen) Restore() error {
	s.draw.Lock()
	err := s.makeRaw()
	s.r = s.renderer()
	s.drawnW, s.drawnH = -1, -1
	s.draw.Unlock()
	s.mu.Lock()
	s.paused = false
	s.fresh = true
	s.mu.Unlock()
	s.poke()
	return err
}

// Close stops drawing and gives the terminal back as the dashboard found
// it (Release's modes); later calls do nothing. It returns the first
// error of writing to the terminal or of restoring its modes.
func (s *Screen) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.quit)
	<-s.done
	s.draw.Lock()
	s.fail(s.leave())
	s.fail(s.restoreModes())
	s.draw.Unlock()
	return s.Err()
}
