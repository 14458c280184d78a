package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// Approvals in the dashboard (SPEC §12): the request on screen is the
// oldest pending one of the selected agent, shown in the help line; y, Y and
// d answer that request, by its id, so an answer never lands on a request
// that arrived after the user looked.

// approvalDoneMsg reports the end of an answer.
type approvalDoneMsg struct {
	id  string
	res proto.ApprovalResult
	err error
}

// onScreenApproval returns the request the keys answer: the oldest pending
// one of the selected agent.
func (m Model) onScreenApproval() (proto.AgentInfo, proto.PendingApproval, bool) {
	a, ok := m.selected()
	if !ok || len(a.PendingApprovals) == 0 {
		return a, proto.PendingApproval{}, false
	}
	return a, a.PendingApprovals[0], true
}

// approvalKey handles y (allow), Y (allow the tool for the session) and d
// (deny, with a reason typed in the input line) for agent a. It reports
// whether k was one of them.
func (m *Model) approvalKey(k tea.KeyPressMsg, a proto.AgentInfo) (tea.Cmd, bool) {
	km := m.keys
	if !key.Matches(k, km.Approve, km.ApproveAlways, km.Deny) {
		return nil, false
	}
	if len(a.PendingApprovals) == 0 {
		why := "no tool permission request is pending"
		if !m.cfg.Structured() || !m.cfg.Approvals {
			why += " (approvals need --preset claude --approvals)"
		}
		m.say(levelWarn, "agent "+m.label(a.AgentID)+": "+why)
		return nil, true
	}
	p := a.PendingApprovals[0]
	switch {
	case key.Matches(k, km.Deny):
		m.openInput(inputDeny, a.AgentID, "")
		m.denyRequest = p
		m.input.Prompt = m.inputPrompt()
		return nil, true
	case key.Matches(k, km.ApproveAlways):
		return m.answerCmd(a.AgentID, p.RequestID, proto.DecisionAllowAlways, ""), true
	}
	return m.answerCmd(a.AgentID, p.RequestID, proto.DecisionAllow, ""), true
}

// answerCmd answers request rid of agent id in a command.
func (m Model) answerCmd(id, rid, decision, message string) tea.Cmd {
	sup, ctx := m.sup, m.ctx
	return func() tea.Msg {
		var res proto.ApprovalResult
		var err error
		if decision == proto.DecisionDeny {
			res, err = sup.Deny(ctx, id, rid, message)
		} else {
			res, err = sup.Approve(ctx, id, rid, decision == proto.DecisionAllowAlways)
		}
		return approvalDoneMsg{id: id, res: res, err: err}
	}
}

// onApprovalDone reports how an answer went on the message line.
func (m *Model) onApprovalDone(msg approvalDoneMsg) tea.Cmd {
	short := m.label(msg.id)
	if msg.err != nil {
		m.say(levelError, m.describe("answer", msg.id, msg.err))
		return nil
	}
	r := msg.res
	what := termtext.OneLine(r.Tool+" "+r.Summary, 0)
	switch r.Decision {
	case proto.DecisionAllowAlways:
		m.say(levelInfo, fmt.Sprintf("%s: allowed %s, and %s for the rest of its session", short, what, termtext.OneLine(r.Tool, 0)))
	case proto.DecisionDeny:
		m.say(levelInfo, fmt.Sprintf("%s: denied %s", short, what))
	default:
		m.say(levelInfo, fmt.Sprintf("%s: allowed %s", short, what))
	}
	return nil
}

// submitDeny sends the denial typed in the input line.
func (m *Model) submitDeny(reason string) tea.Cmd {
	return m.answerCmd(m.inputTarget, m.denyRequest.RequestID, proto.DecisionDeny, reason)
}

// approvalHelp is the help line while the selected agent waits for an
// answer: the request on screen and the keys that answer it.
func (m Model) approvalHelp() ([]key.Binding, bool) {
	a, p, ok := m.onScreenApproval()
	if !ok {
		return nil, false
	}
	km := m.keys
	allow, always, deny := km.Approve, km.ApproveAlways, km.Deny
	what := termtext.OneLine(p.Tool+" "+p.Summary, 0)
	if n := len(a.PendingApprovals); n > 1 {
		what += fmt.Sprintf(" (1 of %d)", n)
	}
	allow.SetHelp("y", "allow "+what)
	always.SetHelp("Y", "allow "+termtext.OneLine(p.Tool, 0)+" for the session")
	deny.SetHelp("d", "deny")
	return []key.Binding{allow, always, deny, km.Help, km.Quit}, true
}
