package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// op is an operation of SPEC §3 invoked from the dashboard.
type op string

const (
	opSpawn     op = "spawn"
	opSend      op = "send"
	opInterrupt op = "interrupt"
	opClose     op = "close"
	opResume    op = "resume"
	opQueue     op = "queue"
	opSteer     op = "steer"
	opUnqueue   op = "cancel queue"
	opForget    op = "forget"
)

// opCmd runs an operation in a command: they fork processes or wait for
// process groups to end, so never in Update.
func (m Model) opCmd(o op, id, message string, interrupt bool) tea.Cmd {
	sup, ctx := m.sup, m.ctx
	return func() tea.Msg {
		done := opDoneMsg{op: o, id: id}
		switch o {
		case opSpawn:
			r, err := sup.Spawn(ctx, message)
			done.id, done.status, done.err = r.AgentID, r.Status, err
		case opSend:
			r, err := sup.Send(ctx, id, message, interrupt)
			done.status, done.dropped, done.err = r.Status, r.DroppedQueued, err
		case opInterrupt:
			r, err := sup.Interrupt(ctx, id)
			done.status, done.dropped, done.err = r.Status, r.DroppedQueued, err
		case opClose:
			r, err := sup.Close(ctx, id)
			done.status, done.dropped, done.below, done.err = r.Status, r.DroppedQueued, len(r.Descendants), err
		case opResume:
			r, err := sup.Resume(ctx, id)
			done.status, done.below, done.err = r.Status, len(r.Descendants), err
		case opQueue:
			r, err := sup.Queue(ctx, id, message)
			done.status, done.queued, done.err = r.Status, r.Queued, err
		case opSteer:
			r, err := sup.Steer(ctx, id, message)
			done.status, done.receipt, done.note, done.err = r.Status, r.Receipt, r.Note, err
		case opUnqueue:
			r, err := sup.CancelQueue(ctx, id)
			done.status, done.err = r.Status, err
		case opForget:
			r, err := sup.Forget(ctx, id)
			done.status, done.below, done.err = r.Status, len(r.Descendants), err
		}
		return done
	}
}

// shutdownCmd stops every running submission of the host (SPEC §4)
// before quitting, as long as the host's Shutdown bounds it; a viewer
// stops nothing.
func (m Model) shutdownCmd() tea.Cmd {
	host, run := m.opts.Host, m.ctx
	return func() tea.Msg {
		if host == nil {
			return shutdownMsg{}
		}
		return shutdownMsg{err: host.Shutdown(run)}
	}
}

// skipGraceCmd makes the host's stops in progress kill at once (a second
// quit while they stop): it writes the journal, so it is a command.
func (m Model) skipGraceCmd() tea.Cmd {
	host := m.opts.Host
	return func() tea.Msg {
		if host != nil {
			host.SkipGrace()
		}
		return nil
	}
}

