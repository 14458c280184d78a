package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/keymap"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/internal/cells"
)

// Questions in the dashboard (SPEC §12 "Questions"): A, or enter on the
// row of an agent that asks, opens the question panel over the log pane
// with the agent's oldest pending question request, one question at a
// time. 1-9 or ↑/↓ choose, space toggles for a multi-select, o types an
// other answer, enter goes to the next question and on the last sends
// every answer by the request's id; esc closes without answering.

// questionPanel is the open panel's state: the request, the question on
// screen, and each question's choices so far.
type questionPanel struct {
	agentID string
	req     proto.PendingQuestion
	at      int            // the question on screen
	cursor  int            // the option under the cursor
	chosen  []map[int]bool // per question: the options chosen
	other   []string       // per question: the other answer typed
	typing  bool           // o: the keys type the other answer
}

// questionDoneMsg reports the end of an answer.
type questionDoneMsg struct {
	id  string
	res proto.QuestionResult
	err error
}

// openQuestion opens the panel on agent a's oldest pending question, or
// says why not. A read-only viewer refuses it before (readOnlyOp).
func (m *Model) openQuestion(a proto.AgentInfo) tea.Cmd {
	if m.readOnlyHere() {
		m.say(levelWarn, "read-only viewer: answer refused; attach without --read-only to change anything")
		return nil
	}
	if len(a.PendingQuestions) == 0 {
		m.say(levelWarn, "agent "+m.label(a.AgentID)+" asks nothing now")
		return nil
	}
	q := a.PendingQuestions[0]
	p := questionPanel{agentID: a.AgentID, req: q, chosen: make([]map[int]bool, len(q.Questions)), other: make([]string, len(q.Questions))}
	for i := range p.chosen {
		p.chosen[i] = map[int]bool{}
	}
	m.qp, m.mode = p, modeQuestion
	return nil
}

// questionKey handles a key while the panel is open.
func (m *Model) questionKey(k tea.KeyPressMsg) tea.Cmd {
	qk, p := keymap.DefaultQuestion(), &m.qp
	q := p.req.Questions[p.at]
	if p.typing {
		switch {
		case key.Matches(k, qk.Close):
			p.typing = false
		case key.Matches(k, qk.Send):
			p.typing = false
		case k.Code == tea.KeyBackspace:
			if r := []rune(p.other[p.at]); len(r) > 0 {
				p.other[p.at] = string(r[:len(r)-1])
			}
		case k.Text != "":
			p.other[p.at] += k.Text
		}
		return nil
	}
	switch {
	case key.Matches(k, qk.Close):
		m.mode = modeNormal
		m.say(levelInfo, "agent "+m.label(p.agentID)+": the question is still open; "+m.keys.AnswerQuestion.Help().Key+" answers it")
	case key.Matches(k, qk.Up):
		p.cursor = max(p.cursor-1, 0)
	case key.Matches(k, qk.Down):
		p.cursor = min(p.cursor+1, len(q.Options)-1)
	case key.Matches(k, qk.Toggle):
		if q.MultiSelect {
			p.chosen[p.at][p.cursor] = !p.chosen[p.at][p.cursor]
		} else {
			p.chosen[p.at] = map[int]bool{p.cursor: true}
		}
	case key.Matches(k, qk.Other):
		p.typing = true
	case len(k.Text) == 1 && k.Text[0] >= '1' && k.Text[0] <= '9':
		if i := int(k.Text[0] - '1'); i < len(q.Options) {
			p.cursor = i
			if q.MultiSelect {
				p.chosen[p.at][i] = !p.chosen[p.at][i]
			} else {
				p.chosen[p.at] = map[int]bool{i: true}
			}
		}
	case key.Matches(k, qk.Send):
		if len(p.chosen[p.at]) == 0 && strings.TrimSpace(p.other[p.at]) == "" {
			if q.MultiSelect || len(q.Options) == 0 {
				m.say(levelWarn, "choose an option (space) or type another answer (o) first")
				return nil
			}
			p.chosen[p.at] = map[int]bool{p.cursor: true} // enter takes the option under the cursor
		}
		if p.at+1 < len(p.req.Questions) {
			p.at, p.cursor = p.at+1, 0
			return nil
		}
		m.mode = modeNormal
		return m.answerQuestionCmd(p.agentID, p.req.RequestID, p.answers())
	}
	return nil
}

