package supervisor

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestCheckpointOfASecondHostLosesNothingOfTheFirst (SPEC §10): a second
// host of the directory starts while the first still runs (it takes its
// checkpoint then, with the first host's running agent as "interrupted
// (host ended)"), runs nothing and ends. The first host then ends its
// running agent by interrupt and spawns another that completes. The next
// host restores all three with the statuses they really ended with, and
// keeps the first host's run, which holds events the second one's
// checkpoint does not.
func TestCheckpointOfASecondHostLosesNothingOfTheFirst(t *testing.T) {
	start, dir := hostOf(t, script)
	first := start()
	done, slept := spawn(t, first, "ok one"), spawn(t, first, "sleep two")
	waitFinal(t, first, done)
	second := start()
	if got := summaryOf(t, second, slept); got.Status != proto.StatusErrored {
		t.Fatalf("the second host restored the running agent as %s", got.Status)
	}
	shutdownNow(t, second)
	if _, err := first.Interrupt(t.Context(), slept); err != nil {
		t.Fatal(err)
	}
	later := spawn(t, first, "ok three")
	waitFinal(t, first, later)
	shutdownNow(t, first)

	third := start()
	want := []struct {
		id      string
		status  proto.Status
		lastErr string
	}{{done, proto.StatusCompleted, ""}, {slept, proto.StatusErrored, "interrupted"}, {later, proto.StatusCompleted, ""}}
	ls := listOf(third)
	if len(ls) != len(want) {
		t.Fatalf("restored %d agent(s) %+v; want %d", len(ls), ls, len(want))
	}
	for i, a := range ls {
		info, _ := third.Agent(a.AgentID)
		lastErr := ""
		if info.LastError != nil {
			lastErr = *info.LastError
		}
		if a.AgentID != want[i].id || a.Status != want[i].status || lastErr != want[i].lastErr {
			t.Errorf("agent %d: %s %s %q; want %s %s %q", i, a.AgentID, a.Status, lastErr, want[i].id, want[i].status, want[i].lastErr)
		}
	}
	if out, err := third.Logs(later, 1); err != nil || out != "fine ok three\n" {
		t.Errorf("logs of the agent spawned after the second host's checkpoint: %q %v", out, err)
	}
	if _, err := os.Stat(first.RunDir()); err != nil {
		t.Errorf("the first host's run is gone: %v", err)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, ".state", "runs", "*"))
	if len(runs) != 2 {
		t.Errorf("runs left: %q; want the first host's and the current one (the second held only records)", runs)
	}
}

// TestARunWrittenAfterTheCheckpointIsNotSuperseded: a run holding only
// records that ended cleanly is superseded only when it was last written
// before this host read it; one written since (here: its journal's time
// is after the start) holds what this checkpoint does not, and stays.
func TestARunWrittenAfterTheCheckpointIsNotSuperseded(t *testing.T) {
	start, dir := hostOf(t, "echo fresh")
	a := "aaaaaaaa-0000-4000-8000-000000000001"
	runDir := filepath.Join(dir, ".state", "runs", "20261130T100000Z-000001")
	at := proto.Time{Time: time.Now().Add(-time.Minute)}
	journal := writeJournal(t, runDir, dir,
		journal.Event{Time: at, Event: "record", AgentID: a, Record: &journal.AgentRecord{AgentID: a, Dir: dir, Status: proto.StatusCompleted,
			CreatedAt: at, UpdatedAt: at, LastMessage: "kept", Command: "echo a"}},
		journal.Event{Time: at, Event: "records_restored"},
		journal.Event{Event: "run_ended"})
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(journal, future, future); err != nil {
		t.Fatal(err)
	}
	s := start()
	if ls := listOf(s); len(ls) != 1 || ls[0].AgentID != a || ls[0].Status != proto.StatusCompleted {
		t.Fatalf("restored %+v", ls)
	}
	if _, err := os.Stat(runDir); err != nil {
		t.Fatalf("a run written after this host read it was removed: %v", err)
	}
}
