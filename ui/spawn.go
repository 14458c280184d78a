package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// The spawn input offers a task name on a host of the tree (SPEC §14):
// tab switches the input line between the message and the name; enter
// spawns from either. A name that breaks Memo's rule, or that an agent
// under the root already has, keeps the input open with both texts.

// spawnForm is what the spawn input holds of the field not on the line.
type spawnForm struct {
	name    string // the task name typed, "" for none
	message string // the message, while the line edits the name
	naming  bool   // the line edits the name
	bad     string // why the name was refused, in the prompt (the reply is under the input)
	host    string // the host it spawns on, with several (hosts.go); "" with one
}

// spawnPrompt is the spawn input's prompt: "spawn › ", "spawn review › "
// once named, "spawn · task name › " while the name is edited.
func (m Model) spawnPrompt() string {
	verb := "spawn"
	if m.spawn.host != "" {
		verb = "spawn on " + termtext.OneLine(m.spawn.host, 40)
	}
	switch {
	case m.spawn.naming && m.spawn.bad != "":
		return verb + " · task name (" + m.spawn.bad + ") › "
	case m.spawn.naming:
		return verb + " · task name › "
	case m.spawn.name != "":
		return verb + " " + termtext.OneLine(m.spawn.name, 40) + " › "
	}
	return verb + " › "
}

// spawnPlaceholder says what the spawn input's line takes.
func (m Model) spawnPlaceholder() string {
	switch {
	case m.spawn.naming:
		return "optional: letters, digits, _ and -; tab: back to the message"
	case m.tree():
		return "task for a new agent · tab: give it a task name"
	}
	return "task for a new agent"
}

// switchSpawnField moves the spawn input's line to the other field,
// keeping what each holds.
func (m *Model) switchSpawnField() {
	if m.spawn.naming {
		m.spawn.name = m.input.Value()
		m.input.SetValue(m.spawn.message)
	} else {
		m.spawn.message = m.input.Value()
		m.input.SetValue(m.spawn.name)
	}
	m.spawn.naming = !m.spawn.naming
	m.input.Prompt, m.input.Placeholder = m.spawnPrompt(), m.spawnPlaceholder()
}

// submitSpawn spawns what the spawn input holds, under the root with its
// task name; a bad name reopens the input on the name, both texts kept.
func (m *Model) submitSpawn(line string) tea.Cmd {
	form := m.spawn
	if form.naming {
		form.name = line
	} else {
		form.message = line
	}
	if form.name != "" {
		bad := ""
		name, err := proto.CheckTaskName(form.name)
		if err != nil {
			bad = "must match [A-Za-z0-9][A-Za-z0-9_-]*" // Memo's rule
		} else if taken, ok := m.pathHolder(form.host, proto.JoinPath(proto.RootPath, name)); ok {
			bad = taken
		}
		if bad != "" {
			m.reopenSpawn(form.host, form.name, form.message, bad)
			return nil
		}
		form.name = name
	}
	m.spawns++
	return m.spawnCmd(m.spawns, form.host, form.message, form.name)
}

// reopenSpawn opens the spawn input on host ("" with one host) on the
// task name with why it was refused in the prompt, the message kept.
func (m *Model) reopenSpawn(host, name, message, bad string) {
	m.openInput(inputSpawn, "", message)
	m.spawn.name, m.spawn.host = name, host
	m.switchSpawnField() // to the name, the message kept
	m.spawn.bad = bad
	m.input.Prompt = m.spawnPrompt()
}

// pathHolder says who holds path on host ("" with one host) in the
// snapshot ("/root/review exists: 1e0e0e01, running"), as the host would
// refuse a spawn there (SPEC §14).
func (m Model) pathHolder(host, path string) (string, bool) {
	for i := range m.agents {
		if a := &m.agents[i]; a.AgentPath == path && a.Host == host {
			return fmt.Sprintf("%s exists: %s, %s", path, termtext.ShortID(a.AgentID), a.Status), true
		}
	}
	return "", false
}

// spawnCmd spawns an agent with message, named taskName ("" for none), in
// a command; n is its number among the spawns typed here.
func (m Model) spawnCmd(n int, host, message, taskName string) tea.Cmd {
	sup, ctx := m.sup, withHost(m.ctx, host)
	return func() tea.Msg {
		r, err := sup.SpawnAgent(ctx, proto.SpawnRequest{Message: message, TaskName: taskName})
		return opDoneMsg{op: opSpawn, id: r.AgentID, status: r.Status, err: err, spawn: n, named: taskName, message: message, host: host}
	}
}

// spawnFieldKey reports whether k switches the spawn input's field: tab,
// on a host of the tree.
func (m Model) spawnFieldKey(k tea.KeyPressMsg) bool {
	return m.inputKind == inputSpawn && m.tree() && key.Matches(k, m.input.KeyMap.NextField)
}
