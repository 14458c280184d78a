package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/internal/memohome"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// memoHost returns a host starter for the memo preset against the fake
// Memo of testdata/fakememo (Memo 0.9.1's recorded output and session
// files), with a user Memo home holding a config, the fake's call log and
// the user's Memo home.
func memoHost(t *testing.T) (start func(edit ...func(*Config)) *Supervisor, log, userHome string) {
	t.Helper()
	fake, err := filepath.Abs("../testdata/fakememo")
	if err != nil {
		t.Fatal(err)
	}
	userHome = filepath.Join(t.TempDir(), "memo-home")
	writeMemoConfig(t, userHome)
	log = filepath.Join(t.TempDir(), "calls.log")
	p, err := LookupPreset("memo", "", "")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "FAKECLI_LOG="+log, "MEMO_HOME="+userHome)
	hostStart, _ := hostOf(t, "")
	start = func(edit ...func(*Config)) *Supervisor {
		t.Helper()
		return hostStart(append([]func(*Config){func(c *Config) { c.Preset, c.Command, c.Environ = p, p.Describe(), env }}, edit...)...)
	}
	return start, log, userHome
}

// memoCalls returns the fake Memo's runs: "args<TAB>message<TAB>prev=<the
// message of the session --prev continued>".
func memoCalls(t *testing.T, log string) []string {
	t.Helper()
	var out []string
	for _, line := range logLines(t, log) {
		out = append(out, strings.TrimPrefix(line, "memo\t"))
	}
	return out
}

