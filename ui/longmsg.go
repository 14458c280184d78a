package ui

import (
	"context"
	"fmt"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/proto"
)

// Long messages (SPEC §10). A message may be up to proto.MaxMessageBytes,
// which the one-line input cannot hold (its memory and each key's time
// grow with it), nor should resending fetch the whole message into the
// dashboard to send it back. So resend of a message whose head
// is cut asks the host to send it again from its kept file (Resend: it
// never crosses the socket), and edit-and-resend of one over editInline
// opens $EDITOR on a file the message is streamed into (WriteMessage),
// then sends the file streamed (SendFrom): the dashboard never holds it.

// editInline is the longest message, in bytes, that edit-and-resend puts in
// the one-line input; a longer one opens $EDITOR (Options.Editor).
const editInline = 64 << 10

// resend sends again agent id's whole latest message from the host's file,
// asking first (interrupt, queue or cancel) when it runs, as send does.
func (m *Model) resend(id string) tea.Cmd {
	a, _ := m.agent(id)
	if !a.Running() {
		return m.fileOpCmd(id, "", false, false)
	}
	m.ask(fmt.Sprintf("%s is running: interrupt it and resend now, queue the message for when it ends, or cancel?", m.label(id)),
		"interrupt and resend", "cancel", func(m *Model) tea.Cmd {
			m.markStopping(id)
			return m.fileOpCmd(id, "", true, false)
		}, nil)
	m.confirm.choice = keymap.DefaultSendChoice()
	m.confirm.queue = func(m *Model) tea.Cmd { return m.fileOpCmd(id, "", false, true) }
	return nil
}

// fileOpCmd runs, in a command, a resend (path "") or a send of the
// message in the file at path, which it removes once sent; with queue it
// queues the message (SPEC §11). Its outcome is reported as a send's or a
// queue's.
func (m Model) fileOpCmd(id, path string, interrupt, queue bool) tea.Cmd {
	sup, ctx := m.sup, m.ctx
	return func() tea.Msg {
		done := opDoneMsg{op: opSend, id: id}
		if queue {
			done.op = opQueue
		}
		var r proto.SendResult
		var err error
		if path == "" {
			r, err = sup.Resend(ctx, id, interrupt, queue)
		} else {
			var f *os.File
			if f, err = os.Open(path); err == nil {
				r, err = sup.SendFrom(ctx, id, f, interrupt, queue)
				f.Close() //nolint:errcheck // read only: its Close cannot lose data
			}
			if err == nil {
				os.Remove(path) //nolint:errcheck // the sent message's temporary file: a leftover in the temporary folder loses nothing
			} else {
				err = fmt.Errorf("%w (the edited message is kept in %s)", err, path)
			}
		}
		done.status, done.dropped, done.queued, done.err = r.Status, r.DroppedQueued, r.Queued, err
		return done
	}
}

// editedMsg reports that $EDITOR ended on the file of agent id's message.
type editedMsg struct {
	id      string
	path    string // "" when the file could not be made
	changed bool
	err     error
}

// editFile opens $EDITOR (Options.Editor) on a file holding agent id's
// whole latest message; the file is made and filled in the exec command,
// never in Update.
func (m *Model) editFile(id string) tea.Cmd {
	if m.opts.Editor == nil {
		m.say(levelWarn, "the message is too long to edit here and no editor is configured; set $EDITOR, or press "+m.keys.Resend.Help().Key+" to resend it as it is")
		return nil
	}
	e := &editExec{ctx: m.ctx, sup: m.sup, id: id, editor: m.opts.Editor}
	return tea.Exec(onTerminal{ExecCommand: e, scr: m.opts.screen}, func(err error) tea.Msg {
		return editedMsg{id: id, path: e.path, changed: e.changed, err: err}
	})
}

// editExec is the tea.ExecCommand of editFile: it streams the message into
// a new file, runs the editor on it and notes whether it changed.
type editExec struct {
	ctx     context.Context // the run's (Model.ctx)
	sup     Supervisor
	id      string
	editor  func(path string) tea.ExecCommand
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	path    string
	changed bool
}

// SetStdin sets the editor's standard input (tea.ExecCommand: Bubble Tea
// gives it the terminal while the program is released).
func (e *editExec) SetStdin(r io.Reader) { e.stdin = r }

// SetStdout sets the editor's standard output (tea.ExecCommand).
func (e *editExec) SetStdout(w io.Writer) { e.stdout = w }

// SetStderr sets the editor's standard error (tea.ExecCommand).
func (e *editExec) SetStderr(w io.Writer) { e.stderr = w }

// Run makes the file, runs the editor and compares the file after.
func (e *editExec) Run() error {
	f, err := os.CreateTemp("", "subdash-message-*.txt")
	if err != nil {
		return fmt.Errorf("cannot make a file for the editor: %v", err)
	}
	e.path = f.Name()
	err = e.sup.WriteMessage(e.ctx, f, e.id, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write the message into %s: %v", e.path, err)
	}
	before, err := os.Stat(e.path)
	if err != nil {
		return err
	}
	cmd := e.editor(e.path)
	cmd.SetStdin(e.stdin)
	cmd.SetStdout(e.stdout)
	cmd.SetStderr(e.stderr)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the editor failed (%v); set $EDITOR to an editor such as vi", err)
	}
	after, err := os.Stat(e.path)
	if err != nil {
		return fmt.Errorf("the edited file %s: %v", e.path, err)
	}
	e.changed = after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime())
	return nil
}

// onEdited sends the edited file (asking first when the agent runs), or
// says why not; the file goes when it is sent or not wanted.
func (m *Model) onEdited(msg editedMsg) tea.Cmd {
	short := m.label(msg.id)
	m.syncLog(false)
	switch {
	case msg.err != nil:
		m.say(levelError, "edit & resend "+short+": "+msg.err.Error())
		return removeCmd(msg.path)
	case !msg.changed:
		m.say(levelInfo, "not resent to "+short+": the message was not changed (R resends it as it is)")
		return removeCmd(msg.path)
	}
	id, path := msg.id, msg.path
	a, _ := m.agent(id)
	if !a.Running() {
		return m.fileOpCmd(id, path, false, false)
	}
	m.ask(fmt.Sprintf("%s is running: interrupt it and resend now, queue the message for when it ends, or cancel?", short),
		"interrupt and resend", "cancel", func(m *Model) tea.Cmd {
			m.markStopping(id)
			return m.fileOpCmd(id, path, true, false)
		}, func(m *Model) tea.Cmd { return removeCmd(path) })
	m.confirm.choice = keymap.DefaultSendChoice()
	m.confirm.queue = func(m *Model) tea.Cmd { return m.fileOpCmd(id, path, false, true) }
	return nil
}

// removeCmd removes the file at path ("" for none) in a command.
func removeCmd(path string) tea.Cmd {
	if path == "" {
		return nil
	}
	return func() tea.Msg {
		os.Remove(path) //nolint:errcheck // a temporary file no longer wanted: a leftover loses nothing
		return nil
	}
}
