package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// openInput focuses the input line for kind, aimed at agent target and
// pre-filled with value.
func (m *Model) openInput(kind inputKind, target, value string) {
	m.mode, m.inputKind, m.inputTarget = modeInput, kind, target
	m.input.Reset()
	m.input.SetValue(value)
	m.spawn = spawnForm{}
	m.input.Prompt = m.inputPrompt()
	m.input.Placeholder = map[inputKind]string{
		inputSpawn:  "task for a new agent",
		inputSend:   "message",
		inputEdit:   "message",
		inputSearch: "text to find in the log",
		inputDeny:   "reason the agent reads (optional); enter denies",
		inputFilter: "status (running completed errored closed needs queued) and/or text; empty shows all",
	}[kind]
	if last := m.log.LastQuery(); kind == inputSearch && last != "" {
		m.input.Placeholder = "enter: “" + last + "” again"
	}
	if kind == inputSpawn {
		m.input.Placeholder = m.spawnPlaceholder()
	}
	m.input.Focus()
}

// inputPrompt names the input's target and mode, e.g. "send 3fa2c1d0
// (running) › ".
func (m Model) inputPrompt() string {
	short := m.label(m.inputTarget)
	suffix := ""
	if a, ok := m.agent(m.inputTarget); ok && m.inputTarget != "" {
		if a.Running() {
			suffix = " (running)"
		} else if a.Status == proto.StatusClosed {
			suffix = " (closed)"
		}
	}
	switch m.inputKind {
	case inputSpawn:
		return m.spawnPrompt()
	case inputSend:
		return "send " + short + suffix + " › "
	case inputEdit:
		return "edit & resend " + short + suffix + " › "
	case inputFilter:
		return "filter agents › "
	case inputAcross:
		return "search every agent › "
	case inputDeny:
		return "deny " + short + " " + termtext.OneLine(m.denyRequest.Tool+" "+m.denyRequest.Summary, 0) + " › "
	}
	return "search › "
}

// closeInput gives the keyboard back to the dashboard.
func (m *Model) closeInput() {
	m.input.Blur()
	m.mode = modeNormal
}

// inputKey edits, submits or cancels the input.
func (m *Model) inputKey(k tea.KeyPressMsg) tea.Cmd {
	km := m.input.KeyMap
	switch {
	case key.Matches(k, km.Cancel):
		m.closeInput()
		return nil
	case key.Matches(k, km.Submit):
		return m.submit()
	case m.spawnFieldKey(k):
		m.switchSpawnField()
		return nil
	}
	m.input, _ = m.input.Update(k)
	return nil
}

// onPaste gives pasted text (bracketed paste) to the input when it has
// the keyboard, line breaks and tabs kept; a paste anywhere else is
// dropped: typed at the dashboard, its characters would act as keys.
func (m *Model) onPaste(p tea.PasteMsg) tea.Cmd {
	if m.mode != modeInput || m.lay.tooSmall {
		return nil
	}
	m.input, _ = m.input.Update(p)
	return nil
}

// submit acts on the input's text.
func (m *Model) submit() tea.Cmd {
	text := m.input.Value()
	m.closeInput()
	switch m.inputKind {
	case inputSearch:
		if text == "" {
			return m.log.SearchAgain() // enter alone, as in less and vi
		}
		m.log.Search(text)
		return nil
	case inputSpawn:
		return m.submitSpawn(text)
	case inputDeny:
		return m.submitDeny(text)
	case inputFilter:
		return m.applyFilter(text)
	case inputAcross:
		return m.submitAcross(text)
	}
	if strings.TrimSpace(text) == "" {
		m.say(levelError, "send: message must not be empty")
		return nil
	}
	id, kind := m.inputTarget, m.inputKind
	if _, ok := m.agent(id); !ok {
		m.say(levelError, "send: agent "+m.label(id)+" is gone")
		return nil
	}
	cmd := m.send(id, text, "send")
	if m.mode == modeConfirm {
		// Declining the interrupt goes back to the input, text intact.
		m.confirm.no = func(m *Model) tea.Cmd {
			m.openInput(kind, id, text)
			return nil
		}
	}
	return cmd
}
