package ui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// messageMsg carries the whole message of an agent's latest submission,
// read from its file for edit-and-resend (SPEC §10): snapshots hold only a
// message's head. Only a message of at most editInline bytes comes this
// way; a longer one goes to $EDITOR (editFile) and resend asks the host
// (resend).
type messageMsg struct {
	id   string
	text string
	err  error
}

// wholeMessageCmd reads the whole latest message of agent id off the UI
// goroutine.
func (m Model) wholeMessageCmd(id string) tea.Cmd {
	sup, ctx := m.sup, m.ctx
	return func() tea.Msg {
		text, err := sup.Message(ctx, id, 0)
		return messageMsg{id: id, text: text, err: err}
	}
}

// onMessage opens the input to edit the whole message.
func (m *Model) onMessage(msg messageMsg) tea.Cmd {
	if msg.err != nil {
		m.say(levelError, m.describe(op("resend"), msg.id, msg.err))
		return nil
	}
	m.openInput(inputEdit, msg.id, msg.text)
	return nil
}

// forget asks, then forgets agent a for good (SPEC §10), with its
// descendants on a host of the tree (SPEC §14: a finished subtree); a
// running agent, or one with a running descendant, is refused before
// asking.
func (m *Model) forget(a proto.AgentInfo) tea.Cmd {
	short := m.label(a.AgentID)
	if a.Running() {
		m.say(levelWarn, "agent "+short+" is running; interrupt ("+m.keys.Interrupt.Help().Key+") or close ("+m.keys.Close.Help().Key+") it before forgetting it")
		return nil
	}
	below := m.descendants(a.AgentID)
	for _, d := range below {
		if d.Running() {
			m.say(levelWarn, fmt.Sprintf("forget %s: %s is running below it; interrupt (%s) or close (%s) it first", short, m.label(d.AgentID), m.keys.Interrupt.Help().Key, m.keys.Close.Help().Key))
			return nil
		}
	}
	id, what := a.AgentID, short
	if len(below) > 0 {
		what = fmt.Sprintf("%s and %s below it", short, agentsN(len(below)))
	}
	m.ask(fmt.Sprintf("Forget %s for good? It leaves the table and list, also after a restart; its logs stay on disk.", what),
		"forget", "keep", func(m *Model) tea.Cmd { return m.opCmd(opForget, id, "", false) }, nil)
	return nil
}

// storageMsg carries where the logs are and how much space they take:
// those of host, with several hosts ("" with one).
type storageMsg struct {
	storage proto.Storage
	err     error
	host    string
}

// storageCmd measures the logs for the help overlay, off the UI
// goroutine: the selected host's, with several.
func (m Model) storageCmd() tea.Cmd {
	sup, ctx := m.sup, m.ctx
	host, _, _ := m.selectedHost()
	ctx = withHost(ctx, host)
	return func() tea.Msg {
		st, err := sup.Storage(ctx)
		return storageMsg{st, err, host}
	}
}

// storageLine says where the logs are and how much space they take, "" until
// measured.
func (m Model) storageLine() string {
	st := m.storage
	if st.RunsDir == "" {
		return ""
	}
	keep := "kept until removed by hand"
	if st.Retention > 0 {
		keep = "runs older than " + proto.FormatDuration(st.Retention) + " removed at start"
	}
	of := ""
	if m.storageHost != "" {
		of = " of " + termtext.OneLine(m.storageHost, 0)
	}
	return fmt.Sprintf("logs%s: %s · %s in %d run(s) · %s", of, termtext.OneLine(st.RunsDir, 0), proto.FormatBytes(st.Bytes), st.Runs, keep)
}
