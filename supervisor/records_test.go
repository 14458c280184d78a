package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// hostOf returns a function that starts a host (a supervisor) on the same
// working and state directory each time, as a restarted dashboard, serve
// or mcp does, shut down when the test ends.
func hostOf(t *testing.T, command string) (start func(edit ...func(*Config)) *Supervisor, dir string) {
	t.Helper()
	dir = t.TempDir()
	start = func(edit ...func(*Config)) *Supervisor {
		t.Helper()
		cfg := Config{Command: command, MaxAgents: 4, Dir: dir, StateDir: filepath.Join(dir, ".state"),
			Grace: 300 * time.Millisecond, Scrollback: DefaultScrollback, Environ: os.Environ(),
			RestoreWindow: DefaultRestoreWindow, LogRetention: DefaultLogRetention}
		for _, e := range edit {
			e(&cfg)
		}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { shutdownNow(t, s) })
		return s
	}
	return start, dir
}

func shutdownNow(t *testing.T, s *Supervisor) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// finishedRun starts a host, runs one agent on message to its end, and
// stops the host: the records an earlier run left. It returns the
// stopped host and the agent's id.
func finishedRun(t *testing.T, start func(edit ...func(*Config)) *Supervisor, message string) (*Supervisor, string) {
	t.Helper()
	s := start()
	id := spawn(t, s, message)
	waitFinal(t, s, id)
	shutdownNow(t, s)
	return s, id
}

// script answers "ok …" with "fine …", fails "bad …" with exit 3, and
// sleeps on anything else.
const script = `read m; case "$m" in ok*) echo "fine $m";; bad*) echo oops >&2; exit 3;; *) sleep 300;; esac`

func summaryOf(t *testing.T, s *Supervisor, id string) proto.Summary {
	t.Helper()
	for _, a := range listOf(s) {
		if a.AgentID == id {
			return a
		}
	}
	t.Fatalf("agent %s is not in list", id)
	return proto.Summary{}
}

// TestRestoreAfterTheHostEnded: a host that ended while one agent still
// ran (it was not shut down: its journal ends mid-run) is followed by a
// new host, which shows all three agents with honest statuses, every
// submission's output, and continues them.
func TestRestoreAfterTheHostEnded(t *testing.T) {
	start, _ := hostOf(t, script)
	s1 := start()
	done, failed, slept := spawn(t, s1, "ok one"), spawn(t, s1, "bad two"), spawn(t, s1, "sleep three")
	waitFinal(t, s1, done)
	waitFinal(t, s1, failed)

	s2 := start(func(c *Config) { c.Command = "echo the new host's command" })
	if got := s2.Restored(); got != 3 {
		t.Fatalf("restored %d agents, want 3", got)
	}
	ls := listOf(s2)
	if len(ls) != 3 || ls[0].AgentID != done || ls[1].AgentID != failed || ls[2].AgentID != slept {
		t.Fatalf("list after restart: %+v", ls)
	}
	ms := proto.MinWaitTimeoutMS
	res, err := s2.Wait(context.Background(), []string{done, failed, slept}, &ms)
	if err != nil || res.TimedOut {
		t.Fatalf("wait on restored agents: %+v %v", res, err)
	}
	want := map[string]struct {
		status  proto.Status
		lastErr string
	}{done: {proto.StatusCompleted, ""}, failed: {proto.StatusErrored, "submission failed with exit code 3"}, slept: {proto.StatusErrored, "interrupted (host ended)"}}
	for id, w := range want {
		d := res.Details[id]
		le := ""
		if d.LastError != nil {
			le = *d.LastError
		}
		if d.Status != w.status || le != w.lastErr {
			t.Errorf("%s: restored as %s / %q, want %s / %q", id[:8], d.Status, le, w.status, w.lastErr)
		}
		if !summaryOf(t, s2, id).Restored {
			t.Errorf("%s is not marked restored", id[:8])
		}
	}
	if d := res.Details[done]; d.LastOutput == nil || *d.LastOutput != "fine ok one" {
		t.Errorf("last_output of the completed agent: %v", d.LastOutput)
	}
	if out, err := s2.Logs(done, 1); err != nil || out != "fine ok one\n" {
		t.Errorf("logs of the completed agent: %q %v", out, err)
	}
	if out, err := s2.Logs(failed, 0); err != nil || out != "oops\n" {
		t.Errorf("logs of the errored agent: %q %v", out, err)
	}
	// Display lines are read back on demand only.
	if w, evicted, err := s2.window(done, 1, 0, 100); err != nil || !evicted {
		t.Fatalf("a restored submission holds display lines before it is viewed: %+v %v", w, err)
	}
	if got := lines(t, s2, done); len(got) != 1 || got[0] != "fine ok one" {
		t.Errorf("lines read back: %q", got)
	}

	// send continues the agent with the command it was spawned with.
	r, err := s2.Send(t.Context(), done, "ok again", false)
	if err != nil {
		t.Fatal(err)
	}
	d := waitFinal(t, s2, done)
	if d.Status != proto.StatusCompleted || *d.LastOutput != "fine ok again" || *d.LastSubmissionID != r.SubmissionID {
		t.Fatalf("after send: %s %q", d.Status, *d.LastOutput)
	}
	info, _ := s2.Agent(done)
	if n := len(info.Submissions); n != 2 || info.Submissions[1].Seq != 2 || info.Restored {
		t.Fatalf("submissions after send: %+v restored=%v", info.Submissions, info.Restored)
	}

	// A third host sees the second submission too.
	shutdownNow(t, s2)
	s3 := start()
	if out, err := s3.Logs(done, 2); err != nil || out != "fine ok again\n" {
		t.Errorf("logs of submission 2 after another restart: %q %v", out, err)
	}
	if out, err := s3.Logs(done, 1); err != nil || out != "fine ok one\n" {
		t.Errorf("logs of submission 1 after another restart: %q %v", out, err)
	}
}

