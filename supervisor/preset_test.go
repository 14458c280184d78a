package supervisor

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// presetSupervisor runs preset name against the fake CLIs of
// testdata/fakecli, which check their arguments and replay recordings of
// the real CLIs. It returns the supervisor and the fakes' argument log.
func presetSupervisor(t *testing.T, name string, edit ...func(*Config)) (*Supervisor, string) {
	t.Helper()
	fake, err := filepath.Abs("../testdata/fakecli")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "calls.log")
	p, err := LookupPreset(name, "", "")
	if err != nil {
		t.Fatal(err)
	}
	s := newTestSupervisor(t, "", func(c *Config) {
		c.Preset = p
		c.Environ = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "FAKECLI_LOG="+log)
		for _, e := range edit {
			e(c)
		}
	})
	return s, log
}

// calls returns the argument lists the fake CLIs were run with, one per
// run (not the stdin lines they log).
func calls(t *testing.T, log string) []string {
	t.Helper()
	var out []string
	for _, line := range logLines(t, log) {
		if strings.HasPrefix(line, "stdin\t") {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		out = append(out, f[0]+" "+f[1])
	}
	return out
}

// logLines returns the lines of the fake CLIs' log, one per run.
func logLines(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestPresetSessionContinuity(t *testing.T) {
	for _, c := range []struct {
		preset       string
		first, again string // the calls, with AGENT for the agent id
		answer1      string
		answer2      string
		session      string // "" = the agent id
	}{
		{"claude", "claude -p --output-format stream-json --verbose --session-id AGENT --input-format stream-json --replay-user-messages --permission-prompt-tool stdio",
			"claude -p --output-format stream-json --verbose --resume AGENT --input-format stream-json --replay-user-messages --permission-prompt-tool stdio", "STUB-REPLY #10", "STUB-REPLY #12: saw 2 user message(s)", ""},
		{"gemini", "gemini -p  --output-format stream-json --session-id AGENT",
			"gemini -p  --output-format stream-json --resume AGENT", "STUB-REPLY #2", "STUB-REPLY #4: saw 2 user turn(s)", ""},
		{"codex", "codex app-server", "codex app-server", "FAKE: say hi", "FAKE: and again", "01a2514c-ccac-7f82-a68c-73e61de53adc"},
		{"codex-exec", "codex exec --json --skip-git-repo-check -",
			"codex exec --json --skip-git-repo-check resume 01a22c75-d518-7a43-8ad2-67959028ffd4 -", "STUB-REPLY #3", "STUB-REPLY #4: saw 3 user message(s)",
			"01a22c75-d518-7a43-8ad2-67959028ffd4"},
	} {
		t.Run(c.preset, func(t *testing.T) {
			s, log := presetSupervisor(t, c.preset)
			id := spawn(t, s, "say hi")
			session := c.session
			if session == "" {
				session = id
			}
			d := waitFinal(t, s, id)
			if d.Status != proto.StatusCompleted || !strings.HasPrefix(*d.LastOutput, c.answer1) || d.SessionID != session {
				t.Fatalf("first run: %s %q session %q", d.Status, *d.LastOutput, d.SessionID)
			}
			if l := listOf(s); l[0].SessionID != session {
				t.Fatalf("list session_id = %q", l[0].SessionID)
			}
			// close and resume keep the session
			if _, err := s.Close(t.Context(), id); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Resume(t.Context(), id); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Send(t.Context(), id, "and again", false); err != nil {
				t.Fatal(err)
			}
			d = waitFinal(t, s, id)
			if d.Status != proto.StatusCompleted || !strings.HasPrefix(*d.LastOutput, c.answer2) {
				t.Fatalf("second run: %s %q", d.Status, *d.LastOutput)
			}
			want := []string{strings.ReplaceAll(c.first, "AGENT", id), strings.ReplaceAll(c.again, "AGENT", id)}
			if got := calls(t, log); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("calls:\n got %q\nwant %q", got, want)
			}
			journal, _ := os.ReadFile(filepath.Join(s.RunDir(), "journal.jsonl"))
			if !strings.Contains(string(journal), `"session_id":"`+session+`"`) {
				t.Fatalf("journal lacks the session id")
			}
		})
	}
}

func TestPresetOutcomeFromFinalEvent(t *testing.T) {
	s, _ := presetSupervisor(t, "claude")
	fail := spawn(t, s, "fail please")
	noResult := spawn(t, s, "noresult please")
	crash := spawn(t, s, "crash please")
	if d := waitFinal(t, s, fail); d.Status != proto.StatusErrored || !strings.HasPrefix(*d.LastError, "API Error: 500") {
		t.Errorf("error result: %s %q", d.Status, *d.LastError)
	}
	if d := waitFinal(t, s, noResult); d.Status != proto.StatusErrored || *d.LastError != "ended without a result" {
		t.Errorf("exit 0 without result: %s %q", d.Status, *d.LastError)
	}
	d := waitFinal(t, s, crash)
	if d.Status != proto.StatusErrored || *d.LastError != "submission failed with exit code 1" ||
		!strings.Contains(*d.LastOutput, "crashed before creating a session") {
		t.Errorf("crash: %s %q %q", d.Status, *d.LastError, *d.LastOutput)
	}
}

func TestPresetNewSessionAfterRunWithoutSession(t *testing.T) {
	s, log := presetSupervisor(t, "claude")
	id := spawn(t, s, "crash first")
	waitFinal(t, s, id)
	if _, err := s.Send(t.Context(), id, "now properly", false); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted || d.SessionID != id {
		t.Fatalf("second run: %+v", d)
	}
	got := calls(t, log)
	if len(got) != 2 || !strings.HasSuffix(got[1], "--session-id "+id+" "+ApprovalArgs) {
		t.Fatalf("calls %q: the second run must start a new session", got)
	}
	if l := lines(t, s, id); len(l) == 0 || !strings.Contains(l[0], "starts a new session") {
		t.Fatalf("the log pane does not say a new session starts: %q", l)
	}
}

func TestPresetInterruptThenContinue(t *testing.T) {
	s, log := presetSupervisor(t, "claude")
	id := spawn(t, s, "hang there")
	waitFor(t, s, 5*time.Second, func() bool { info, _ := s.Agent(id); return info.SessionID == id })
	if _, err := s.Interrupt(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, id); *d.LastError != "interrupted" {
		t.Fatalf("interrupt: %q", *d.LastError)
	}
	if _, err := s.Send(t.Context(), id, "continue", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
	if got := calls(t, log); !strings.HasSuffix(got[1], "--resume "+id+" "+ApprovalArgs) {
		t.Fatalf("after an interrupt the conversation must continue: %q", got)
	}
}

func TestPresetTranscriptEntries(t *testing.T) {
	s, _ := presetSupervisor(t, "codex-exec")
	id := spawn(t, s, "tool use please")
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusCompleted || !strings.HasPrefix(*d.LastOutput, "STUB-REPLY #6: tool finished") {
		t.Fatalf("%s %q", d.Status, *d.LastOutput)
	}
	w, ok, err := s.Transcript(t.Context(), id, 0, 0, 100)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	var kinds []string
	for _, e := range w.Entries {
		kinds = append(kinds, string(e.Kind))
		if e.Kind == transcript.KindToolCall && e.Summary == "" {
			t.Errorf("tool call without a summary: %+v", e)
		}
	}
	if strings.Join(kinds, " ") != "init tool_call tool_result text result" {
		t.Fatalf("entries: %v", kinds)
	}
	// a CLI that fails before its first event says why on stderr, and the
	// transcript shows it
	crash := spawn(t, s, "crash at once")
	waitFinal(t, s, crash)
	w, _, _ = s.Transcript(t.Context(), crash, 0, 0, 10)
	if len(w.Entries) != 1 || w.Entries[0].Kind != transcript.KindStderr || w.Entries[0].Text != "fake codex: crashed before creating a session" {
		t.Fatalf("stderr entries: %+v", w.Entries)
	}
	// the raw JSON stays in the log file
	if raw, _ := os.ReadFile(logPath(t, s, id)); !strings.Contains(string(raw), `"type":"thread.started"`) {
		t.Fatal("the log file lacks the raw JSON")
	}
	if _, ok, _ := newTestSupervisorTranscript(t); ok {
		t.Fatal("a text command has no transcript")
	}
}

func newTestSupervisorTranscript(t *testing.T) (proto.TranscriptWindow, bool, error) {
	s := newTestSupervisor(t, "echo plain")
	id := spawn(t, s, "x")
	waitFinal(t, s, id)
	return s.Transcript(t.Context(), id, 0, 0, 10)
}

func TestPresetCommands(t *testing.T) {
	for _, c := range []struct{ name, args, session, want string }{
		{"claude", "--model opus", "", "claude -p --output-format stream-json --verbose --session-id A --input-format stream-json --replay-user-messages --permission-prompt-tool stdio --model opus"},
		{"codex", "--model o4", "T", "codex app-server --model o4"},
		{"codex-exec", "--model o4", "T", "codex exec --json --skip-git-repo-check --model o4 resume T -"},
		{"memo", "", "", "memo --dangerous"},
		{"builtin", "--pace 1s", "", "/x/subdash agent --pace 1s"},
	} {
		p, err := LookupPreset(c.name, c.args, "/x/subdash")
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := p.CommandFor("A", c.session); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestPresetPlainTextOutputReachesLastOutput: a CLI that prints plain text
// instead of its JSON stream (its version, its usage, after wrong
// --preset-args) ends without a result, and wait's last_output shows what
// it printed (SPEC §4's stdout tail) rather than nothing.
func TestPresetPlainTextOutputReachesLastOutput(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '2.1.197 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := LookupPreset("claude", "--version", "")
	if err != nil {
		t.Fatal(err)
	}
	s := newTestSupervisor(t, "", func(c *Config) {
		c.Preset = p
		c.Environ = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	})
	d := waitFinal(t, s, spawn(t, s, "hello"))
	if d.Status != proto.StatusErrored || *d.LastError != "ended without a result" || d.LastOutput == nil || *d.LastOutput != "2.1.197 (Claude Code)" {
		t.Fatalf("plain-text CLI: %s %v %q", d.Status, *d.LastError, *d.LastOutput)
	}
}

// TestPresetUsageIsSummedOverSubmissions: an agent's tokens and cost are
// those of all its submissions (each result event reports its own run's).
func TestPresetUsageIsSummedOverSubmissions(t *testing.T) {
	s, _ := presetSupervisor(t, "claude")
	id := spawn(t, s, "say hi")
	waitFinal(t, s, id)
	if _, err := s.Send(t.Context(), id, "and again", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
	var want proto.Usage
	for seq := 1; seq <= 2; seq++ {
		w, ok, err := s.Transcript(t.Context(), id, seq, 0, 1000)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		for _, e := range w.Entries {
			if e.Kind == transcript.KindResult {
				want.InputTokens += e.InputTokens
				want.OutputTokens += e.OutputTokens
				want.CostUSD += e.CostUSD
			}
		}
	}
	info, _ := s.Agent(id)
	if want.CostUSD == 0 || info.Usage.InputTokens != want.InputTokens || info.Usage.OutputTokens != want.OutputTokens ||
		math.Abs(info.Usage.CostUSD-want.CostUSD) > 1e-9 {
		t.Fatalf("agent usage %+v, want the sum of its runs %+v", info.Usage, want)
	}
}

// TestLogsOfAPresetAreItsTranscript (SPEC §3 logs): the logs of a claude,
// codex or gemini agent are its transcript as text, each entry as the
// transcript view draws it, not the CLI's stream-json; raw, they are the
// log's bytes.
func TestLogsOfAPresetAreItsTranscript(t *testing.T) {
	for _, name := range []string{"claude", "codex", "codex-exec", "gemini"} {
		t.Run(name, func(t *testing.T) {
			s, _ := presetSupervisor(t, name)
			id := spawn(t, s, "say hi")
			if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted {
				t.Fatalf("%s: %s", name, d.Status)
			}
			text, err := s.Logs(id, 0)
			if err != nil {
				t.Fatal(err)
			}
			w, _, err := s.Transcript(t.Context(), id, 0, 0, proto.MaxWindowItems)
			if err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for _, e := range w.Entries {
				want.WriteString(e.Display().Text() + "\n")
			}
			if text != want.String() || strings.Contains(text, `{"`) || !strings.Contains(text, "STUB-REPLY") && !strings.Contains(text, "FAKE: say hi") {
				t.Fatalf("logs:\n%s\nwant the transcript as drawn:\n%s", text, want.String())
			}
			var raw strings.Builder
			if err := s.WriteLogs(t.Context(), &raw, id, 0, true); err != nil || !strings.Contains(raw.String(), `{"type":`) && !strings.Contains(raw.String(), `{"method":`) {
				t.Fatalf("raw logs: %v %.200q", err, raw.String())
			}
		})
	}
}
