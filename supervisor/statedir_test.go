package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// stateCommand answers "got: <message>" at once, or says "sleeping" and
// sleeps for a message that begins with "sleep".
const stateCommand = `read m; case "$m" in sleep*) echo sleeping; exec sleep 30;; esac; echo "got: $m"`

// TestRemovedStateDirIsWrittenAgain: the state directory removed under a
// running host is said on every screen within seconds; the host makes its
// run folder and journal again from memory, so that a later host restores
// every agent, those spawned before the removal and after it, with their
// task names and messages, and none that was forgotten; the running
// submission's log file is its failure, and the host's failure ends.
func TestRemovedStateDirIsWrittenAgain(t *testing.T) {
	start, dir := hostOf(t, stateCommand)
	s := start()
	feed := s.Subscribe()
	defer feed.Close()
	before := spawn(t, s, "before the removal")
	waitFinal(t, s, before)
	gone := spawn(t, s, "forgotten later")
	waitFinal(t, s, gone)
	running, err := s.SpawnAgent(t.Context(), proto.SpawnRequest{Message: "sleep on", TaskName: "sleeper"})
	if err != nil {
		t.Fatal(err)
	}
	waitForLine(t, s, running.AgentID, "sleeping", 10*time.Second) // it read its message from the state directory
	if err := os.RemoveAll(s.cfg.StateDir); err != nil {
		t.Fatal(err)
	}
	warned := testkit.Poll(t, 15*time.Second, "a warning that the state directory was removed", func() (string, bool) {
		for _, w := range s.Config().Warnings {
			if strings.Contains(w, "was removed under this host") {
				return w, true
			}
		}
		return "", false
	})
	for _, want := range []string{"the state directory " + s.cfg.StateDir + " was removed under this host",
		"wrote the journal " + s.journalPath() + " again from memory (3 agent record(s))"} {
		if !strings.Contains(warned, want) {
			t.Errorf("the warning %q does not say %q", warned, want)
		}
	}
	if _, err := os.Stat(s.journalPath()); err != nil {
		t.Errorf("the journal is not there again: %v", err)
	}
	if f := s.Failure(); f != "" {
		t.Errorf("host failure after the journal was written again: %q", f)
	}
	testkit.Eventually(t, 15*time.Second, "the running agent's failure to say its log file was removed", func() bool {
		info, _ := s.Agent(running.AgentID)
		return strings.Contains(info.Failure, "log file could not be written (removed with its folder)")
	})
	if _, err := s.Forget(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	after, err := s.SpawnAgent(t.Context(), proto.SpawnRequest{Message: "the message after", TaskName: "after"})
	if err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, after.AgentID)
	shutdownNow(t, s)

	again := start()
	got := map[string]string{}
	for _, sum := range listOf(again) {
		got[sum.AgentPath] = sum.LastMessage
	}
	want := map[string]string{
		"/root/" + before[:8]: "before the removal",
		"/root/sleeper":       "sleep on",
		"/root/after":         "the message after",
	}
	if len(got) != len(want) {
		t.Errorf("restored %v; want %v", got, want)
	}
	for path, msg := range want {
		if got[path] != msg {
			t.Errorf("restored %s with message %q; want %q (all: %v)", path, got[path], msg, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".state", "runs")); err != nil {
		t.Error(err)
	}
}

// TestJournalWrittenAgainAfterAFailure: events the journal could not
// write (its disk went away: every write fails) are written again from
// memory once it can write: the failure ends, a warning says so, and a
// later host restores the agent spawned meanwhile with its task name and
// message. (A write cut part way by a full disk: the journal package's
// TestWriterCutsAFailedWriteBack and e2e's
// TestFullDiskJournalKeepsTheNextRecord.)
func TestJournalWrittenAgainAfterAFailure(t *testing.T) {
	start, _ := hostOf(t, stateCommand)
	s := start()
	waitFinal(t, s, spawn(t, s, "before the failure"))
	breakJournal(t, s.journalPath())
	after, err := s.SpawnAgent(t.Context(), proto.SpawnRequest{Message: "the message after", TaskName: "after"})
	if err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, after.AgentID)
	if f := s.Failure(); !strings.Contains(f, "journal could not be written (bad file descriptor)") {
		t.Errorf("the host's failure %q does not say the journal could not be written", f)
	}
	mendJournal(t, s.journalPath())
	testkit.Poll(t, 30*time.Second, "a warning that the journal is written again", func() (string, bool) {
		for _, w := range s.Config().Warnings {
			if strings.HasPrefix(w, "journal written again: "+s.journalPath()) {
				return w, true
			}
		}
		return "", false
	})
	if f := s.Failure(); f != "" {
		t.Errorf("the failure did not end: %q", f)
	}
	shutdownNow(t, s)
	again := start()
	found := false
	for _, sum := range listOf(again) {
		if sum.AgentPath == "/root/after" {
			found = sum.LastMessage == "the message after" && sum.Status == proto.StatusCompleted
		}
	}
	if !found {
		t.Errorf("/root/after was not restored with its message and status: %+v", listOf(again))
	}
}