// onOpDone reports how an operation went on the message line. What the
// operation changed reaches the table once, on the event path (ChangesMsg
// carries the agent's snapshot), not by a snapshot of every agent here.
func (m *Model) onOpDone(msg opDoneMsg) tea.Cmd {
	short := m.label(msg.id)
	if msg.named != "" && m.tree() {
		short = msg.named
	}
	// The stop this dashboard asked for (interrupt, close, or the
	// interrupt of an interrupt-and-send) is over once the operation
	// returns; from now on the supervisor's AgentInfo.Stopping says whether
	// an old process group is still being terminated.
	if m.stopping[msg.id] {
		delete(m.stopping, msg.id) // the table reads it
	}
	if msg.err != nil {
		m.say(levelError, m.describe(msg.op, msg.id, msg.err))
		if msg.op == opSpawn && msg.named != "" && proto.CodeOf(msg.err) == proto.CodeExists && m.mode == modeNormal {
			// Another agent took the path since the input checked it: the
			// input comes back on the name, nothing typed lost (SPEC §14).
			m.reopenSpawn(msg.host, msg.named, msg.message, termtext.OneLine(msg.err.Error(), 72))
		}
		return nil
	}
	switch msg.op {
	case opSpawn:
		if msg.host != "" {
			short += " on " + termtext.OneLine(msg.host, 0)
		}
		switch {
		case msg.status == proto.StatusErrored:
			m.say(levelError, "spawned "+short+" but its command could not start; see its log")
		case !msg.startup:
			m.say(levelInfo, "spawned "+short)
		}
		if !msg.startup && msg.spawn > m.chosen { // an older spawn answered late keeps out
			m.chosen = msg.spawn
			m.pending = msg.id
			if m.table.Select(msg.id) {
				m.pending = ""
			}
		}
	case opSend:
		m.say(levelInfo, "sent to "+short+dropped(msg))
	case opQueue:
		if msg.queued {
			m.say(levelInfo, "queued for "+short+": it starts when the running submission ends (u cancels it)")
		} else {
			m.say(levelInfo, "sent to "+short+": it had ended, so the message started at once")
		}
	case opSteer:
		switch msg.receipt {
		case proto.ReceiptPending:
			m.say(levelInfo, "steered into "+short+": the receipt follows on its row (folded or next turn once the agent takes it)")
		case proto.ReceiptNotDelivered:
			m.say(levelInfo, "not delivered to "+short+": "+msg.note)
		default:
			m.say(levelInfo, "sent to "+short+": it had ended, so the message started at once")
		}
	case opUnqueue:
		m.say(levelInfo, cancelledText(short, msg))
	case opInterrupt:
		gone := "process group gone"
		if a, ok := m.agent(msg.id); ok && a.Pod != "" {
			gone = "its processes in pod " + termtext.OneLine(a.Pod, 0) + " are gone" // SPEC §13
		}
		m.say(levelInfo, "interrupted "+short+": "+gone+dropped(msg))
	case opClose:
		m.say(levelInfo, "closed "+short+withDescendants(msg.below)+": stopped and archived ("+m.keys.Resume.Help().Key+" reopens)"+dropped(msg))
	case opResume:
		m.say(levelInfo, fmt.Sprintf("reopened %s%s (%s): nothing runs until you send (%s)", short, withDescendants(msg.below), msg.status, m.keys.Send.Help().Key))
	case opForget:
		m.say(levelInfo, "forgot "+short+withDescendants(msg.below)+": gone from the table and list, also after a restart; its logs stay on disk")
	}
	return nil
}

// dropped says that an operation dropped the agent's queued message.
func dropped(msg opDoneMsg) string {
	if msg.dropped {
		return "; its queued message was dropped"
	}
	return ""
}

// describe turns an operation error into plain words for the message line.
func (m Model) describe(o op, id string, err error) string {
	short := m.label(id)
	switch code := proto.CodeOf(err); {
	case o == opForget && code == proto.CodeBusy:
		return fmt.Sprintf("forget: agent %s is running; interrupt (%s) or close (%s) it first", short, m.keys.Interrupt.Help().Key, m.keys.Close.Help().Key)
	}
	switch proto.CodeOf(err) {
	case proto.CodeClosed:
		return fmt.Sprintf("%s: agent %s is closed; press %s to reopen it first", o, short, m.keys.Resume.Help().Key)
	case proto.CodeNotRunning:
		return fmt.Sprintf("%s: agent %s is not running", o, short)
	case proto.CodeBusy:
		return fmt.Sprintf("%s: agent %s is busy; interrupt it first", o, short)
	case proto.CodeLimit:
		return fmt.Sprintf("%s: %s; wait for an agent to finish or raise --max-agents", o, err)
	case proto.CodeShutdown:
		return fmt.Sprintf("%s: the dashboard is stopping", o)
	}
	text := err.Error()
	if id != "" {
		text = strings.ReplaceAll(text, id, short)
	}
	return fmt.Sprintf("%s: %s", o, termtext.OneLine(text, 0)) // "<op>: <why>", as every message above
}
