package proto

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// PendingQuestion is a question an agent asks and waits on (claude's
// AskUserQuestion tool, SPEC §12 "Questions"), as list, wait, the
// dashboard and viewers show it. One request holds one or more questions,
// answered together.
type PendingQuestion struct {
	// RequestID is the CLI's id of the request; an answer names it.
	RequestID string `json:"request_id"`
	// Questions are the questions, in the agent's order.
	Questions []Question `json:"questions"`
	// SubmissionID is the submission that asked.
	SubmissionID string `json:"submission_id"`
	// RequestedAt is when the request arrived.
	RequestedAt Time `json:"requested_at"`
}

// Question is one question of a PendingQuestion.
type Question struct {
	// Question is the question's text; an answer names the question by it
	// (or by Header).
	Question string `json:"question"`
	// Header is a short label of the question ("DB"); may be "".
	Header string `json:"header,omitempty"`
	// MultiSelect says that more than one option may be chosen.
	MultiSelect bool `json:"multi_select,omitempty"`
	// Options are the answers the agent offers; an answer may also be
	// any other text.
	Options []QuestionOption `json:"options"`
}

// QuestionOption is one offered answer of a Question.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// QuestionResult is the result of Answer: the request answered and the
// answer each question got, as the agent reads it.
type QuestionResult struct {
	AgentID   string `json:"agent_id"`
	RequestID string `json:"request_id"`
	// Answers maps each question's text to its answer: the chosen labels
	// (or other text), joined with ", " for a multi-select.
	Answers map[string]string `json:"answers"`
}

// Answerer answers an agent's pending questions (SPEC §12 "Questions").
// The engine and the socket's client implement it.
type Answerer interface {
	// Answer answers the pending question request requestID ("" = the
	// oldest) of agent id: answers maps a question (its text or header;
	// "" for the only one) to the chosen option labels or other text.
	Answer(ctx context.Context, id, requestID string, answers map[string][]string) (QuestionResult, error)
}

// QuestionActivity is the activity of an agent whose oldest pending
// question request is q: "asks: <header>: <question> [<labels>]" (SPEC §12).
func QuestionActivity(q PendingQuestion) string {
	if len(q.Questions) == 0 {
		return "asks a question"
	}
	first := q.Questions[0]
	act := "asks: "
	if first.Header != "" {
		act += first.Header + ": "
	}
	act += first.Question
	labels := make([]string, len(first.Options))
	for i, o := range first.Options {
		labels[i] = o.Label
	}
	if len(labels) > 0 {
		act += " [" + strings.Join(labels, " / ") + "]"
	}
	if n := len(q.Questions); n > 1 {
		act += " (+" + strconv.Itoa(n-1) + " more)"
	}
	return act
}

// ReasonQuestion is Attention.Reason for an agent that asks a question and
// waits for its answer (SPEC §12 "Questions").
const ReasonQuestion = "question"

// ErrNoPendingQuestion is the error of an answer without a request id to
// an agent that asks nothing (SPEC §12).
func ErrNoPendingQuestion(id string) *Error {
	return &Error{CodeNotPending, "agent " + id + " has no pending question"}
}

// ErrBadAnswer is the error of an answer that does not fit the questions
// asked; why says what to fix. Nothing is sent to the agent.
func ErrBadAnswer(why string) *Error {
	return &Error{CodeInvalid, why + "; nothing was sent"}
}

// AnswerText is the answers to qs in one line, in the questions' order,
// as claude tells its model: "Which DB?"="SQLite" (SPEC §12 "Questions").
// answers maps a question's text to its answer.
func AnswerText(qs []Question, answers map[string]string) string {
	parts := make([]string, 0, len(qs))
	for _, q := range qs {
		parts = append(parts, fmt.Sprintf("%q=%q", q.Question, answers[q.Question]))
	}
	return strings.Join(parts, ", ")
}
