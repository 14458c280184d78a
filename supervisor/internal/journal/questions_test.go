package journal

import (
	"reflect"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// TestKilledHostKeepsItsQuestions (SPEC §10, §12 "Questions"): a host
// killed with only its events left keeps each submission's question
// requests in the records: one answered with its answers, one a stop
// denied, one the CLI withdrew, and one still pending when the host died,
// which ends with its submission (interrupted (host ended)).
func TestKilledHostKeepsItsQuestions(t *testing.T) {
	state := t.TempDir()
	db := []proto.Question{{Question: "Which DB?", Header: "DB", Options: []proto.QuestionOption{{Label: "Postgres"}, {Label: "SQLite"}}}}
	asked := func(agent, sub, rid string) Event {
		return Event{Event: "question_requested", AgentID: agent, SubmissionID: sub, Seq: 1, RequestID: rid, Tool: "AskUserQuestion", Questions: db}
	}
	writeRun(t, state, "20261201T000000Z-aaaaaa", Event{Event: "run_started", Dir: "/w"},
		Event{Event: "spawned", AgentID: "a", SubmissionID: "a1", Seq: 1, Message: "ask"},
		Event{Event: "submission_started", AgentID: "a", SubmissionID: "a1", Seq: 1},
		asked("a", "a1", "q1"),
		Event{Event: "question_answered", AgentID: "a", SubmissionID: "a1", Seq: 1, RequestID: "q1", Tool: "AskUserQuestion", Answers: map[string]string{"Which DB?": "SQLite"}},
		asked("a", "a1", "q2"),
		Event{Event: "approval_withdrawn", AgentID: "a", SubmissionID: "a1", Seq: 1, RequestID: "q2", Tool: "AskUserQuestion"},
		asked("a", "a1", "q3"),
		Event{Event: "spawned", AgentID: "b", SubmissionID: "b1", Seq: 1, Message: "ask"},
		Event{Event: "submission_started", AgentID: "b", SubmissionID: "b1", Seq: 1},
		asked("b", "b1", "q4"),
		Event{Event: "question_answered", AgentID: "b", SubmissionID: "b1", Seq: 1, RequestID: "q4", Tool: "AskUserQuestion", Decision: proto.DecisionDeny, Note: "subdash: interrupted"},
		Event{Event: "submission_ended", AgentID: "b", SubmissionID: "b1", Seq: 1, Status: proto.StatusErrored, LastError: "interrupted"})
	ld := Load(ListRuns(state, ""), "/w")
	if len(ld.Records) != 2 {
		t.Fatalf("records %+v", ld.Records)
	}
	outcomes := func(r *AgentRecord) []string {
		var out []string
		for _, q := range r.Submissions[0].Questions {
			if !reflect.DeepEqual(q.Questions, db) || q.Tool != "AskUserQuestion" || q.AskedAt.IsZero() {
				t.Errorf("question %s of agent %s: %+v", q.RequestID, r.AgentID, q)
			}
			out = append(out, q.RequestID+" "+q.Outcome)
		}
		return out
	}
	a, b := ld.Records[0], ld.Records[1]
	want := []string{`q1 answered: "Which DB?"="SQLite"`, "q2 " + QuestionWithdrawn, "q3 " + QuestionHostEnded}
	if got := outcomes(a); !reflect.DeepEqual(got, want) || a.Submissions[0].Questions[0].Answers["Which DB?"] != "SQLite" {
		t.Errorf("agent a's questions after the kill: %q; want %q", got, want)
	}
	if le := a.Submissions[0].LastError; le == nil || *le != interruptedByHostEnd {
		t.Errorf("agent a's submission: last_error %v; want %q", le, interruptedByHostEnd)
	}
	if got, want := outcomes(b), []string{"q4 denied: interrupted"}; !reflect.DeepEqual(got, want) {
		t.Errorf("agent b's questions: %q; want %q", got, want)
	}
}
