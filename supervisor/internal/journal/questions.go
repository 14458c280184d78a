package journal

import (
	"strings"

	"github.com/subdash/subdash/supervisor/proto"
)

// Outcomes of a question request (SPEC §12 "Questions") that no person
// answered, as the records keep them and an answer's refusal names them.
const (
	// QuestionExpired: the submission ended by itself while it asked.
	QuestionExpired = "the submission ended unanswered"
	// QuestionWithdrawn: the agent CLI withdrew the request.
	QuestionWithdrawn = "withdrawn by the agent CLI"
	// QuestionHostEnded: the host ended (killed) while it asked; the
	// submission was restored errored, interrupted (host ended): SPEC §10.
	QuestionHostEnded = "the host ended before an answer"
)

// QuestionRecord is a question request of a submission as its record keeps
// it (SPEC §10, §12 "Questions"): what it asked and when, and how it ended.
type QuestionRecord struct {
	RequestID string           `json:"request_id"`
	Tool      string           `json:"tool,omitempty"`
	Questions []proto.Question `json:"questions"`
	AskedAt   proto.Time       `json:"asked_at"`
	// Answers are a person's answers, question text to answer; nil when
	// it was not answered.
	Answers map[string]string `json:"answers,omitempty"`
	// Outcome says how it ended, as the transcript shows it: "answered:
	// …", "denied: …" (a stop), QuestionExpired, QuestionWithdrawn,
	// QuestionHostEnded; "" while it is pending.
	Outcome string `json:"outcome,omitempty"`
}

// questionEvent applies a question event of submission ev.Seq to r:
// question_requested adds the request; question_answered, question_expired
// and approval_withdrawn (of a question) end it.
func (rp *replay) questionEvent(r *AgentRecord, ev Event) {
	s := rp.sub(r, ev.Seq, ev.SubmissionID, ev.Time)
	if ev.Event == "question_requested" {
		for _, q := range s.Questions {
			if q.RequestID == ev.RequestID {
				return // applied already (a run replayed over its checkpoint)
			}
		}
		s.Questions = append(s.Questions, QuestionRecord{RequestID: ev.RequestID, Tool: ev.Tool, Questions: ev.Questions, AskedAt: ev.Time})
		return
	}
	for i := range s.Questions {
		q := &s.Questions[i]
		if q.RequestID != ev.RequestID {
			continue
		}
		switch ev.Event {
		case "question_answered":
			if ev.Answers != nil {
				q.Answers, q.Outcome = ev.Answers, "answered: "+proto.AnswerText(q.Questions, ev.Answers)
			} else {
				q.Outcome = "denied: " + strings.TrimPrefix(ev.Note, "subdash: ")
			}
		case "question_expired":
			q.Outcome = QuestionExpired
		case "approval_withdrawn":
			q.Outcome = QuestionWithdrawn
		}
	}
}

// questionsUnanswered ends the questions of s still pending when its host
// ended (hostEnded).
func questionsUnanswered(s *SubmissionRecord) {
	for i := range s.Questions {
		if s.Questions[i].Outcome == "" {
			s.Questions[i].Outcome = QuestionHostEnded
		}
	}
}
