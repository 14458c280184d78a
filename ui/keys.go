package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/proto"
)

// handleKey gives the key to what has focus: the input, a confirmation,
// the help overlay, or the dashboard.
func (m Model) handleKey(k tea.KeyPressMsg) (Model, tea.Cmd) {
	if m.lay.tooSmall && m.mode != modeStopping && m.mode != modeConfirm {
		return m, m.tooSmallKey(k)
	}
	switch m.mode {
	case modeInput:
		return m, m.inputKey(k)
	case modeConfirm:
		return m, m.confirmKey(k)
	case modeHelp:
		m.helpKey(k)
		return m, nil
	case modeAcross:
		return m, m.acrossKey(k)
	case modeQuestion:
		return m, m.questionKey(k)
	case modeStopping:
		if key.Matches(k, m.keys.Quit) {
			// A second quit does not wait: what is still alive after its
			// SIGTERM is killed now, and the shutdown ends within moments.
			return m, tea.Sequence(m.skipGraceCmd(), tea.Quit)
		}
		return m, nil
	}
	return m, m.normalKey(k)
}

// tooSmallKey handles a key while "terminal too small" hides every
// widget: q and ctrl+c quit as usual (asking first while agents run), every
// other key is dropped, so nothing reaches an input or overlay the user
// cannot see. Declining the quit goes back to what was open.
func (m *Model) tooSmallKey(k tea.KeyPressMsg) tea.Cmd {
	if !key.Matches(k, m.keys.Quit) {
		return nil
	}
	back := m.mode
	cmd := m.quit()
	if m.mode == modeConfirm {
		m.confirm.no = func(m *Model) tea.Cmd {
			m.mode = back
			return nil
		}
	}
	return cmd
}

// normalKey handles a key when the dashboard itself has focus.
func (m *Model) normalKey(k tea.KeyPressMsg) tea.Cmd {
	km := m.keys
	if m.tilesOn() {
		if cmd, done := m.tilesKey(k); done {
			return cmd
		}
	}
	a, ok := m.selected()
	if op := m.readOnlyOp(k); op != "" {
		if name, _, ok := m.selectedHost(); ok && !m.cfg.ReadOnly {
			m.say(levelWarn, "read-only viewer of "+name+": "+op+" refused; attach to it without ?read-only to change anything")
			return nil
		}
		m.say(levelWarn, "read-only viewer: "+op+" refused; attach without --read-only to change anything")
		return nil
	}
	switch {
	case key.Matches(k, km.Quit):
		return m.quit()
	case key.Matches(k, km.Help):
		m.mode, m.helpTop = modeHelp, 0
		return m.storageCmd()
	case key.Matches(k, km.SplitLess, km.SplitMore):
		m.moveSplit(map[bool]int{true: 1, false: -1}[key.Matches(k, km.SplitMore)])
	case key.Matches(k, km.Zoom):
		m.toggleZoom()
	case key.Matches(k, km.Tiles):
		m.toggleTiles()
	case ok && (key.Matches(k, km.AnswerQuestion) || k.Code == tea.KeyEnter && len(a.PendingQuestions) > 0):
		return m.openQuestion(a)
	case key.Matches(k, km.FocusPane):
		m.focus = map[pane]pane{paneTable: paneLog, paneLog: paneTable}[m.focus]
		if m.zoom != paneNone {
			m.zoom = m.focus // the zoom shows what has the focus
			m.relayout()
		}
	case keymap.Matches(k, m.table.KeyMap):
		var cmd tea.Cmd
		m.table, cmd = m.table.Update(k)
		m.needChanged() // a fold changes the rows the table measures
		m.syncLog(false)
		return cmd
	case keymap.Matches(k, m.log.KeyMap):
		var cmd tea.Cmd
		m.log, cmd = m.log.Update(k)
		return cmd
	case key.Matches(k, km.NextNeedsYou):
		return m.jumpNeedsYou()
	case key.Matches(k, km.Filter):
		m.openInput(inputFilter, "", m.filter.text)
	case key.Matches(k, km.CloseShown):
		return m.closeShown()
	case key.Matches(k, km.Spawn):
		return m.openSpawn()
	case key.Matches(k, km.Search):
		m.openInput(inputSearch, "", "") // as in less: empty, enter alone repeats the last search
	case key.Matches(k, km.SearchAgents):
		m.openAcross()
	case key.Matches(k, km.Transcript):
		if !m.structured() {
			m.say(levelWarn, "raw output only: transcripts come with --preset claude, codex or gemini")
			return nil
		}
		m.raw = !m.raw
		m.syncLog(false)
	case m.onHostRow(k): // a host's row: said what to do
	case m.innerKey(k): // an inner agent's row: said why not
	case !ok:
		if key.Matches(k, km.Send, km.Resend, km.EditResend, km.Interrupt, km.Close, km.Resume, km.CancelQueue,
			km.PrevSubmission, km.NextSubmission, km.Pager, km.Diff) {
			m.say(levelWarn, "no agent selected: press "+km.Spawn.Help().Key+" to spawn one")
		}
	default:
		return m.agentKey(k, a)
	}
	return nil
}