// answers is what the panel sends: each question's chosen labels, in
// option order, and its other answer.
func (p questionPanel) answers() map[string][]string {
	out := map[string][]string{}
	for i, q := range p.req.Questions {
		var labels []string
		for j, o := range q.Options {
			if p.chosen[i][j] {
				labels = append(labels, o.Label)
			}
		}
		if o := strings.TrimSpace(p.other[i]); o != "" {
			labels = append(labels, o)
		}
		out[q.Question] = labels
	}
	return out
}

// answerQuestionCmd answers request rid of agent id in a command.
func (m Model) answerQuestionCmd(id, rid string, answers map[string][]string) tea.Cmd {
	sup, ctx := m.sup, m.ctx
	return func() tea.Msg {
		ans, ok := sup.(proto.Answerer)
		if !ok {
			return questionDoneMsg{id: id, err: fmt.Errorf("this host connection cannot answer questions; use subdash ctl answer")}
		}
		res, err := ans.Answer(ctx, id, rid, answers)
		return questionDoneMsg{id: id, res: res, err: err}
	}
}

// onQuestionDone reports how an answer went on the message line.
func (m *Model) onQuestionDone(msg questionDoneMsg) tea.Cmd {
	if msg.err != nil {
		m.say(levelError, m.describe("answer", msg.id, msg.err))
		return nil
	}
	var parts []string
	for q, a := range msg.res.Answers {
		parts = append(parts, fmt.Sprintf("%q=%q", q, a))
	}
	m.say(levelInfo, m.label(msg.id)+": answered "+termtext.OneLine(strings.Join(parts, ", "), 0))
	return nil
}

// questionView is the panel's body, w cells wide: the question on screen
// with its options numbered, the marks of the chosen ones, and the other
// answer.
func (m Model) questionView(w int) string {
	p := m.qp
	q := p.req.Questions[p.at]
	var lines []string
	head := fmt.Sprintf("? agent %s asks", m.label(p.agentID))
	if n := len(p.req.Questions); n > 1 {
		head += fmt.Sprintf(" (question %d of %d)", p.at+1, n)
	}
	lines = append(lines, head, "")
	text := termtext.OneLine(q.Question, 0)
	if q.Header != "" {
		text = termtext.OneLine(q.Header, 0) + ": " + text
	}
	if q.MultiSelect {
		text += "  (any number: space toggles)"
	}
	lines = append(lines, text)
	for i, o := range q.Options {
		cur := "  "
		if i == p.cursor && !p.typing {
			cur = "> "
		}
		mark := "( )"
		if q.MultiSelect {
			mark = "[ ]"
		}
		if p.chosen[p.at][i] {
			mark = map[bool]string{true: "[x]", false: "(•)"}[q.MultiSelect]
		}
		line := fmt.Sprintf("%s%d. %s %s", cur, i+1, mark, termtext.OneLine(o.Label, 0))
		if o.Description != "" {
			line += " — " + termtext.OneLine(o.Description, 0)
		}
		lines = append(lines, line)
	}
	other := "  o. other: " + termtext.OneLine(p.other[p.at], 0)
	if p.typing {
		other = "> o. other: " + termtext.OneLine(p.other[p.at], 0) + "▏ (enter: done)"
	}
	lines = append(lines, other)
	for i := range lines {
		lines[i] = cells.Fit(lines[i], w)
	}
	return strings.Join(lines, "\n")
}
