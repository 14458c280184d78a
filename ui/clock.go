package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// tickInterval is the spinner's frame interval, and so how often the
// elapsed times are drawn again: 4 frames a second. Each tick changes the
// row of every running agent on screen, which Bubble Tea then measures,
// cuts and writes again; at 10 a second (the spinner's own rate) that is
// most of a viewer's rendering with many agents. A running agent still
// reads as running: its glyph turns, its time counts.
const tickInterval = 250 * time.Millisecond

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
