package supervisor

import (
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// answerAfterQuestion returns the text of the entry that follows the
// question entry of request rid in the latest transcript of agent id, ""
// when none follows it.
func answerAfterQuestion(t *testing.T, s *Supervisor, id, rid string) string {
	t.Helper()
	w, ok, err := s.Transcript(t.Context(), id, 0, 0, proto.MaxWindowItems)
	if err != nil || !ok {
		t.Fatalf("transcript of %s: %v %v", id, ok, err)
	}
	for i, e := range w.Entries {
		if e.Kind == transcript.KindQuestion && e.ID == rid {
			if i+1 < len(w.Entries) && w.Entries[i+1].Kind == transcript.KindApprovalAnswer {
				return w.Entries[i+1].Text
			}
			return ""
		}
	}
	t.Fatalf("no question %s in the transcript of %s: %+v", rid, id, w.Entries)
	return ""
}

// TestQuestionsKeptByTheRecords (SPEC §10, §12 "Questions"): after a clean
// quit and a start, an agent's answered question shows its answer in the
// restored transcript, and the question the quit denied shows the denial;
// an answer to either is refused saying how it ended, and the submission
// the quit ended is errored, interrupted, as with a pending approval.
func TestQuestionsKeptByTheRecords(t *testing.T) {
	s, _ := presetSupervisor(t, "claude")
	answered := spawn(t, s, "askq which database")
	q := questionsOf(t, s, answered, 1)[0]
	if _, err := s.Answer(t.Context(), answered, "", map[string][]string{"Which DB?": {"SQLite"}}); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, answered)
	pending := spawn(t, s, "askq which database")
	p := questionsOf(t, s, pending, 1)[0]
	cfg := s.cfg
	cfg.RestoreWindow = DefaultRestoreWindow
	shutdownNow(t, s)

	s2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdownNow(t, s2) })
	if got, want := answerAfterQuestion(t, s2, answered, q.RequestID), `answered: "Which DB?"="SQLite"`; got != want {
		t.Errorf("restored transcript of the answered question: %q after it; want %q", got, want)
	}
	if got, want := answerAfterQuestion(t, s2, pending, p.RequestID), "denied: interrupted"; got != want {
		t.Errorf("restored transcript of the question the quit denied: %q after it; want %q", got, want)
	}
	for id, how := range map[string]string{answered: `(answered: "Which DB?"="SQLite")`, pending: "(denied: interrupted)"} {
		rid := q.RequestID
		if id == pending {
			rid = p.RequestID
		}
		if _, err := s2.Answer(t.Context(), id, rid, map[string][]string{"": {"Postgres"}}); err == nil || !strings.Contains(err.Error(), "is no longer pending "+how) {
			t.Errorf("an answer to restored request %s: %v; want it refused saying %s", rid, err, how)
		}
	}
	if info, _ := s2.Agent(pending); info.Status != proto.StatusErrored || info.LastError == nil || *info.LastError != "interrupted" {
		t.Errorf("the agent whose question the quit denied: %s %v; want errored, interrupted", info.Status, info.LastError)
	}
}
