package ui

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
)

// viewState is what a Model keeps for drawing cheaply with many agents:
// the counts of its snapshot, made once per change of the agents rather
// than in every View, and which frame it draws.
//
// Bubble Tea calls View after every message. A batch of changes to agents
// that are off screen (with many agents each printing now and then, most
// of the host's batches) changes nothing View draws: onChanges marks such
// an update still, and View returns the frame drawn last instead of
// drawing it again. Every other message draws anew.
type viewState struct {
	count proto.Counts
	// frames is shared by the copies of a Model (New makes it); gen names
	// the frame this model draws, given by stamp; still says that the
	// last Update changed nothing on screen.
	frames *frames
	gen    uint64
	still  bool
}

// frames holds the frame drawn last, for the models of its generation.
type frames struct {
	mu    sync.Mutex
	next  uint64 // the last generation given
	gen   uint64 // the generation of frame
	w, h  int
	frame string
	// help holds the help lines drawn, by their bindings and width
	// (helpLine).
	help map[string]string
}

// helpLine returns the help line of bindings b at width w (draw draws
// it), drawn once per bindings, trim and width: the key is every
// binding's enabled state and help texts. A nil f draws every time.
func (f *frames) helpLine(b []key.Binding, trim bool, w int, draw func() string) string {
	if f == nil {
		return draw()
	}
	var k strings.Builder
	fmt.Fprintf(&k, "%v %d", trim, w)
	for _, kb := range b {
		h := kb.Help()
		fmt.Fprintf(&k, "\x00%v\x01%s\x01%s", kb.Enabled(), h.Key, h.Desc)
	}
	key := k.String()
	f.mu.Lock()
	s, ok := f.help[key]
	f.mu.Unlock()
	if ok {
		return s
	}
	s = draw()
	f.mu.Lock()
	if f.help == nil || len(f.help) >= 64 {
		f.help = map[string]string{}
	}
	f.help[key] = s
	f.mu.Unlock()
	return s
}

// stamp ends an Update: a model whose update changed nothing on screen
// (still, and ok: the update asked the log pane for nothing) keeps its
// generation, and so the frame drawn last; any other gets a new one.
func (m *Model) stamp(ok bool) {
	if m.view.frames == nil {
		return
	}
	if m.view.still && ok && m.view.gen != 0 {
		return
	}
	m.view.still = false
	f := m.view.frames
	f.mu.Lock()
	f.next++
	m.view.gen = f.next
	f.mu.Unlock()
}

// View draws the dashboard on the alternate screen, with focus reports
// on (SPEC §11: whether the user looks at this terminal; a terminal that
// sends none counts as focused), the mouse reporting clicks, the wheel
// and drags unless Options.NoMouse (SPEC §7; mouse.go), and the cursor
// hidden. Its content is exactly the terminal's height in rows, none
// wider than the terminal.
func (m Model) View() tea.View {
	v := tea.NewView(m.content())
	v.AltScreen = true
	v.ReportFocus = true
	if !m.opts.NoMouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

// content draws the frame View shows. A model stamped still draws the
// frame drawn last for its generation.
func (m Model) content() string {
	f := m.view.frames
	if f == nil || m.view.gen == 0 {
		return m.draw()
	}
	f.mu.Lock()
	if m.view.still && f.gen == m.view.gen && f.w == m.width && f.h == m.height {
		s := f.frame
		f.mu.Unlock()
		return s
	}
	f.mu.Unlock()
	s := m.draw()
	f.mu.Lock()
	f.gen, f.w, f.h, f.frame = m.view.gen, m.width, m.height, s
	f.mu.Unlock()
	return s
}

// sameCounts reports whether two counts of agents say the same.
func sameCounts(a, b proto.Counts) bool {
	return reflect.DeepEqual(a, b) // every field, those added later too
}

// anyRunning reports whether an agent of the snapshot may still run.
func (m Model) anyRunning() bool { return m.view.count.Running > 0 }

// counts counts the agents of the snapshot (running, by status, needing
// you, restored, failing, queued, approvals), as setAgents and
// agentsChanged counted them.
func (m Model) counts() proto.Counts { return m.view.count }