// readOnlyOp names the operation key k asks for when this is a read-only
// viewer, in the host connection's words (client.Remote); "" otherwise.
func (m *Model) readOnlyOp(k tea.KeyPressMsg) string {
	if !m.readOnlyHere() {
		return ""
	}
	km := m.keys
	for _, op := range []struct {
		name string
		keys []key.Binding
	}{
		{"spawn", []key.Binding{km.Spawn}},
		{"send", []key.Binding{km.Send, km.Resend, km.EditResend}},
		{"interrupt", []key.Binding{km.Interrupt}},
		{"close", []key.Binding{km.Close, km.CloseShown}},
		{"resume", []key.Binding{km.Resume}},
		{"forget", []key.Binding{km.Forget}},
		{"cancel queue", []key.Binding{km.CancelQueue}},
		{"approve", []key.Binding{km.Approve, km.ApproveAlways}},
		{"deny", []key.Binding{km.Deny}},
		{"answer", []key.Binding{km.AnswerQuestion}},
	} {
		if key.Matches(k, op.keys...) {
			return op.name
		}
	}
	return ""
}

// agentKey handles the keys that act on the selected agent a.
func (m *Model) agentKey(k tea.KeyPressMsg, a proto.AgentInfo) tea.Cmd {
	km, id, short := m.keys, a.AgentID, m.label(a.AgentID)
	if cmd, ok := m.approvalKey(k, a); ok {
		return cmd
	}
	if a.Status == proto.StatusClosed && key.Matches(k, km.Send, km.Resend, km.EditResend) {
		// Refuse before the input opens: typed text would be lost.
		m.say(levelWarn, "agent "+short+" is closed; press "+km.Resume.Help().Key+" to reopen it first")
		return nil
	}
	switch {
	case key.Matches(k, km.Send):
		m.openInput(inputSend, id, "")
	case key.Matches(k, km.EditResend):
		if proto.MessageSize(a.LastMessage) > editInline {
			return m.editFile(id)
		}
		if proto.MessageCut(a.LastMessage) {
			return m.wholeMessageCmd(id)
		}
		m.openInput(inputEdit, id, a.LastMessage)
	case key.Matches(k, km.Resend):
		if a.LastMessage == "" {
			m.say(levelWarn, "agent "+short+" has no message to resend")
			return nil
		}
		if proto.MessageCut(a.LastMessage) {
			return m.resend(id) // from the host's file: the dashboard never holds it
		}
		return m.send(id, a.LastMessage, "resend")
	case key.Matches(k, km.Forget):
		return m.forget(a)
	case key.Matches(k, km.Interrupt):
		if !a.Running() {
			m.say(levelWarn, "agent "+short+" is not running")
			return nil
		}
		m.markStopping(id)
		return m.opCmd(opInterrupt, id, "", false)
	case key.Matches(k, km.Close):
		return m.closeAgent(a)
	case key.Matches(k, km.Resume):
		if a.Status != proto.StatusClosed {
			// resume reads as "go on"; say what does that
			m.say(levelInfo, fmt.Sprintf("agent %s is open (%s): resume only reopens closed ones; %s reruns its last message", short, a.Status, km.Resend.Help().Key))
			return nil
		}
		return m.opCmd(opResume, id, "", false)
	case key.Matches(k, km.PrevSubmission, km.NextSubmission):
		return m.moveSubmission(a, key.Matches(k, km.NextSubmission))
	case key.Matches(k, km.CancelQueue):
		return m.cancelQueued(a)
	case key.Matches(k, km.Pager):
		return m.openPager(a)
	case key.Matches(k, km.Diff):
		return m.openDiff(a)
	}
	return nil
}

// send sends message to agent id, asking first whether to interrupt it
// when it runs; verb names the action in the question.
func (m *Model) send(id, message, verb string) tea.Cmd {
	a, _ := m.agent(id)
	if !a.Running() {
		return m.opCmd(opSend, id, message, false)
	}
	steer := ""
	if a.Steerable {
		steer = ", steer it (into the running turn)"
	}
	m.ask(fmt.Sprintf("%s is running: interrupt it and %s now%s, queue the message for when it ends, or cancel?", m.label(id), verb, steer),
		"interrupt and "+verb, "cancel", func(m *Model) tea.Cmd {
			m.markStopping(id)
			return m.opCmd(opSend, id, message, true)
		}, nil)
	m.confirm.choice = keymap.DefaultSendChoice().WithSteer(a.Steerable)
	m.confirm.queue = func(m *Model) tea.Cmd { return m.opCmd(opQueue, id, message, false) }
	if a.Steerable {
		m.confirm.steer = func(m *Model) tea.Cmd { return m.opCmd(opSteer, id, message, false) }
	}
	return nil
}

// markStopping shows "stopping" for agent id at once.
func (m *Model) markStopping(id string) {
	m.stopping[id] = true // the table reads it
}

