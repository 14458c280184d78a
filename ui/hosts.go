package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/agenttable"
)

// A dashboard of several hosts (SPEC §9 "Several hosts"): a viewer whose
// backend is a proto.HostSet. Its table holds every host's agents under a
// row per host (agenttable.SetHosts); the filter, the search across
// agents, the tiles and the status line's counts cover them all; an
// operation goes to its agent's host (the backend routes it), a spawn to
// the selected host; a label that two hosts share is said HOST:/root/x.
// With one host (m.hosts nil) none of this shows.

// multi reports whether the dashboard shows several hosts.
func (m Model) multi() bool { return m.hosts != nil }

// initHosts takes the hosts of a backend of several hosts, at New.
func (m *Model) initHosts(s Supervisor) {
	if hs, ok := s.(proto.HostSet); ok {
		m.hosts = hs.Hosts()
		m.table.SetHosts(m.tableHosts())
	}
}

// startOnAnAgent selects the first agent rather than the first host's
// row, at New.
func (m *Model) startOnAnAgent() {
	if m.multi() {
		m.table.SelectFirstAgent()
	}
}

// onHosts takes the hosts' states a change carried (proto.Change.Hosts).
func (m *Model) onHosts(states []proto.HostState) {
	if !m.multi() {
		return
	}
	m.hosts = states
	m.table.SetHosts(m.tableHosts())
	m.needChanged()
}

// tableHosts are the hosts as the table's rows name them: the host, its
// folder (the ssh target for a host on another machine), and whether it
// is lost.
func (m Model) tableHosts() []agenttable.Host {
	out := make([]agenttable.Host, len(m.hosts))
	for i, h := range m.hosts {
		where := h.Dir
		switch {
		case h.Where != "":
			where = h.Where
		case where == "":
			where = h.Target
		}
		text := termtext.OneLine(where, 0)
		if h.ReadOnly {
			text += " · read-only"
		}
		out[i] = agenttable.Host{Name: termtext.OneLine(h.Name, 0), Text: text, Lost: termtext.OneLine(h.Lost, 0), LostAt: h.LostAt}
	}
	return out
}

// hostState returns the state of host name.
func (m Model) hostState(name string) (proto.HostState, bool) {
	for _, h := range m.hosts {
		if h.Name == name {
			return h, true
		}
	}
	return proto.HostState{}, false
}

// hostLost reports whether host name is lost ("" with one host: no).
func (m Model) hostLost(name string) bool {
	h, ok := m.hostState(name)
	return ok && h.Lost != ""
}

// lostHosts returns the names of the hosts that are lost.
func (m Model) lostHosts() []string {
	var out []string
	for _, h := range m.hosts {
		if h.Lost != "" {
			out = append(out, h.Name)
		}
	}
	return out
}

// maxAgents is the status line's limit of running agents: the host's, or
// with several hosts the sum of theirs.
func (m Model) maxAgents() int {
	if !m.multi() {
		return m.cfg.MaxAgents
	}
	n := 0
	for _, h := range m.hosts {
		n += h.MaxAgents
	}
	return n
}

// findAmbiguous notes the labels (label's, before a host is put in front)
// that agents of two hosts share. Cost: O(agents), with setAgents.
func (m *Model) findAmbiguous() {
	m.ambiguous = nil
	if !m.multi() {
		return
	}
	first := map[string]string{} // label → the host that has it first
	for i := range m.agents {
		a := &m.agents[i]
		l := m.plainLabel(a)
		switch h, ok := first[l]; {
		case !ok:
			first[l] = a.Host
		case h != a.Host:
			if m.ambiguous == nil {
				m.ambiguous = map[string]bool{}
			}
			m.ambiguous[l] = true
		}
	}
}

// hostLabel is label for an agent whose label another host's agent has
// too: HOST:/root/path, or HOST:shortid without a task name.
func hostLabel(a *proto.AgentInfo, tree bool) string {
	if tree && a.TaskName != "" && a.AgentPath != "" {
		return termtext.OneLine(a.Host, 0) + ":" + termtext.OneLine(a.AgentPath, 0)
	}
	return termtext.OneLine(a.Host, 0) + ":" + termtext.ShortID(a.AgentID)
}

// hitPath is what the search across agents names a hit's agent by: its
// path, HOST:/root/x where another host has the same.
func (m Model) hitPath(h proto.SearchHit) string {
	if a, ok := m.agent(h.AgentID); ok && m.ambiguous[m.plainLabel(&a)] {
		return hostLabel(&a, m.tree())
	}
	return h.AgentPath
}

// selectedHost returns the host the selected row is of (a host's row, or
// an agent's); ok is false with one host or nothing selected.
func (m Model) selectedHost() (name string, onRow, ok bool) {
	if !m.multi() {
		return "", false, false
	}
	return m.table.SelectedHost()
}

// onHostRow says, for a key that acts on an agent, that the selected row
// is a host's, and what to do; it reports whether it took the key.
func (m *Model) onHostRow(k tea.KeyPressMsg) bool {
	name, onRow, _ := m.selectedHost()
	km := m.keys
	if !onRow || !key.Matches(k, km.Send, km.Resend, km.EditResend, km.Interrupt, km.Close, km.Resume, km.Forget, km.CancelQueue,
		km.PrevSubmission, km.NextSubmission, km.Pager, km.Diff, km.Approve, km.ApproveAlways, km.Deny, km.AnswerQuestion) {
		return false
	}
	m.say(levelWarn, fmt.Sprintf("%s is a host's row: select one of its agents (%s) to act on it; %s spawns one there",
		name, km.Down.Help().Key, km.Spawn.Help().Key))
	return true
}