// TestRestoredCloseAndResume: a closed agent comes back closed, and resume
// gives it the status it had when it was closed (SPEC §3).
func TestRestoredCloseAndResume(t *testing.T) {
	start, _ := hostOf(t, script)
	s1 := start()
	id := spawn(t, s1, "bad one")
	waitFinal(t, s1, id)
	if _, err := s1.Close(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	shutdownNow(t, s1)
	s2 := start()
	if st := summaryOf(t, s2, id).Status; st != proto.StatusClosed {
		t.Fatalf("restored as %s, want closed", st)
	}
	if _, err := s2.Send(t.Context(), id, "ok", false); proto.CodeOf(err) != proto.CodeClosed {
		t.Fatalf("send to a restored closed agent: %v", err)
	}
	if r, err := s2.Resume(t.Context(), id); err != nil || r.Status != proto.StatusErrored {
		t.Fatalf("resume: %+v %v", r, err)
	}
}

// TestRestoreWindow: --restore-window 0 restores nothing but forgets
// nothing; a record older than the window is not restored, and one inside
// a wider window is.
func TestRestoreWindow(t *testing.T) {
	start, dir := hostOf(t, script)
	finishedRun(t, start, "ok")

	none := start(func(c *Config) { c.RestoreWindow = 0 })
	if n := len(listOf(none)); n != 0 || none.Restored() != 0 {
		t.Fatalf("--restore-window 0 restored %d agents", n)
	}
	shutdownNow(t, none)
	again := start()
	if len(listOf(again)) != 1 {
		t.Fatal("a host with the default window after one with 0 lost the record")
	}
	// ended before the old journal is written: a host still running would
	// be replayed beside it (its run is written after that checkpoint)
	shutdownNow(t, again)

	// A record last updated ten days ago, in a journal of its own.
	old := filepath.Join(dir, ".state", "runs", "20200101T000000Z-aaaaaa")
	// Its checkpoint begins after the last write of the host above: journal
	// times are in milliseconds, and a run written within the checkpoint's
	// millisecond is replayed too (it may have run on).
	later := proto.Time{Time: time.Now().Add(2 * time.Millisecond)}
	writeJournal(t, old, dir, journal.Event{Time: later, Event: "record", Record: &journal.AgentRecord{
		AgentID: "0ld0ld00-0000-4000-8000-000000000000", Dir: dir, Status: proto.StatusCompleted,
		CreatedAt: proto.Time{Time: time.Now().Add(-11 * 24 * time.Hour)}, UpdatedAt: proto.Time{Time: time.Now().Add(-10 * 24 * time.Hour)},
		LastMessage: "an old task", Command: "true"}}, journal.Event{Time: later, Event: "records_restored"})
	newest := old // started last (run_started's time), whatever its name
	week := start()
	if n := len(listOf(week)); n != 0 {
		t.Fatalf("a record 10 days old was restored with a 7-day window (%d agents)", n)
	}
	shutdownNow(t, week)
	if err := os.RemoveAll(newest); err != nil {
		t.Fatal(err)
	}
	month := start(func(c *Config) { c.RestoreWindow = 30 * 24 * time.Hour })
	ls := listOf(month)
	if len(ls) != 1 || ls[0].LastMessage != "an old task" {
		t.Fatalf("a 30-day window did not restore the 10-day-old record kept by the 7-day host: %+v", ls)
	}
}

// writeJournal writes a run's journal: run_started for dir, then evs.
func writeJournal(t *testing.T, runDir, dir string, evs ...journal.Event) string {
	t.Helper()
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ev := range append([]journal.Event{{Event: "run_started", Dir: dir, PID: 1 << 22}}, evs...) {
		if ev.Time.IsZero() {
			ev.Time = proto.Time{Time: time.Now()}
		}
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(runDir, "journal.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRestoreCorruptJournal: corrupt and truncated lines, records of
// another directory and a journal of another directory: what can be
// restored is, what could not is named in a warning, and the new host
// works.
func TestRestoreCorruptJournal(t *testing.T) {
	start, dir := hostOf(t, "echo fresh")
	runs := filepath.Join(dir, ".state", "runs")
	a, b := "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
	path := writeJournal(t, filepath.Join(runs, "20261130T100000Z-000001"), dir,
		journal.Event{Event: "spawned", AgentID: a, SubmissionID: "a1", Seq: 1, Message: "task a", Command: "echo a"},
		journal.Event{Event: "submission_started", AgentID: a, SubmissionID: "a1", Seq: 1, Log: "/nonexistent/1-a1.log"},
		journal.Event{Event: "submission_ended", AgentID: a, SubmissionID: "a1", Seq: 1, Status: proto.StatusCompleted},
		journal.Event{Event: "spawned", AgentID: b, SubmissionID: "b1", Seq: 1, Message: "task b", Command: "echo b"},
		journal.Event{Event: "record", Record: &journal.AgentRecord{AgentID: "cccccccc-0000-4000-8000-000000000003", Dir: "/another/dir", Status: proto.StatusCompleted, UpdatedAt: proto.Time{Time: time.Now()}}},
	)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// a corrupt line, then an event of b, then a line torn by a kill
	line, _ := json.Marshal(journal.Event{Time: proto.Time{Time: time.Now()}, Event: "submission_started", AgentID: b, SubmissionID: "b1", Seq: 1, Command: "echo b"})
	if _, err := fmt.Fprintf(f, "{not json at all\n%s\n{\"time\":\"2026-11-30T10:00:05.000Z\",\"event\":\"submission_en", line); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// a journal of another directory
	writeJournal(t, filepath.Join(runs, "20261130T110000Z-000002"), "/some/other/dir",
		journal.Event{Event: "spawned", AgentID: "dddddddd-0000-4000-8000-000000000004", Seq: 1, Message: "elsewhere"})

	s := start()
	ls := listOf(s)
	if len(ls) != 2 || ls[0].AgentID != a || ls[1].AgentID != b {
		t.Fatalf("restored %+v; want agents a and b only", ls)
	}
	if ls[0].Status != proto.StatusCompleted || ls[1].Status != proto.StatusErrored {
		t.Errorf("statuses %s, %s; want completed and errored (interrupted by the host's end)", ls[0].Status, ls[1].Status)
	}
	warn := strings.Join(s.Config().Warnings, "\n")
	for _, w := range []string{path + ": 2 unreadable line(s) skipped (lines 7, 9)", "1 record(s) of another working directory"} {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings lack %q:\n%s", w, warn)
		}
	}
	// a's log is gone: said in words, in logs and in the pane
	if _, err := s.Logs(a, 1); err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("logs of a submission whose log file is gone: %v", err)
	}
	if got := lines(t, s, a); len(got) != 1 || !strings.Contains(got[0], "the log file of this submission is gone") {
		t.Errorf("pane of a submission whose log is gone: %q", got)
	}
	// the current run works, and its records are kept
	id := spawn(t, s, "new")
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted {
		t.Fatalf("new agent: %s", d.Status)
	}
	shutdownNow(t, s)
	if n := len(listOf(start())); n != 3 {
		t.Fatalf("next host restored %d agents, want 3", n)
	}
}

// TestForget: forget removes a finished agent for good, also after a
// restart; its logs stay; a running agent is refused.
func TestForget(t *testing.T) {
	start, _ := hostOf(t, script)
	s1 := start()
	done, busy := spawn(t, s1, "ok"), spawn(t, s1, "sleep")
	waitFinal(t, s1, done)
	logPath, _ := s1.LogPath(done, 1)
	_, err := s1.Forget(t.Context(), busy)
	if proto.CodeOf(err) != proto.CodeBusy || !strings.Contains(err.Error(), "is running; interrupt or close it before forgetting it") {
		t.Fatalf("forget of a running agent: %v", err)
	}
	if r, err := s1.Forget(t.Context(), done[:8]); err != nil || r.Status != proto.StatusForgotten || r.AgentID != done {
		t.Fatalf("forget: %+v %v", r, err)
	}
	if _, err := s1.Logs(done, 0); proto.CodeOf(err) != proto.CodeNotFound {
		t.Errorf("logs of a forgotten agent: %v", err)
	}
	if len(listOf(s1)) != 1 {
		t.Fatal("the forgotten agent is still listed")
	}
	if _, err := os.Stat(logPath); err != nil {
		t.Errorf("the log of a forgotten agent was removed: %v", err)
	}
	shutdownNow(t, s1)
	s2 := start()
	if ls := listOf(s2); len(ls) != 1 || ls[0].AgentID != busy {
		t.Fatalf("after restart: %+v", ls)
	}
}

// TestWholeMessageKept: the whole message is kept beside the log, so a
// resend after a restart sends all of it; memory keeps a head only.
func TestWholeMessageKept(t *testing.T) {
	start, _ := hostOf(t, "wc -c")
	msg := strings.Repeat("0123456789", 20000) // 200 kB: more than the journal's 64 KiB
	_, id := finishedRun(t, start, msg)
	s2 := start()
	info, _ := s2.Agent(id)
	if !proto.MessageCut(info.LastMessage) || len(info.LastMessage) > journal.MaxMessageHead+64 {
		t.Errorf("the snapshot holds %d bytes of the message; want a marked head", len(info.LastMessage))
	}
	whole, err := s2.Message(t.Context(), id, 0)
	if err != nil || whole != msg {
		t.Fatalf("whole message after restart: %d bytes, %v", len(whole), err)
	}
	if _, err := s2.Send(t.Context(), id, whole, false); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s2, id); *d.LastOutput != "200001" {
		t.Fatalf("the resent message reached the agent as %s bytes", *d.LastOutput)
	}
}

// TestRestoredAgentKeepsItsCommand: a restored agent runs the command it
// was spawned with, whatever the new host's; when that is missing now,
// send says so in words.
func TestRestoredAgentKeepsItsCommand(t *testing.T) {
	start, dir := hostOf(t, "")
	cli := filepath.Join(dir, "my-agent-cli")
	if err := os.WriteFile(cli, []byte("#!/bin/sh\necho from-the-first-cli\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	s1 := start(func(c *Config) { c.Command = cli })
	id := spawn(t, s1, "x")
	waitFinal(t, s1, id)
	shutdownNow(t, s1)
	s2 := start(func(c *Config) { c.Command = "echo from-the-second-host" })
	if _, err := s2.Send(t.Context(), id, "y", false); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s2, id); *d.LastOutput != "from-the-first-cli" {
		t.Fatalf("restored agent ran %q", *d.LastOutput)
	}
	shutdownNow(t, s2)
	if err := os.Remove(cli); err != nil {
		t.Fatal(err)
	}
	s3 := start()
	_, err := s3.Send(t.Context(), id, "z", false)
	if err == nil || !strings.Contains(err.Error(), "is not found now") || !strings.Contains(err.Error(), cli) {
		t.Fatalf("send with the agent's CLI gone: %v", err)
	}
	if info, _ := s3.Agent(id); len(info.Submissions) != 2 {
		t.Fatalf("a refused send left a submission: %d", len(info.Submissions))
	}
}

// TestRestoredPresetContinuesTheConversation: with the fake claude and
// codex CLIs, an agent restored by a new host continues its session
// (claude --resume <agent id>, the app-server's thread/resume of its
// thread, codex exec resume <thread id>).
func TestRestoredPresetContinuesTheConversation(t *testing.T) {
	fake, err := filepath.Abs("../testdata/fakecli")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ preset, again, answer string }{
		{"claude", "claude -p --output-format stream-json --verbose --resume AGENT --input-format stream-json --replay-user-messages --permission-prompt-tool stdio", "STUB-REPLY #12: saw 2 user message(s)"},
		{"codex", "codex app-server", "FAKE: and again"},
		{"codex-exec", "codex exec --json --skip-git-repo-check resume 01a22c75-d518-7a43-8ad2-67959028ffd4 -", ""},
	} {
		t.Run(c.preset, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "calls.log")
			p, err := LookupPreset(c.preset, "", "")
			if err != nil {
				t.Fatal(err)
			}
			start, _ := hostOf(t, "")
			env := append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "FAKECLI_LOG="+log)
			s1 := start(func(cf *Config) { cf.Preset, cf.Command, cf.Environ = p, p.Describe(), env })
			id := spawn(t, s1, "hello")
			d1 := waitFinal(t, s1, id)
			if d1.Status != proto.StatusCompleted || d1.SessionID == "" {
				t.Fatalf("first run: %s session %q", d1.Status, d1.SessionID)
			}
			shutdownNow(t, s1)
			s2 := start(func(cf *Config) { cf.Command, cf.Environ = "echo not-a-preset", env })
			// the first submission's transcript is read back when viewed
			if w, ok, unread, err := s2.transcript(id, 1, 0, 100); err != nil || !ok || !unread {
				t.Fatalf("transcript before it is viewed: %+v %v %v", w, ok, err)
			}
			w, ok, err := s2.Transcript(t.Context(), id, 1, 0, 100)
			if err != nil || !ok || len(w.Entries) == 0 {
				t.Fatalf("transcript read back: %+v %v %v", w, ok, err)
			}
			var said []string
			for _, e := range w.Entries {
				said = append(said, e.Text)
			}
			if first := strings.Join(said, "\n"); !strings.Contains(first, "STUB-REPLY") && !strings.Contains(first, "FAKE: hello") {
				t.Errorf("the transcript read back lacks the answer: %q", first)
			}
			if _, err := s2.Send(t.Context(), id, "and again", false); err != nil {
				t.Fatal(err)
			}
			d2 := waitFinal(t, s2, id)
			if d2.Status != proto.StatusCompleted || d2.SessionID != d1.SessionID {
				t.Fatalf("after restart: %s, session %q (was %q), last_error %v", d2.Status, d2.SessionID, d1.SessionID, d2.LastError)
			}
			got := calls(t, log)
			if want := strings.ReplaceAll(c.again, "AGENT", id); len(got) != 2 || got[1] != want {
				t.Fatalf("calls %q; want the second to be %q", got, want)
			}
			if c.answer != "" && !strings.Contains(*d2.LastOutput, c.answer) {
				t.Errorf("answer %q lacks %q", *d2.LastOutput, c.answer)
			}
		})
	}
}
