package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

func newSteerSupervisor(t *testing.T, script string) *Supervisor {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return newTestSupervisor(t, "sh "+path, func(c *Config) { c.CommandSource = SourceBuiltin })
}

// A steer into a running built-in agent answers at once with the
// message's id and pending; the agent's taken line
// (transcript.BuiltinTakenLine) makes it folded in list; at the agent's
// "done" nothing is pending, so stdin closes and the submission completes.
func TestSteerFolded(t *testing.T) {
	s := newSteerSupervisor(t, testkit.SteerAgent)
	id := spawn(t, s, "audit .")
	waitForLine(t, s, id, "working", 10*time.Second)
	res, err := s.Steer(t.Context(), id, "also audit tests")
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipt != proto.ReceiptPending || res.MessageID == "" || res.Status != proto.StatusRunning {
		t.Fatalf("steer result %+v", res)
	}
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusCompleted {
		t.Fatalf("status %s, last_error %v", d.Status, d.LastError)
	}
	sum := summaryOf(t, s, id)
	if len(sum.SteeredMessages) != 1 {
		t.Fatalf("steered_messages %+v", sum.SteeredMessages)
	}
	sm := sum.SteeredMessages[0]
	if sm.ID != res.MessageID || sm.Receipt != proto.ReceiptFolded || sm.Message != "also audit tests" || sm.SubmissionSeq != 1 || sm.TakenAt.IsZero() {
		t.Errorf("steered message %+v", sm)
	}
	if !strings.Contains(strings.Join(lines(t, s, id), "\n"), "stdin-closed") {
		t.Errorf("stdin was not closed at the agent's done: %q", lines(t, s, id))
	}
}

// A steered message the agent never took (it ended first) is
// not_delivered, says it was queued, and starts the next submission as a
// queued message does.
func TestSteerNotDeliveredIsQueued(t *testing.T) {
	s := newSteerSupervisor(t, "read -r first; echo working; sleep 0.5; echo finished")
	id := spawn(t, s, "audit .")
	waitForLine(t, s, id, "working", 10*time.Second)
	if _, err := s.Steer(t.Context(), id, "also audit tests"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the steered message starts submission 2", func() bool {
		info, ok := s.Agent(id)
		return ok && len(info.Submissions) == 2 && info.Submissions[1].Message == "also audit tests"
	})
	sum := summaryOf(t, s, id)
	if len(sum.SteeredMessages) != 1 {
		t.Fatalf("steered_messages %+v", sum.SteeredMessages)
	}
	if sm := sum.SteeredMessages[0]; sm.Receipt != proto.ReceiptNotDelivered || sm.SubmissionSeq != 1 ||
		!strings.Contains(sm.Note, "queued for the next submission") {
		t.Errorf("steered message %+v", sm)
	}
	waitFinal(t, s, id)
}

// An agent command that reads its message once cannot be steered while
// it runs: the exact refusal; an idle one gets a plain send.
func TestSteerRefusedForPlainCommand(t *testing.T) {
	s := newTestSupervisor(t, "cat >/dev/null; sleep 5")
	id := spawn(t, s, "task")
	_, err := s.Steer(t.Context(), id, "more")
	want := "agent " + id + " cannot be steered: it reads its message once; queue it (--queue) or interrupt it (--interrupt)"
	if err == nil || err.Error() != want || proto.CodeOf(err) != proto.CodeNoSteer {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	res, err := s.Steer(context.Background(), id, "again")
	if err != nil || res.Receipt != "" || res.SubmissionID == "" {
		t.Fatalf("steer of an idle agent = %+v, %v; want a plain send", res, err)
	}
}