// TestMemoPresetPerAgentConversation: two memo agents in one folder each
// get a Memo home of their own (MEMO_HOME, linking the user's config), so
// each send continues its own agent's conversation with --prev, never the
// other's (SPEC §8); the outcome, the answer without Memo's chrome, the
// tokens and the session id come from the run (the session id from the
// session file Memo wrote).
func TestMemoPresetPerAgentConversation(t *testing.T) {
	start, log, userHome := memoHost(t)
	s := start()
	a := spawn(t, s, "alpha one")
	da := waitFinal(t, s, a)
	b := spawn(t, s, "beta one")
	db := waitFinal(t, s, b)
	for _, d := range []proto.WaitDetail{da, db} {
		if d.Status != proto.StatusCompleted || d.LastOutput == nil || !strings.HasPrefix(*d.LastOutput, "MEMO-STUB-REPLY #1: saw 1 user message(s)") ||
			strings.Contains(*d.LastOutput, "DANGEROUS") || strings.Contains(*d.LastOutput, "[tokens]") || strings.Contains(*d.LastOutput, "provider=") {
			t.Fatalf("first run: %s %q", d.Status, strOf(d.LastOutput))
		}
		if len(d.SessionID) != 36 {
			t.Errorf("session id %q, want the uuid of Memo's session file", d.SessionID)
		}
	}
	if da.SessionID == db.SessionID {
		t.Errorf("both agents have session %s", da.SessionID)
	}
	if _, err := s.Send(t.Context(), a, "alpha two", false); err != nil {
		t.Fatal(err)
	}
	da2 := waitFinal(t, s, a)
	if _, err := s.Send(t.Context(), b, "beta two", false); err != nil {
		t.Fatal(err)
	}
	db2 := waitFinal(t, s, b)
	if !strings.HasPrefix(strOf(da2.LastOutput), "MEMO-STUB-REPLY #2: saw 2 user message(s); last user text: 'alpha two'") || da2.SessionID == da.SessionID {
		t.Errorf("second run of a: %q session %s", strOf(da2.LastOutput), da2.SessionID)
	}
	want := []string{
		"--dangerous\talpha one\tprev=",
		"--dangerous\tbeta one\tprev=",
		"--dangerous --prev\talpha two\tprev=alpha one",
		"--dangerous --prev\tbeta two\tprev=beta one",
	}
	if got := memoCalls(t, log); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("memo runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_ = db2
	for _, id := range []string{a, b} {
		home := filepath.Join(s.RunDir(), id, memoHomeName)
		if target, err := os.Readlink(filepath.Join(home, "config.toml")); err != nil || target != filepath.Join(userHome, "config.toml") {
			t.Errorf("agent %s: config.toml in %s links to %q (%v), want the user's", id, home, target, err)
		}
		if n := len(memoSessionFiles(t, home)); n != 2 {
			t.Errorf("agent %s: %d session files in its home, want 2", id, n)
		}
	}
	if info, _ := s.Agent(a); info.Usage != (proto.Usage{InputTokens: 101 + 102, OutputTokens: 20}) {
		t.Errorf("usage of a: %+v, want the tokens of both runs and no cost", info.Usage)
	}
	w, ok, err := s.Transcript(t.Context(), a, 2, 0, 100)
	if err != nil || !ok {
		t.Fatalf("transcript: %v %v", ok, err)
	}
	var kinds []string
	for _, e := range w.Entries {
		kinds = append(kinds, string(e.Kind))
	}
	if got := strings.Join(kinds, " "); got != "init user text result" {
		t.Errorf("transcript of a's second run: %s", got)
	}
}

func strOf(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func memoSessionFiles(t *testing.T, home string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(home, "sessions", "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// TestMemoPresetFailures: runs Memo ends with exit 0 are errored with Memo's
// own message when it failed (HTTP 500, a missing key), last_output is that
// message and not Memo's stack dump on stderr; without a config that names
// a provider nothing starts (Memo would ask for setup, or write a DeepSeek
// config and send the task there), the agent is errored saying what to do,
// and once the config is there a send starts a new conversation.
func TestMemoPresetFailures(t *testing.T) {
	start, log, userHome := memoHost(t)
	s := start()
	fail := spawn(t, s, "please FAIL_STATUS: 500")
	nokey := spawn(t, s, "NOKEY say hi")
	d := waitFinal(t, s, fail)
	if want := "LLM call failed: Failed after 3 attempts. Last error: stub: scripted failure"; d.Status != proto.StatusErrored || strOf(d.LastError) != want || strOf(d.LastOutput) != want {
		t.Errorf("HTTP 500: %s last_error %q last_output %q", d.Status, strOf(d.LastError), strOf(d.LastOutput))
	}
	d = waitFinal(t, s, nokey)
	if want := "LLM call failed: Missing env var STUB_API_KEY (or OPENAI_API_KEY/DEEPSEEK_API_KEY)"; d.Status != proto.StatusErrored || strOf(d.LastError) != want {
		t.Errorf("missing key: %s %q", d.Status, strOf(d.LastError))
	}

	if err := os.Remove(filepath.Join(userHome, "config.toml")); err != nil {
		t.Fatal(err)
	}
	id := spawn(t, s, "say hi")
	d = waitFinal(t, s, id)
	want := "memo has no provider config (" + filepath.Join(userHome, "config.toml") + ": no such file or directory); run memo once in a terminal"
	if d.Status != proto.StatusErrored || !strings.HasPrefix(strOf(d.LastError), want) {
		t.Errorf("no config: %s %q, want it to start %q", d.Status, strOf(d.LastError), want)
	}
	if n := len(memoCalls(t, log)); n != 2 {
		t.Errorf("memo ran %d times, want 2 (not without a config)", n)
	}
	// the log pane says why, in the transcript and the raw view
	if w, ok, err := s.Transcript(t.Context(), id, 1, 0, 10); err != nil || !ok || len(w.Entries) != 1 || w.Entries[0].Kind != transcript.KindError ||
		!strings.Contains(w.Entries[0].Text, "could not start: memo has no provider config") {
		t.Errorf("transcript of the run that could not start: %+v %v %v", w.Entries, ok, err)
	}
	if got := strings.Join(lines(t, s, id), "\n"); !strings.Contains(got, "subdash: the submission could not start: memo has no provider config") {
		t.Errorf("log pane of the run that could not start:\n%s", got)
	}
	if _, err := os.Lstat(filepath.Join(s.RunDir(), id, memoHomeName, "config.toml")); !os.IsNotExist(err) {
		t.Errorf("the agent's home has a config.toml without the user's: %v", err)
	}
	writeMemoConfig(t, userHome)
	if _, err := s.Send(t.Context(), id, "say hi again", false); err != nil {
		t.Fatal(err)
	}
	if d = waitFinal(t, s, id); d.Status != proto.StatusCompleted {
		t.Errorf("after the config came: %s %q", d.Status, strOf(d.LastError))
	}
	calls := memoCalls(t, log)
	if last := calls[len(calls)-1]; last != "--dangerous\tsay hi again\tprev=" {
		t.Errorf("the send after a run without a session: %q, want a new conversation", last)
	}
	if got := strings.Join(lines(t, s, id), "\n"); !strings.Contains(got, "the previous submission ended before memo created a session") {
		t.Errorf("log pane does not say a new session starts:\n%s", got)
	}
	if w, ok, err := s.Transcript(t.Context(), id, 2, 0, 10); err != nil || !ok || len(w.Entries) == 0 || w.Entries[0].Kind != transcript.KindNote ||
		!strings.Contains(w.Entries[0].Text, "ended before memo created a session") {
		t.Errorf("the transcript does not say a new session starts: %+v %v %v", w.Entries, ok, err)
	}
}

// TestMemoRestoredAgentKeepsItsHome: the record keeps the agent's Memo
// home, so a restored agent continues its own conversation there.
func TestMemoRestoredAgentKeepsItsHome(t *testing.T) {
	start, log, _ := memoHost(t)
	s1 := start()
	id := spawn(t, s1, "alpha one")
	d1 := waitFinal(t, s1, id)
	home := filepath.Join(s1.RunDir(), id, memoHomeName)
	shutdownNow(t, s1)
	s2 := start()
	if sum := summaryOf(t, s2, id); sum.SessionID != d1.SessionID {
		t.Fatalf("restored session %q, want %q", sum.SessionID, d1.SessionID)
	}
	if _, err := s2.Send(t.Context(), id, "alpha two", false); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s2, id); d.Status != proto.StatusCompleted || !strings.Contains(strOf(d.LastOutput), "saw 2 user message(s)") {
		t.Errorf("after restart: %s %q", d.Status, strOf(d.LastOutput))
	}
	if calls := memoCalls(t, log); len(calls) != 2 || calls[1] != "--dangerous --prev\talpha two\tprev=alpha one" {
		t.Errorf("memo runs %q", calls)
	}
	if n := len(memoSessionFiles(t, home)); n != 2 {
		t.Errorf("%d session files in the first run's home %s, want 2", n, home)
	}
	// a home whose sessions are gone: a new conversation, said on screen
	if err := os.RemoveAll(filepath.Join(home, "sessions")); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Send(t.Context(), id, "alpha three", false); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s2, id); d.Status != proto.StatusCompleted {
		t.Errorf("without sessions: %s %q", d.Status, strOf(d.LastError))
	}
	if got := strings.Join(lines(t, s2, id), "\n"); !strings.Contains(got, "memo's sessions of this agent are gone") {
		t.Errorf("log pane:\n%s", got)
	}
}

// TestMemoSessionDecides: where stdout and the session file disagree (a
// turn Memo recorded as cancelled, or failed, behind a reply that reads
// as an answer), the session file decides (SPEC §8).
func TestMemoSessionDecides(t *testing.T) {
	home := t.TempDir()
	m := &memoRun{home: home, before: nil}
	dir := filepath.Join(home, "sessions", "-x")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../testdata/memo/memo-session-noapproval.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "2026-12-02T07-10-56-454708cc-a0fa-4c28-bc9c-a05a80d069d7.jsonl"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	oc := &outcome{final: true, success: true, answer: "looks fine", events: true}
	used := proto.Usage{}
	m.decide(oc, &used)
	if oc.success || !strings.HasPrefix(oc.err, "memo cancelled the turn: a tool was denied approval") || oc.sessionID != "454708cc-a0fa-4c28-bc9c-a05a80d069d7" || used.InputTokens != 108 {
		t.Errorf("after the session file: %+v %+v", oc, used)
	}
	// no new file: stdout's outcome stands
	oc2 := &outcome{final: true, success: true, answer: "ok"}
	(&memoRun{home: home, before: memohome.Sessions(home)}).decide(oc2, &used)
	if !oc2.success || oc2.sessionID != "" {
		t.Errorf("without a new session file: %+v", oc2)
	}
	var nilRun *memoRun
	nilRun.decide(oc2, &used)
}
