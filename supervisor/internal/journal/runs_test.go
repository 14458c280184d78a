package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// journalPath makes run id's folder under state and returns the path of
// its journal (not yet written).
func journalPath(t *testing.T, state, id string) string {
	t.Helper()
	folder := filepath.Join(state, "runs", id)
	if err := os.MkdirAll(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(folder, "journal.jsonl")
}

// writeRun writes a run's journal under state: the lines given as they
// are (events are encoded as a Writer does), and returns its path.
func writeRun(t *testing.T, state, id string, lines ...any) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		switch l := l.(type) {
		case string:
			b.WriteString(l)
		case Event:
			b.Write(encode(l))
		}
	}
	path := journalPath(t, state, id)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func at(s string) proto.Time {
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return proto.Time{Time: v}
}

// TestListRuns: every run's first line tells its working directory, start
// and host pid (also an older subdash's "dir …" note, none at all, and an
// agent command longer than a read buffer); runs come newest start first;
// this host's own run is left out; a first line that cannot be read or is
// not run_started is counted.
func TestListRuns(t *testing.T) {
	state := t.TempDir()
	long := strings.Repeat("x", 10_000)
	writeRun(t, state, "20261201T000000Z-aaaaaa", Event{Time: at("2026-12-01T00:00:00Z"), Event: "run_started", Dir: "/w", PID: 11, Command: long})
	writeRun(t, state, "20261203T000000Z-bbbbbb", Event{Time: at("2026-12-03T00:00:00Z"), Event: "run_started", Note: "dir /older"})
	writeRun(t, state, "20261202T000000Z-cccccc", Event{Time: at("2026-12-02T00:00:00Z"), Event: "run_started", Dir: "/w", PID: 12})
	writeRun(t, state, "20261204T000000Z-dddddd", `{"time":"2026-12-04T00:00:00.000Z","event":"run_sta`)
	writeRun(t, state, "20261205T000000Z-eeeeee", Event{Time: at("2026-12-05T00:00:00Z"), Event: "spawned"})
	writeRun(t, state, "20261130T000000Z-gggggg", Event{Time: at("2026-11-30T00:00:00Z"), Event: "run_started", PID: 13})
	mine := filepath.Join(state, "runs", "20261206T000000Z-ffffff")
	writeRun(t, state, filepath.Base(mine), Event{Time: at("2026-12-06T00:00:00Z"), Event: "run_started", Dir: "/w"})
	if err := os.WriteFile(filepath.Join(state, "runs", "not-a-run"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	rs := ListRuns(state, mine)
	if rs.Err != nil || rs.Unreadable != 2 || rs.Folder != filepath.Join(state, "runs") {
		t.Fatalf("ListRuns: %+v; want 2 unreadable and no error", rs)
	}
	var got []string
	for _, r := range rs.All {
		got = append(got, fmt.Sprintf("%s %s %s %d", filepath.Base(r.Folder()), r.WorkDir, r.Started.Format("02"), r.PID))
	}
	want := []string{"20261203T000000Z-bbbbbb /older 03 0", "20261202T000000Z-cccccc /w 02 12", "20261201T000000Z-aaaaaa /w 01 11",
		"20261130T000000Z-gggggg  30 13"}
	if !slices.Equal(got, want) {
		t.Errorf("runs %q; want %q", got, want)
	}
	if none := ListRuns(filepath.Join(state, "nowhere"), ""); none.Err != nil || len(none.All) != 0 {
		t.Errorf("a state directory without runs: %+v", none)
	}
	if err := os.Chmod(filepath.Join(state, "runs"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(state, "runs"), 0o700) //nolint:errcheck // cleanup: makes the folder removable by t.TempDir
	if os.Getuid() != 0 {
		if rs := ListRuns(state, ""); rs.Err == nil {
			t.Errorf("an unreadable runs folder: no error")
		}
	}
}

// TestReadToleratesDamage: Read hands every event in line order, skips a
// damaged line and a last line cut by a kill and names them, and passes
// over the lines of skipped events without decoding them.
func TestReadToleratesDamage(t *testing.T) {
	state := t.TempDir()
	path := writeRun(t, state, "20261201T000000Z-aaaaaa",
		Event{Event: "run_started", Dir: "/w"},
		Event{Event: "spawned", AgentID: "a"},
		"{not json\n",
		`{"time":"2026-12-01T00:00:00.000Z","event":"record","record":{not decoded`+"\n",
		Event{Event: "submission_started", AgentID: "a", SubmissionID: "s1", PID: 7},
		`{"time":"2026-12-01T00:00:01.000Z","event":"submission_en`)
	var events []string
	damaged, err := Read(path, func(ev Event) { events = append(events, ev.Event) }, "record")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"run_started", "spawned", "submission_started"}; !slices.Equal(events, want) {
		t.Errorf("events %q; want %q", events, want)
	}
	if !slices.Equal(damaged, []int{3, 6}) {
		t.Errorf("damaged lines %v; want 3 and 6 (the record line is skipped, not damaged)", damaged)
	}
	events = nil
	if damaged, _ := Read(path, func(ev Event) { events = append(events, ev.Event) }); !slices.Equal(damaged, []int{3, 4, 6}) {
		t.Errorf("damaged lines without skipping records %v; want 3, 4 and 6", damaged)
	}
	if _, err := Read(filepath.Join(state, "none"), func(Event) { t.Error("an event of a missing journal") }); !os.IsNotExist(err) {
		t.Errorf("a missing journal: %v", err)
	}
}

// TestEndedCleanlyAndUnended: a journal ending with run_ended ended
// cleanly, also after a large checkpoint; Unended names the submissions
// that started and never ended or were terminated as orphans.
func TestEndedCleanlyAndUnended(t *testing.T) {
	state := t.TempDir()
	big := &AgentRecord{AgentID: "r", LastMessage: strings.Repeat("m", 100_000)}
	clean := writeRun(t, state, "20261201T000000Z-aaaaaa",
		Event{Event: "run_started", Dir: "/w", PID: 1},
		Event{Event: "record", AgentID: "r", Record: big},
		Event{Event: "run_ended"})
	cut := writeRun(t, state, "20261202T000000Z-bbbbbb",
		Event{Event: "run_started", Dir: "/w", PID: 1},
		Event{Event: "submission_started", AgentID: "a", SubmissionID: "a1", PID: 101},
		Event{Event: "submission_started", AgentID: "b", SubmissionID: "b1", PID: 102},
		Event{Event: "submission_started", AgentID: "c", SubmissionID: "c1", PID: 103},
		Event{Event: "submission_ended", AgentID: "a", SubmissionID: "a1"},
		Event{Event: "orphan_terminated", AgentID: "c", SubmissionID: "c1"},
		`{"time":"2026-12-01T00:00:01.000Z","event":"run_end`)
	if !EndedCleanly(clean) || EndedCleanly(cut) || EndedCleanly(filepath.Join(state, "none")) {
		t.Errorf("EndedCleanly: clean %v, cut %v, missing %v; want true, false, false",
			EndedCleanly(clean), EndedCleanly(cut), EndedCleanly(filepath.Join(state, "none")))
	}
	got := Unended(Run{Journal: cut})
	if want := []Submission{{AgentID: "b", SubmissionID: "b1", PGID: 102}}; !slices.Equal(got, want) {
		t.Errorf("Unended %+v; want %+v", got, want)
	}
	if got := Unended(Run{Journal: clean}); len(got) != 0 {
		t.Errorf("Unended of a clean run: %+v", got)
	}
}

// TestWrittenIsReadNow: a run's last written time is its journal's
// modification time when asked, zero once the journal is gone.
func TestWrittenIsReadNow(t *testing.T) {
	state := t.TempDir()
	path := writeRun(t, state, "20261201T000000Z-aaaaaa", Event{Event: "run_started", Dir: "/w"})
	r := ListRuns(state, "").All[0]
	then := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(path, then, then); err != nil {
		t.Fatal(err)
	}
	if got := r.Written(); !got.Equal(then) {
		t.Errorf("Written %v; want %v", got, then)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := r.Written(); !got.IsZero() {
		t.Errorf("Written of a removed journal %v; want zero", got)
	}
}