// quit quits at once when nothing runs, else asks first; confirmed, it
// stops every running submission while the dashboard shows them stopping.
// A viewer detaches at once: nothing stops (SPEC §9). The host's question
// names the viewers it ends too (SPEC §7).
func (m *Model) quit() tea.Cmd {
	if m.opts.Host == nil { // a viewer
		return tea.Quit
	}
	c := m.counts()
	n := c.Running
	viewers := 0
	if m.opts.Viewers != nil {
		viewers = m.opts.Viewers()
	}
	if n == 0 && viewers == 0 {
		return tea.Quit
	}
	var parts []string
	if n > 0 {
		noun := "agents are"
		if n == 1 {
			noun = "agent is"
		}
		part := fmt.Sprintf("%d %s running and will be stopped", n, noun)
		if by := runningOrigins(c.RunningBy); by != "" {
			part += " (" + by + ")"
		}
		parts = append(parts, part)
	}
	if viewers > 0 {
		noun := "viewers are"
		if viewers == 1 {
			noun = "viewer is"
		}
		parts = append(parts, fmt.Sprintf("%d %s attached and will be closed", viewers, noun))
	}
	q := "Quit? " + strings.Join(parts, "; ") + "."
	switch {
	case c.Queued == 1:
		q += " 1 queued message will not run."
	case c.Queued > 1:
		q += fmt.Sprintf(" %d queued messages will not run.", c.Queued)
	}
	m.ask(q, "quit", "stay", func(m *Model) tea.Cmd { return m.stopAll() }, nil)
	return nil
}

// runningOrigins says which running agents clients started, e.g. "2
// started by an MCP client, 1 by ctl"; "" when the dashboard started them
// all.
func runningOrigins(by []proto.OriginCount) string {
	var parts []string
	for i, o := range by {
		who := o.Origin
		switch o.Origin {
		case "mcp":
			who = "an MCP client"
		case "viewer":
			who = "a viewer"
		}
		if i == 0 {
			parts = append(parts, fmt.Sprintf("%d started by %s", o.N, who))
		} else {
			parts = append(parts, fmt.Sprintf("%d by %s", o.N, who))
		}
	}
	return strings.Join(parts, ", ")
}

// stopAll starts stopping every running submission, then quits.
func (m *Model) stopAll() tea.Cmd {
	m.mode = modeStopping
	m.stopN = m.counts().Running
	for _, a := range m.agents {
		if a.Running() {
			m.stopping[a.AgentID] = true // the table reads it
		}
	}
	return tea.Batch(m.shutdownCmd(), m.startTick())
}

// ask shows a yes/no question; yes and no run on the answer (nil: nothing).
func (m *Model) ask(question, yes, no string, onYes, onNo func(m *Model) tea.Cmd) {
	m.mode = modeConfirm
	m.confirm = confirmation{question: question, keys: keymap.DefaultConfirm().WithHelp(yes, no), yes: onYes, no: onNo}
}

// confirmKey answers the pending question.
func (m *Model) confirmKey(k tea.KeyPressMsg) tea.Cmd {
	c := m.confirm
	var f func(*Model) tea.Cmd
	switch {
	case c.pick != nil:
		var done bool
		if f, done = c.pickKey(k); !done {
			return nil
		}
	case c.queue != nil:
		switch {
		case key.Matches(k, c.choice.Interrupt):
			f = c.yes
		case c.steer != nil && key.Matches(k, c.choice.Steer):
			f = c.steer
		case key.Matches(k, c.choice.Queue):
			f = c.queue
		case key.Matches(k, c.choice.Cancel):
			f = c.no
		default:
			return nil
		}
	case key.Matches(k, c.keys.Yes):
		f = c.yes
	case key.Matches(k, c.keys.No):
		f = c.no
	case k.Keystroke() == "ctrl+c" && strings.HasPrefix(c.question, "Quit?"):
		f = c.yes // ctrl+c twice quits
	default:
		return nil
	}
	m.mode, m.confirm = modeNormal, confirmation{}
	if f == nil {
		return nil
	}
	return f(m)
}

// helpKey scrolls or closes the help overlay.
func (m *Model) helpKey(k tea.KeyPressMsg) {
	switch {
	case key.Matches(k, m.helpKeys.Close):
		m.mode = modeNormal
	case key.Matches(k, m.helpKeys.Up):
		m.helpTop = max(m.helpTop-1, 0)
	case key.Matches(k, m.helpKeys.Down):
		m.helpTop++
	}
}

// moveSubmission shows the earlier or later submission of agent a.
func (m *Model) moveSubmission(a proto.AgentInfo, later bool) tea.Cmd {
	n := len(a.Submissions)
	if n == 0 {
		return nil
	}
	v := m.views[a.AgentID]
	cur := v.seq
	if cur <= 0 || cur > n {
		cur = n
	}
	switch {
	case later && cur < n:
		cur++
	case !later && cur > 1:
		cur--
	default:
		edge := "latest"
		if !later {
			edge = "first"
		}
		m.say(levelInfo, fmt.Sprintf("already at the %s submission (#%d of %d)", edge, cur, n))
		return nil
	}
	if cur == n {
		cur = 0 // back to following the latest
	}
	m.saveView()
	v = m.views[a.AgentID]
	v.seq = cur
	m.views[a.AgentID] = v
	m.syncLog(false)
	return nil
}
