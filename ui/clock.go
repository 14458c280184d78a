package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// tickInterval is the spinner's frame interval.
const tickInterval = 100 * time.Millisecond

func tick() tea.Cmd {
	return tea.Tick(tickInterval, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// startTick starts the clock if an agent runs and it is not running.
func (m *Model) startTick() tea.Cmd {
	if m.ticking || !m.anyRunning() {
		return nil
	}
	m.ticking = true
	return m.tickFn()
}

// onTick advances the spinner's frame and the table's clock, drops an
// info reply older than replyTTL, and stops the clock when no agent runs.
func (m *Model) onTick() tea.Cmd {
	m.frame++
	m.table.SetClock(m.now(), m.frame)
	if m.reply.level == levelInfo && m.reply.text != "" && m.now().Sub(m.reply.at) > replyTTL {
		m.reply = reply{}
	}
	if !m.anyRunning() && m.mode != modeStopping {
		m.ticking = false
		return nil
	}
	return m.tickFn()
}
