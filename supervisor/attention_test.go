package supervisor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/subdash/subdash/supervisor/proto"
)

// gated is an agent command driven by its message: "hold G [fail]" waits
// until the file G exists in the working directory; "... fail" exits 3.
const gated = `read m; set -- $m; if [ "$1" = hold ]; then while [ ! -e "$2" ]; do sleep 0.02; done; fi; echo "ran $m"; [ "$3" = fail ] && exit 3; exit 0`

func openGate(t *testing.T, s *Supervisor, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.Config().Dir, name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func attnSummary(t *testing.T, s *Supervisor, id string) proto.Summary {
	t.Helper()
	a, ok := s.Agent(id)
	if !ok {
		t.Fatalf("agent %s not found", id)
	}
	return a.Summary
}

// eventually polls cond, event-driven by the supervisor's changes, for up
// to d.
func eventually(t *testing.T, s *Supervisor, d time.Duration, what string, cond func() bool) {
	t.Helper()
	sub := s.Subscribe()
	defer sub.Close()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond) // for conditions outside the supervisor (files)
	defer tick.Stop()
	for !cond() {
		select {
		case <-sub.Ready():
			sub.Drain()
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("not within %s: %s", d, what)
		}
	}
}

func TestNeedsYouMarkedOnFinalStatusAndClearedWhenSeen(t *testing.T) {
	s := newTestSupervisor(t, gated)
	ok := spawn(t, s, "quick")
	bad := spawn(t, s, "hold g fail")
	busy := spawn(t, s, "hold never")
	waitFinal(t, s, ok)
	at := attnSummary(t, s, ok).NeedsYou
	if at == nil || at.Reason != "completed" || at.Seq == 0 || !strings.HasPrefix(at.Text, "agent "+ok[:8]+" completed: quick") {
		t.Fatalf("completed agent: needs_you = %+v", at)
	}
	if attnSummary(t, s, busy).NeedsYou != nil {
		t.Fatal("a running agent needs you")
	}
	openGate(t, s, "g")
	waitFinal(t, s, bad)
	at2 := attnSummary(t, s, bad).NeedsYou
	if at2 == nil || at2.Reason != "errored" || at2.Seq <= at.Seq || !strings.Contains(at2.Text, "exit code 3") {
		t.Fatalf("errored agent: needs_you = %+v (first seq %d)", at2, at.Seq)
	}
	if _, err := s.MarkSeen(t.Context(), ok); err != nil {
		t.Fatal(err)
	}
	if got := attnSummary(t, s, ok).NeedsYou; got != nil {
		t.Fatalf("after MarkSeen: %+v", got)
	}
	// Seen twice is no error; an unknown id is.
	if _, err := s.MarkSeen(t.Context(), ok); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkSeen(t.Context(), "nope-nope"); proto.CodeOf(err) != proto.CodeNotFound {
		t.Fatalf("MarkSeen unknown: %v", err)
	}
	// A new submission clears it; closing marks it with reason closed.
	if _, err := s.Send(t.Context(), bad, "hold never2", false); err != nil {
		t.Fatal(err)
	}
	if attnSummary(t, s, bad).NeedsYou != nil {
		t.Fatal("a resent agent still needs you")
	}
	if _, err := s.Close(t.Context(), bad); err != nil {
		t.Fatal(err)
	}
	if at := attnSummary(t, s, bad).NeedsYou; at == nil || at.Reason != "closed" {
		t.Fatalf("closed agent: %+v", at)
	}
	// list carries it as JSON.
	b, _ := json.Marshal(proto.ListResult{Agents: []proto.Summary{attnSummary(t, s, bad)}})
	if !strings.Contains(string(b), `"needs_you":{"reason":"closed"`) {
		t.Fatalf("list JSON: %s", b)
	}
}

// TestAttentionTextIsShortAndClean: the text of a notification is one line
// of at most MaxAttentionText characters with the OSC of the message removed
// whole (termtext.OneLine), not left as "]9;evil".
func TestAttentionTextIsShortAndClean(t *testing.T) {
	s := newTestSupervisor(t, "true")
	msg := "9;4;hello \x1b]9;evil\x07\r\nline\ttwo \u0085" + strings.Repeat("x", 1<<20)
	id := spawn(t, s, msg)
	waitFinal(t, s, id)
	text := attnSummary(t, s, id).NeedsYou.Text
	if n := len([]rune(text)); n > proto.MaxAttentionText {
		t.Fatalf("text is %d characters", n)
	}
	for _, r := range text {
		if unicode.IsControl(r) {
			t.Fatalf("control character %U in %q", r, text)
		}
	}
	if !strings.HasPrefix(text, "agent ") || !strings.HasSuffix(text, "…") || !strings.Contains(text, "9;4;hello line two x") || strings.Contains(text, "evil") {
		t.Fatalf("text %q", text)
	}
}