// hostReadOnly reports whether the viewer refuses operations on host
// name (its target's ?read-only, or --read-only).
func (m Model) hostReadOnly(name string) bool {
	h, ok := m.hostState(name)
	return ok && h.ReadOnly
}

// openSpawn opens the spawn input: on the selected host with several
// hosts (with nothing selected, it asks which first).
func (m *Model) openSpawn() tea.Cmd {
	if !m.multi() {
		m.openInput(inputSpawn, "", "")
		return nil
	}
	if name, _, ok := m.selectedHost(); ok {
		return m.spawnOn(name)
	}
	names := make([]string, len(m.hosts))
	for i, h := range m.hosts {
		names[i] = h.Name
	}
	m.pick("Spawn on which host?", names, func(m *Model, i int) tea.Cmd { return m.spawnOn(names[i]) })
	return nil
}

// spawnOn opens the spawn input for host name, or says why it cannot
// spawn there (read-only, lost).
func (m *Model) spawnOn(name string) tea.Cmd {
	h, _ := m.hostState(name)
	switch {
	case h.ReadOnly:
		m.say(levelWarn, "read-only viewer of "+name+": spawn refused; attach to it without ?read-only to change anything")
		return nil
	case h.Lost != "":
		m.say(levelWarn, fmt.Sprintf("host %s is lost (%s): spawn there once it answers again", name, h.Lost))
		return nil
	}
	m.openInput(inputSpawn, "", "")
	m.spawn.host = name
	m.input.Prompt = m.spawnPrompt()
	return nil
}

// pick asks question with choices, answered by their number (1 to 9);
// onPick runs on the answer, with the choice's index.
func (m *Model) pick(question string, choices []string, onPick func(m *Model, i int) tea.Cmd) {
	var parts []string
	for i, c := range choices[:min(len(choices), 9)] {
		parts = append(parts, fmt.Sprintf("%d %s", i+1, termtext.OneLine(c, 40)))
	}
	m.mode = modeConfirm
	m.confirm = confirmation{question: question + " " + strings.Join(parts, " · "), picks: len(parts), pick: onPick}
}

// pickKey answers a pick: a choice's number, or esc.
func (c confirmation) pickKey(k tea.KeyPressMsg) (f func(*Model) tea.Cmd, done bool) {
	if k.Code == tea.KeyEscape || k.Keystroke() == "n" || k.Keystroke() == "q" {
		return nil, true
	}
	if n, err := strconv.Atoi(k.Keystroke()); err == nil && n >= 1 && n <= c.picks {
		return func(m *Model) tea.Cmd { return c.pick(m, n-1) }, true
	}
	return nil, false
}

// pickHelp are the bindings a pick's help line shows.
func (c confirmation) pickHelp() []key.Binding {
	keys := make([]string, c.picks)
	for i := range keys {
		keys[i] = strconv.Itoa(i + 1)
	}
	return []key.Binding{
		key.NewBinding(key.WithKeys(keys...), key.WithHelp("1–"+strconv.Itoa(c.picks), "choose")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

// withHost is ctx naming host (proto.WithHost) when it is not "".
func withHost(ctx context.Context, host string) context.Context {
	if host == "" {
		return ctx
	}
	return proto.WithHost(ctx, host)
}

// perHost says n things counted per host, for a question: " (laptop 3,
// box 2)"; "" with one host.
func (m Model) perHost(by map[string]int) string {
	if !m.multi() || len(by) == 0 {
		return ""
	}
	var parts []string
	for _, h := range m.hosts {
		if n := by[h.Name]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", termtext.OneLine(h.Name, 0), n))
		}
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// hostsStatus is the status line's part about the hosts: which are lost;
// "" with one host or none lost.
func (m Model) hostsStatus() string {
	lost := m.lostHosts()
	switch len(lost) {
	case 0:
		return ""
	case 1:
		return agenttable.SymErrored + " host lost: " + termtext.OneLine(lost[0], 0)
	}
	return fmt.Sprintf("%s %d hosts lost: %s", agenttable.SymErrored, len(lost), termtext.OneLine(strings.Join(lost, ", "), 0))
}

// hostLines is the log pane's body while a host's row is selected: the
// host, where it is, what it runs, and what to do.
func (m Model) hostLines(name string) []string {
	h, _ := m.hostState(name)
	var lines []string
	add := func(s string) { lines = append(lines, termtext.OneLine(s, 0)) }
	add("host " + h.Name)
	if h.Where != "" {
		add("on " + h.Where)
	}
	if h.Dir != "" {
		add("folder " + h.Dir)
	}
	if h.PID != 0 {
		kind := h.Kind
		if kind == "" {
			kind = "host"
		}
		line := fmt.Sprintf("subdash %s, pid %d", kind, h.PID)
		if h.Socket != "" {
			line += ", socket " + h.Socket
		}
		add(line)
	}
	if h.Command != "" {
		add("agent command: " + h.Command)
	}
	if h.ReadOnly {
		add("read-only: every operation is refused")
	}
	if h.Lost != "" {
		add(fmt.Sprintf("%s host lost since %s: %s", agenttable.SymErrored, h.LostAt.Format("15:04:05"), h.Lost))
		add("its agents are shown as last seen; it is tried again every 2 s")
	} else if !h.ReadOnly {
		add("press " + m.keys.Spawn.Help().Key + " to spawn an agent here")
	}
	return lines
}

// readOnlyHere reports whether the viewer refuses operations on what is
// selected: every host's (--read-only), or the selected host's.
func (m Model) readOnlyHere() bool {
	if m.cfg.ReadOnly {
		return true
	}
	name, _, ok := m.selectedHost()
	return ok && m.hostReadOnly(name)
}
