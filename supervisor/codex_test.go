package supervisor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// The codex preset against the fake `codex app-server` of testdata/fakecli
// (app-server.sh), which speaks the JSON-RPC recorded from codex 0.171.0.

// transcriptTexts returns the kind and text of every transcript entry of
// agent id's latest submission, one "kind: text" a line.
func transcriptTexts(t *testing.T, s *Supervisor, id string) string {
	t.Helper()
	w, ok, err := s.Transcript(t.Context(), id, 0, 0, proto.MaxWindowItems)
	if err != nil || !ok {
		t.Fatalf("transcript: %v %v", ok, err)
	}
	var b strings.Builder
	for _, e := range w.Entries {
		b.WriteString(string(e.Kind) + ": " + e.Text + "\n")
	}
	return b.String()
}

// waitTranscript waits until agent id's transcript holds want.
func waitTranscript(t *testing.T, s *Supervisor, id, want string) {
	t.Helper()
	testkit.Poll(t, 20*time.Second, "the transcript to show "+want, func() (string, bool) {
		got := transcriptTexts(t, s, id)
		return got, strings.Contains(got, want)
	})
}

// A steer while the command runs is folded into the running turn (its
// userMessage item came in that turn); one that reaches the app-server
// after that turn ended runs as a turn of its own in the same process
// (next_turn); one codex refuses is not delivered and starts the next
// submission. One process ran them all.
func TestCodexSteerReceipts(t *testing.T) {
	s, log := presetSupervisor(t, "codex")
	id := spawn(t, s, "slow audit")
	r1, err := s.Steer(t.Context(), id, "also check the tests folder")
	if err != nil || r1.Receipt != proto.ReceiptPending {
		t.Fatalf("steer 1: %+v %v", r1, err)
	}
	r2, err := s.Steer(t.Context(), id, "then the docs")
	if err != nil || r2.Receipt != proto.ReceiptPending {
		t.Fatalf("steer 2: %+v %v", r2, err)
	}
	r3, err := s.Steer(t.Context(), id, "refuse me")
	if err != nil || r3.Receipt != proto.ReceiptPending {
		t.Fatalf("steer 3: %+v %v", r3, err)
	}
	// the refused steer starts the next submission
	testkit.Poll(t, 20*time.Second, "a second submission", func() (int, bool) {
		info, _ := s.Agent(id)
		return len(info.Submissions), len(info.Submissions) == 2
	})
	d := waitFinal(t, s, id)
	// the receipts as the journal (and list, while it ran) gave them
	var sm []proto.SteeredMessage
	if _, err := journal.Read(filepath.Join(s.RunDir(), "journal.jsonl"), func(ev journal.Event) {
		if ev.Event == "steer_receipt" {
			sm = append(sm, *ev.Steered)
		}
	}); err != nil || len(sm) != 3 {
		t.Fatalf("steer receipts %+v %v", sm, err)
	}
	if sm[0].ID != r1.MessageID || sm[0].Receipt != proto.ReceiptFolded {
		t.Errorf("first: %+v, want folded", sm[0])
	}
	if sm[1].ID != r2.MessageID || sm[1].Receipt != proto.ReceiptNextTurn {
		t.Errorf("second: %+v, want next_turn", sm[1])
	}
	if sm[2].ID != r3.MessageID || sm[2].Receipt != proto.ReceiptNotDelivered ||
		sm[2].Note != "codex refused it: the fake refuses this turn: queued for the next submission" {
		t.Errorf("third: %+v, want not_delivered with codex's reason", sm[2])
	}
	if d.Status != proto.StatusCompleted || d.LastOutput == nil || *d.LastOutput != "FAKE: refuse me" {
		t.Fatalf("final %s %v %v", d.Status, d.LastOutput, d.LastError)
	}
	first, _, err := s.Transcript(t.Context(), id, 1, 0, proto.MaxWindowItems)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, e := range first.Entries {
		text = append(text, string(e.Kind)+": "+e.Text)
	}
	got := strings.Join(text, "\n")
	for _, want := range []string{
		"user: also check the tests folder",
		"init: steered message " + r1.MessageID[:8] + " folded into the running turn",
		"text: FAKE: slept, and also check the tests folder",
		"user: then the docs",
		"init: steered message " + r2.MessageID[:8] + " taken as a turn of its own (next_turn)",
		"text: FAKE: then the docs",
		"error: steered message " + r3.MessageID[:8] + " not delivered: codex refused it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, got)
		}
	}
	if c := calls(t, log); len(c) != 2 || c[0] != "codex app-server" {
		t.Fatalf("runs %q: one app-server per submission", c)
	}
}