func TestNotifyCommandRunsOncePerTransitionWithItsEnvironment(t *testing.T) {
	s := newTestSupervisor(t, gated, func(c *Config) {
		c.NotifyCommand = `printf '%s|%s|%s\n' "$SUBDASH_AGENT_ID" "$SUBDASH_STATUS" "$SUBDASH_MESSAGE" >> notified.txt`
	})
	id := spawn(t, s, "quick $(touch injected) `touch injected2`")
	waitFinal(t, s, id)
	out := filepath.Join(s.Config().Dir, "notified.txt")
	var got string
	eventually(t, s, 10*time.Second, "notify command wrote its line", func() bool {
		b, _ := os.ReadFile(out)
		got = string(b)
		return strings.Count(got, "\n") >= 1
	})
	want := id + "|completed|agent " + id[:8] + " completed: quick $(touch injected) `touch injected2`\n"
	if got != want {
		t.Fatalf("notify command got\n%q\nwant\n%q", got, want)
	}
	for _, f := range []string{"injected", "injected2"} {
		if _, err := os.Stat(filepath.Join(s.Config().Dir, f)); err == nil {
			t.Fatal("the message reached a command line")
		}
	}
	// Seen, then sent again: one more transition, one more run.
	_, _ = s.MarkSeen(t.Context(), id)
	if _, err := s.Send(t.Context(), id, "again", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
	eventually(t, s, 10*time.Second, "second run", func() bool {
		b, _ := os.ReadFile(out)
		got = string(b)
		return strings.Count(got, "\n") >= 2
	})
	if n := strings.Count(got, "\n"); n != 2 {
		t.Fatalf("%d runs for 2 transitions:\n%s", n, got)
	}
}

func TestNotifyCommandFailuresAreReportedOnceAndBounded(t *testing.T) {
	old := notifyTimeout
	t.Cleanup(func() { notifyTimeout = old })
	// Only the hanging command gets a short bound: the others must fail
	// on their own, however loaded the machine (a shell not finding a
	// command took over 300 ms under -race in CI).
	for _, c := range []struct {
		name, cmd, want string
		bound           time.Duration
	}{
		{"missing", "/nonexistent/notify-me", "exit status 127", old},
		{"failing", "echo oops >&2; exit 7", "exit status 7: oops", old},
		{"hanging", "sleep 60", "still running after 300ms; killed", 300 * time.Millisecond},
	} {
		notifyTimeout = c.bound
		t.Run(c.name, func(t *testing.T) {
			s := newTestSupervisor(t, "true", func(cfg *Config) { cfg.NotifyCommand = c.cmd })
			sub := s.Subscribe()
			defer sub.Close()
			a := spawn(t, s, "one")
			b := spawn(t, s, "two")
			waitFinal(t, s, a)
			waitFinal(t, s, b)
			var warned []string
			eventually(t, s, 10*time.Second, "a warning", func() bool {
				for _, ch := range sub.Drain() {
					warned = append(warned, ch.Warnings...)
				}
				return len(warned) > 0
			})
			// The second run's failure goes to the journal only.
			eventually(t, s, 10*time.Second, "two runs in the journal", func() bool {
				b, _ := os.ReadFile(filepath.Join(s.RunDir(), "journal.jsonl"))
				return strings.Count(string(b), `"event":"notify_command"`) == 2
			})
			for _, ch := range sub.Drain() {
				warned = append(warned, ch.Warnings...)
			}
			w := s.Config().Warnings
			if len(warned) != 1 || len(w) != 1 || !strings.Contains(w[0], "--notify-command failed") || !strings.Contains(w[0], c.want) {
				t.Fatalf("warnings %q, Config().Warnings %q", warned, w)
			}
		})
	}
}

func TestNotifyCommandFloodIsBounded(t *testing.T) {
	s := newTestSupervisor(t, "true", func(c *Config) { c.NotifyCommand = "head -c 5000000 /dev/zero | tr '\\0' x" })
	id := spawn(t, s, "one")
	waitFinal(t, s, id)
	journal := filepath.Join(s.RunDir(), "journal.jsonl")
	var line string
	eventually(t, s, 10*time.Second, "the run in the journal", func() bool {
		b, _ := os.ReadFile(journal)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `"event":"notify_command"`) {
				line = l
			}
		}
		return line != ""
	})
	if len(line) > 2*notifyOutput || !strings.Contains(line, "more bytes not kept") {
		t.Fatalf("journal line of %d bytes: %.200s", len(line), line)
	}
}

// An approval request makes its agent need you (SPEC §11, §12) with a
// text naming the tool; answering every pending request clears it.
func TestApprovalRequestNeedsYou(t *testing.T) {
	s, _, dir := approvalSupervisor(t)
	a := filepath.Join(dir, "A")
	id := spawn(t, s, "ask "+a)
	pendingOf(t, s, id, 1)
	at := attnSummary(t, s, id).NeedsYou
	if at == nil || at.Reason != proto.ReasonApproval || at.Text != "agent "+id[:8]+" needs approval: Bash touch "+a {
		t.Fatalf("needs_you = %+v", at)
	}
	if _, err := s.Approve(t.Context(), id, "", false); err != nil {
		t.Fatal(err)
	}
	if got := attnSummary(t, s, id).NeedsYou; got != nil {
		t.Fatalf("after the answer: %+v", got)
	}
	waitFinal(t, s, id)
	if got := attnSummary(t, s, id).NeedsYou; got == nil || got.Reason != "completed" {
		t.Fatalf("after it completed: %+v", got)
	}
}
