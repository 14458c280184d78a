package transcript

import (
	"encoding/json"
	"strconv"
	"strings"
)

// KindQuestion is a question request of the CLI (claude AskUserQuestion,
// SPEC §12 "Questions"): ID is the request id to answer, Text the
// questions with their numbered options.
const KindQuestion Kind = "question"

// AskUserQuestion is the claude tool with which the agent asks the user
// questions (SPEC §12 "Questions"). With --permission-prompt-tool stdio
// claude offers it in -p mode and sends each call as a can_use_tool
// control request:
//
//	stdout {"type":"control_request","request_id":"<uuid>","request":{"subtype":"can_use_tool",
//	        "tool_name":"AskUserQuestion","input":{"questions":[{"question":"Which DB?","header":"DB",
//	        "options":[{"label":"Postgres","description":"pg"},…],"multiSelect":false}]},…}}
//	stdin  … "response":{"behavior":"allow","updatedInput":{"questions":[…],
//	        "answers":{"Which DB?":"SQLite"}}}
//
// after which the model reads `Your questions have been answered:
// "Which DB?"="SQLite"`. Seen with claude 2.1.197 and 2.1.328
// (claude-stream-askuserquestion.jsonl).
const AskUserQuestion = "AskUserQuestion"

// Asked is one question of an AskUserQuestion request, as proto.Question
// holds it (proto imports this package).
type Asked struct {
	Question, Header string
	MultiSelect      bool
	Labels, Descs    []string
}

type askInput struct {
	Questions []struct {
		Question    string `json:"question"`
		Header      string `json:"header"`
		MultiSelect bool   `json:"multiSelect"`
		Options     []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
	} `json:"questions"`
}

// ParseQuestions returns the questions of an AskUserQuestion request c;
// headers and descriptions made plain (the question and label texts stay
// as sent: an answer names them). ok is false when c is no such request
// or asks nothing.
func ParseQuestions(c ControlRequest) (qs []Asked, ok bool) {
	if c.Subtype != "can_use_tool" || c.Tool != AskUserQuestion {
		return nil, false
	}
	var in askInput
	if json.Unmarshal(c.Input, &in) != nil || len(in.Questions) == 0 {
		return nil, false
	}
	for _, q := range in.Questions {
		pq := Asked{Question: q.Question, Header: plain(q.Header), MultiSelect: q.MultiSelect}
		for _, o := range q.Options {
			pq.Labels = append(pq.Labels, o.Label)
			pq.Descs = append(pq.Descs, plain(o.Description))
		}
		qs = append(qs, pq)
	}
	return qs, true
}

// ClaudeAnswer is the answer to the AskUserQuestion request c, with its
// newline: allow, with the input plus "answers" (question text to answer)
// as updatedInput.
func ClaudeAnswer(c ControlRequest, answers map[string]string) []byte {
	var in map[string]any
	if json.Unmarshal(c.Input, &in) != nil || in == nil {
		in = map[string]any{}
	}
	in["answers"] = answers
	return controlResponse(c.RequestID, map[string]any{"behavior": "allow", "updatedInput": in})
}

// QuestionsText is the questions as the transcript shows them: each
// question (after its header) and its options numbered from 1, with their
// descriptions.
func QuestionsText(qs []Asked) string {
	var b strings.Builder
	for i, q := range qs {
		if i > 0 {
			b.WriteByte('\n')
		}
		if q.Header != "" {
			b.WriteString(q.Header + ": ")
		}
		b.WriteString(plain(q.Question))
		if q.MultiSelect {
			b.WriteString(" (any number)")
		}
		for j, l := range q.Labels {
			b.WriteString("\n  " + strconv.Itoa(j+1) + ". " + plain(l))
			if q.Descs[j] != "" {
				b.WriteString(" — " + q.Descs[j])
			}
		}
	}
	return b.String()
}
