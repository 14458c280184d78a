package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// questionsOf polls until agent id has n pending questions and returns
// them.
func questionsOf(t *testing.T, s *Supervisor, id string, n int) []proto.PendingQuestion {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, _ := s.Agent(id)
		if len(info.PendingQuestions) == n {
			return info.PendingQuestions
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent has %d pending questions, want %d: %+v", len(info.PendingQuestions), n, info)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The recorded AskUserQuestion run (claude 2.1.328): without --approvals
// the question waits, makes the agent need you, says what it asks; a bad
// answer is refused with nothing sent; the answer goes back as claude
// takes it and the agent completes.
func TestQuestionFromTheRecordingIsAnswered(t *testing.T) {
	s, log := presetSupervisor(t, "claude")
	id := spawn(t, s, "askq which database")
	q := questionsOf(t, s, id, 1)[0]
	if len(q.Questions) != 1 || q.Questions[0].Question != "Which DB?" || q.Questions[0].Header != "DB" ||
		len(q.Questions[0].Options) != 2 || q.Questions[0].Options[1].Label != "SQLite" || q.Questions[0].Options[1].Description != "lite" {
		t.Fatalf("pending question = %+v", q)
	}
	info, _ := s.Agent(id)
	if info.Status != proto.StatusRunning || info.NeedsYou == nil || info.NeedsYou.Reason != proto.ReasonQuestion {
		t.Fatalf("status %s, needs_you %+v: a pending question must make the agent need you", info.Status, info.NeedsYou)
	}
	if want := "asks: DB: Which DB? [Postgres / SQLite]"; info.Activity != want || listOf(s)[0].Now != want {
		t.Fatalf("activity %q, NOW %q; want %q", info.Activity, listOf(s)[0].Now, want)
	}
	if len(info.PendingApprovals) != 0 {
		t.Fatalf("a question is not an approval: %+v", info.PendingApprovals)
	}
	if _, err := s.Approve(t.Context(), id, q.RequestID, false); err == nil || !strings.Contains(err.Error(), "is a question") {
		t.Fatalf("approve of a question: %v", err)
	}
	for _, bad := range []map[string][]string{
		{"Which colour?": {"red"}},
		{"Which DB?": {"Postgres", "SQLite"}},
		{"Which DB?": {" "}},
		{},
	} {
		if _, err := s.Answer(t.Context(), id, "", bad); err == nil || !strings.Contains(err.Error(), "nothing was sent") {
			t.Fatalf("answer %v: %v", bad, err)
		}
	}
	res, err := s.Answer(t.Context(), id, "", map[string][]string{"db": {"SQLite"}}) // by header, any case
	if err != nil || res.RequestID != q.RequestID || res.Answers["Which DB?"] != "SQLite" {
		t.Fatalf("answer: %+v %v", res, err)
	}
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusCompleted || !strings.Contains(*d.LastOutput, `"Which DB?"="SQLite"`) {
		t.Fatalf("after the answer: %s %q", d.Status, *d.LastOutput)
	}
	var answer map[string]any
	for _, l := range stdinLines(t, log) {
		if l["type"] == "control_response" {
			answer = l
		}
	}
	resp, _ := answer["response"].(map[string]any)
	inner, _ := resp["response"].(map[string]any)
	upd, _ := inner["updatedInput"].(map[string]any)
	answers, _ := upd["answers"].(map[string]any)
	if inner["behavior"] != "allow" || answers["Which DB?"] != "SQLite" || upd["questions"] == nil {
		t.Fatalf("the answer claude read: %v", answer)
	}
	if _, err := s.Answer(t.Context(), id, q.RequestID, map[string][]string{"": {"Postgres"}}); err == nil || !strings.Contains(err.Error(), "no longer pending") {
		t.Fatalf("a second answer: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(s.runDir, "journal.jsonl"))
	if !strings.Contains(string(b), `"event":"question_requested"`) || !strings.Contains(string(b), `"answers":{"Which DB?":"SQLite"}`) {
		t.Fatalf("journal lacks the question and its answer")
	}
}

// A stop ends a pending question as it ends a pending approval: denied
// (the CLI takes its interrupt), and nothing waits for an answer any more.
func TestQuestionDeniedByInterrupt(t *testing.T) {
	s, _ := presetSupervisor(t, "claude")
	id := spawn(t, s, "askq which database")
	questionsOf(t, s, id, 1)
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
	info, _ := s.Agent(id)
	if len(info.PendingQuestions) != 0 || info.NeedsYou != nil && info.NeedsYou.Reason == proto.ReasonQuestion {
		t.Fatalf("after the stop: %+v", info)
	}
	b, _ := os.ReadFile(filepath.Join(s.runDir, "journal.jsonl"))
	if !strings.Contains(string(b), `"event":"question_answered"`) || !strings.Contains(string(b), `"decision":"deny","note":"subdash: interrupted"`) {
		t.Fatalf("the journal does not say the question was denied by the interrupt:\n%s", b)
	}
	if _, err := s.Answer(t.Context(), id, "", map[string][]string{"": {"SQLite"}}); err == nil {
		t.Fatal("an answer after the stop was taken")
	}
}

// Without --approvals a tool permission request is denied at once in
// claude's own words (a Bash command's path outside the session's working
// directory); nothing is pending and nobody is asked.
func TestPermissionRequestWithoutApprovalsIsDenied(t *testing.T) {
	s, _ := presetSupervisor(t, "claude")
	f := filepath.Join(t.TempDir(), "A")
	id := spawn(t, s, "ask "+f)
	d := waitFinal(t, s, id)
	if info, _ := s.Agent(id); d.Status != proto.StatusCompleted || exists(f) || len(info.PendingApprovals) != 0 {
		t.Fatalf("status %s, touched %v", d.Status, exists(f))
	}
	w, ok, err := s.Transcript(t.Context(), id, 0, 0, proto.MaxWindowItems)
	if err != nil || !ok {
		t.Fatal(err)
	}
	var said []string
	for _, e := range w.Entries {
		said = append(said, e.Text)
	}
	want := "touch in '" + f + "' needs approval. The path is outside the working directories for this session ('" + s.cfg.Dir + "'). Allowing runs the command as written."
	if all := strings.Join(said, "\n"); !strings.Contains(all, "denied without --approvals: "+want) {
		t.Fatalf("the transcript lacks claude's denial: %q", all)
	}
}
