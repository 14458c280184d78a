package supervisor

import (
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// nowOf returns agent id's Summary.Now.
func nowOf(t *testing.T, s *Supervisor, id string) string {
	t.Helper()
	a, ok := s.Agent(id)
	if !ok {
		t.Fatalf("no agent %s", id)
	}
	return a.Now
}

// TestNowOfACommand: a running command's row says its newest output
// line, cleaned; an errored one the last line of stderr, else of stdout,
// with its exit status; a completed one its last line.
func TestNowOfACommand(t *testing.T) {
	s := newTestSupervisor(t, `case "$(cat)" in
	run*) printf 'step 1\n\033[1;31mstep 2\033[m\n\n'; sleep 30 ;;
	err*) echo "building"; echo "oops: disk full" >&2; echo >&2; exit 3 ;;
	out*) echo "only stdout said this"; exit 4 ;;
	kill*) echo "before the kill"; kill -9 $$ ;;
	*) echo "all done"; echo >&2 "a warning" ;;
	esac`)
	run := spawn(t, s, "run")
	waitFor(t, s, 10*time.Second, func() bool { return nowOf(t, s, run) == "step 2" })
	for msg, want := range map[string]string{
		"err":  "oops: disk full · exit 3",
		"out":  "only stdout said this · exit 4",
		"kill": "before the kill · SIGKILL",
		"done": "all done",
	} {
		id := spawn(t, s, msg)
		waitFinal(t, s, id)
		if got := nowOf(t, s, id); got != want {
			t.Errorf("%s: now %q, want %q", msg, got, want)
		}
	}
	if _, err := s.Interrupt(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, run)
	if got := nowOf(t, s, run); got != "interrupted · step 2" {
		t.Errorf("interrupted: now %q", got)
	}
	// the list carries it, as JSON's now
	for _, sum := range listOf(s) {
		if sum.AgentID == run && sum.Now != "interrupted · step 2" {
			t.Errorf("list: now %q", sum.Now)
		}
	}
}

// TestNowOfAPreset: an agent CLI's row says its own error (claude's API
// Error), the first line of its answer, and what a CLI that printed no
// event said.
func TestNowOfAPreset(t *testing.T) {
	s, _ := presetSupervisor(t, "claude")
	for msg, want := range map[string]string{
		"fail please":     "API Error: 500",
		"say hi":          "STUB-REPLY #",
		"crash please":    "fake claude: crashed before creating a session · exit 1",
		"noresult please": "ended without a result",
	} {
		id := spawn(t, s, msg)
		d := waitFinal(t, s, id)
		if got := nowOf(t, s, id); !strings.HasPrefix(got, want) {
			t.Errorf("%s (%s): now %q, want %q…", msg, d.Status, got, want)
		}
	}
	hang := spawn(t, s, "hang there")
	waitFor(t, s, 10*time.Second, func() bool { return nowOf(t, s, hang) != "" })
	if got := nowOf(t, s, hang); got != "thinking" {
		t.Errorf("a CLI that waits for its model: now %q", got)
	}
}

// TestNowOfARestoredAgent: a host that restores an agent says how it
// ended, from its record, as the host that ran it did.
func TestNowOfARestoredAgent(t *testing.T) {
	start, _ := hostOf(t, script)
	s, id := finishedRun(t, start, "bad news")
	if got := nowOf(t, s, id); got != "oops · exit 3" {
		t.Fatalf("now %q", got)
	}
	r := start()
	a, ok := r.Agent(id)
	if !ok || !a.Restored || a.Status != proto.StatusErrored {
		t.Fatalf("not restored: %+v", a.Summary)
	}
	if a.Now != "oops · exit 3" {
		t.Fatalf("restored now %q", a.Now)
	}
}

// TestNowOfMemo: an errored Memo turn (Memo exits 0 after it) says Memo's
// own error, and a good one the first line of its answer.
func TestNowOfMemo(t *testing.T) {
	start, _, _ := memoHost(t)
	s := start()
	for msg, want := range map[string]string{
		"please FAIL_STATUS: 500": "LLM call failed: Failed after 3 attempts. Last error: stub: scripted failure",
		"say hi":                  "MEMO-STUB-REPLY #1: saw 1 user message(s)",
	} {
		id := spawn(t, s, msg)
		d := waitFinal(t, s, id)
		if got := nowOf(t, s, id); !strings.HasPrefix(got, want) {
			t.Errorf("%s (%s): now %q, want %q…", msg, d.Status, got, want)
		}
	}
}
