package transcript

import (
	"encoding/json"
	"testing"
)

// The AskUserQuestion request claude 2.1.328 wrote (recorded): its
// questions as subdash relays them, a question entry in the transcript,
// and the answer claude took: the input plus "answers".
func TestQuestionFromTheRecording(t *testing.T) {
	var c ControlRequest
	var entries []Entry
	p := NewParser(FormatClaude)
	for _, l := range fixtureLines(t, "claude-stream-askuserquestion.jsonl") {
		if cr, ok := ParseClaudeControl(l); ok {
			c = cr
		}
		entries = append(entries, p.Line(l)...)
	}
	qs, ok := ParseQuestions(c)
	if !ok || len(qs) != 1 || qs[0].Question != "Which DB?" || qs[0].Header != "DB" || qs[0].MultiSelect ||
		len(qs[0].Labels) != 2 || qs[0].Labels[0] != "Postgres" || qs[0].Descs[1] != "lite" {
		t.Fatalf("questions = %+v, %v", qs, ok)
	}
	var q *Entry
	for i := range entries {
		if entries[i].Kind == KindQuestion {
			q = &entries[i]
		}
		if entries[i].Kind == KindApproval {
			t.Fatalf("a question shows as an approval: %+v", entries[i])
		}
	}
	if q == nil || q.ID != c.RequestID || q.Text != "DB: Which DB?\n  1. Postgres — pg\n  2. SQLite — lite" {
		t.Fatalf("question entry = %+v", q)
	}
	var got struct {
		Response struct {
			RequestID string `json:"request_id"`
			Response  struct {
				Behavior     string `json:"behavior"`
				UpdatedInput struct {
					Questions []any             `json:"questions"`
					Answers   map[string]string `json:"answers"`
				} `json:"updatedInput"`
			} `json:"response"`
		} `json:"response"`
	}
	if err := json.Unmarshal(ClaudeAnswer(c, map[string]string{"Which DB?": "SQLite"}), &got); err != nil {
		t.Fatal(err)
	}
	r := got.Response
	if r.RequestID != c.RequestID || r.Response.Behavior != "allow" || len(r.Response.UpdatedInput.Questions) != 1 ||
		r.Response.UpdatedInput.Answers["Which DB?"] != "SQLite" {
		t.Fatalf("answer = %+v", got)
	}
	if _, ok := ParseQuestions(ControlRequest{Subtype: "can_use_tool", Tool: "Bash", Input: []byte(`{"command":"ls"}`)}); ok {
		t.Fatal("a Bash request parsed as a question")
	}
}