// A stop interrupts the running turn (turn/interrupt), and the app-server's
// stdin closes once that turn ended: the submission is interrupted, the
// CLI ended by itself (no SIGKILL needed), and a message steered into it
// and not taken waits for the next submission.
func TestCodexInterrupt(t *testing.T) {
	s, log := presetSupervisor(t, "codex")
	id := spawn(t, s, "slow audit")
	waitTranscript(t, s, id, "tool_call: ")
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusErrored || d.LastError == nil || *d.LastError != "interrupted" {
		t.Fatalf("status %s %v", d.Status, d.LastError)
	}
	var methods []string
	for _, l := range stdinLines(t, log) {
		if m, ok := l["method"].(string); ok {
			methods = append(methods, m)
		}
	}
	if got := strings.Join(methods, " "); got != "initialize initialized thread/start turn/start turn/interrupt" {
		t.Fatalf("requests %q", got)
	}
	if got := transcriptTexts(t, s, id); !strings.Contains(got, "result: the turn was interrupted") {
		t.Fatalf("transcript:\n%s", got)
	}
	var sig []string
	if _, err := journal.Read(filepath.Join(s.RunDir(), "journal.jsonl"), func(ev journal.Event) {
		if ev.Event == "submission_ended" {
			sig = append(sig, ev.Signal)
		}
	}); err != nil || len(sig) != 1 || sig[0] != "" {
		t.Fatalf("submission_ended signals %q (%v): the app-server should end with its stdin", sig, err)
	}
}

// A failed turn errors the submission with codex's reason; a model server
// out of reach is a retry the transcript shows with its reason.
func TestCodexFailuresSayWhy(t *testing.T) {
	s, _ := presetSupervisor(t, "codex")
	id := spawn(t, s, "fail please")
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusErrored || d.LastError == nil ||
		*d.LastError != "unexpected status 500 Internal Server Error (internalServerError)" {
		t.Fatalf("status %s, last_error %v", d.Status, d.LastError)
	}
	id = spawn(t, s, "retry please")
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted {
		t.Fatalf("retry: %s %v", d.Status, d.LastError)
	}
	if got := transcriptTexts(t, s, id); !strings.Contains(got,
		"retry: Reconnecting... waiting for network: Connection failed: error sending request (responseStreamDisconnected)") {
		t.Fatalf("transcript:\n%s", got)
	}
}

// Without --approvals every thread runs with approvalPolicy "never"; with
// it "untrusted", and a command approval request is pending until
// answered: allowed, the command runs; denied, codex reads decline.
func TestCodexApprovals(t *testing.T) {
	s, log := presetSupervisor(t, "codex")
	id := spawn(t, s, "say hi")
	waitFinal(t, s, id)
	if p := stdinLines(t, log)[2]["params"].(map[string]any); p["approvalPolicy"] != "never" {
		t.Fatalf("thread/start params %v: want approvalPolicy never", p)
	}

	s, log = presetSupervisor(t, "codex")
	s.cfg.Preset.Approvals = true
	dir := t.TempDir()
	a, b := filepath.Join(dir, "A"), filepath.Join(dir, "B")
	id = spawn(t, s, "ask "+a)
	p := pendingOf(t, s, id, 1)
	if p[0].Tool != "shell" || p[0].Summary != "touch "+a {
		t.Fatalf("pending %+v", p)
	}
	if info, _ := s.Agent(id); info.Activity != "needs approval: shell touch "+a {
		t.Fatalf("activity %q", info.Activity)
	}
	if _, err := s.Approve(t.Context(), id, p[0].RequestID, false); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted || !exists(a) {
		t.Fatalf("allowed: %s, A exists %v", d.Status, exists(a))
	}
	if th := stdinLines(t, log)[2]["params"].(map[string]any); th["approvalPolicy"] != "untrusted" {
		t.Fatalf("thread/start params %v: want approvalPolicy untrusted", th)
	}
	if _, err := s.Send(t.Context(), id, "ask "+b, false); err != nil {
		t.Fatal(err)
	}
	if p = pendingOf(t, s, id, 1); p[0].Summary != "touch "+b {
		t.Fatalf("pending %+v", p)
	}
	if _, err := s.Deny(t.Context(), id, "", "not B"); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted || exists(b) {
		t.Fatalf("denied: %s, B exists %v", d.Status, exists(b))
	}
	in := stdinLines(t, log)
	last := in[len(in)-1]
	if last["id"] != float64(0) || last["result"].(map[string]any)["decision"] != "decline" {
		t.Fatalf("the answer to the denied request: %v", last)
	}
	w := transcriptTexts(t, s, id)
	if !strings.Contains(w, "approval_answer: denied: not B") || !strings.Contains(w, "tool_result: ") {
		t.Fatalf("transcript:\n%s", w)
	}
}

// The tokens of a resumed thread count what this submission spent, not
// the thread's total codex restores first.
func TestCodexResumeCountsItsOwnTokens(t *testing.T) {
	s, _ := presetSupervisor(t, "codex")
	id := spawn(t, s, "say hi")
	waitFinal(t, s, id)
	if _, err := s.Send(t.Context(), id, "and again", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
	info, _ := s.Agent(id)
	if info.Usage.InputTokens != 20 || info.Usage.OutputTokens != 10 {
		t.Fatalf("usage %+v, want two model calls of 10 in and 5 out", info.Usage)
	}
}
