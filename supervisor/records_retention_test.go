package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestLogRetention: at start, runs of this directory older than
// --log-retention are removed, saying how much was freed; a run holding a
// log of a restored agent, a run of another directory and a recent run
// stay.
func TestLogRetention(t *testing.T) {
	start, dir := hostOf(t, "echo kept")
	runs := filepath.Join(dir, ".state", "runs")
	old := time.Now().Add(-40 * 24 * time.Hour)
	age := func(journal string) {
		if err := os.Chtimes(journal, old, old); err != nil {
			t.Fatal(err)
		}
	}
	// an old run of this directory, with a 1 MB log
	gone := filepath.Join(runs, "20261001T000000Z-000001")
	j := writeJournal(t, gone, dir)
	if err := os.WriteFile(filepath.Join(gone, "big.log"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	age(j)
	// an old run of another directory
	other := filepath.Join(runs, "20261001T000000Z-000002")
	age(writeJournal(t, other, "/another/dir"))
	// an old run holding the log of an agent updated yesterday
	held := filepath.Join(runs, "20261001T000000Z-000003")
	age(writeJournal(t, held, dir))
	writeJournal(t, filepath.Join(runs, "20261130T000000Z-000004"), dir, journal.Event{Event: "record", Record: &journal.AgentRecord{
		AgentID: "eeeeeeee-0000-4000-8000-000000000005", Dir: dir, Status: proto.StatusCompleted,
		CreatedAt: proto.Time{Time: old}, UpdatedAt: proto.Time{Time: time.Now().Add(-24 * time.Hour)}, LastMessage: "long-lived", Command: "true",
		Submissions: []journal.SubmissionRecord{{ID: "s1", Seq: 1, Log: filepath.Join(held, "eeeeeeee-0000-4000-8000-000000000005", "1-s1.log"), Status: proto.StatusCompleted}},
	}}, journal.Event{Event: "records_restored"})

	s := start()
	for path, want := range map[string]bool{gone: false, other: true, held: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(path), err == nil, want)
		}
	}
	note := strings.Join(s.Config().Notes, "\n")
	if !strings.Contains(note, "removed 1 run(s) older than 30 days (--log-retention) from "+runs+": 1.0 MB freed") {
		t.Errorf("notes: %s", note)
	}
	st, _ := s.Storage(t.Context())
	if st.RunsDir != runs || st.Runs != 4 || st.Freed < 1<<20 || st.Removed != 1 || st.Bytes == 0 {
		t.Errorf("storage: %+v", st)
	}
	shutdownNow(t, s)
	if keepAll := start(func(c *Config) { c.LogRetention = 0 }); len(keepAll.Config().Notes) > 1 {
		t.Errorf("--log-retention 0 removed something: %q", keepAll.Config().Notes)
	}
}

// TestQueuedMessageIsNotRunAfterTheHostEnded: a message queued (SPEC §11)
// when the host ended is not run by the next host, and a note says so.
func TestQueuedMessageIsNotRunAfterTheHostEnded(t *testing.T) {
	start, dir := hostOf(t, "echo fresh")
	a := "aaaaaaaa-0000-4000-8000-000000000001"
	writeJournal(t, filepath.Join(dir, ".state", "runs", "20261130T100000Z-000001"), dir,
		journal.Event{Event: "spawned", AgentID: a, SubmissionID: "a1", Seq: 1, Message: "first", Command: "echo a"},
		journal.Event{Event: "submission_started", AgentID: a, SubmissionID: "a1", Seq: 1},
		journal.Event{Event: "queued", AgentID: a, Message: "the queued one\nsecond line"})
	s := start()
	info, ok := s.Agent(a)
	if !ok || len(info.Submissions) != 1 || info.Status != proto.StatusErrored {
		t.Fatalf("restored: %+v", info)
	}
	note := strings.Join(s.Config().Notes, "\n")
	if !strings.Contains(note, `agent aaaaaaaa had a message queued when its host ended; it was not run (send it again if it is still wanted): "the queued one"`) {
		t.Errorf("notes: %s", note)
	}
}

// TestRunsHoldingOnlyRecordsAreSuperseded: a start that runs nothing
// leaves a run holding only its checkpoint; the next start, whose own
// checkpoint carries the same records, removes it, so starting often does
// not pile up copies of the records. Runs with logs stay.
func TestRunsHoldingOnlyRecordsAreSuperseded(t *testing.T) {
	start, dir := hostOf(t, script)
	s1, id := finishedRun(t, start, "ok")
	s2 := start()
	shutdownNow(t, s2)
	s3 := start()
	runs, _ := filepath.Glob(filepath.Join(dir, ".state", "runs", "*"))
	if len(runs) != 2 || runs[0] != s1.RunDir() && runs[1] != s1.RunDir() {
		t.Fatalf("runs left: %q; want the first run (logs) and the current one", runs)
	}
	if _, err := statFile(s2.RunDir()); err == nil {
		t.Fatal("the run that held only records is still there")
	}
	if out, err := s3.Logs(id, 1); err != nil || out != "fine ok\n" {
		t.Fatalf("logs after the cleanup: %q %v", out, err)
	}
}

// TestUnwritableStateDir: a state directory whose runs cannot be created
// still lets the host start, with the run in a fallback folder and a
// warning; earlier records are restored from the state directory.
func TestUnwritableStateDir(t *testing.T) {
	start, dir := hostOf(t, script)
	finishedRun(t, start, "ok")
	runs := filepath.Join(dir, ".state", "runs")
	if err := os.Chmod(runs, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(runs, 0o700) //nolint:errcheck // cleanup: makes the folder removable by t.TempDir
	if probe := filepath.Join(runs, "probe"); os.Mkdir(probe, 0o700) == nil {
		os.Remove(probe) //nolint:errcheck // the probe of a test that skips
		t.Skip("running as root: a read-only folder is writable to root")
	}
	s := start()
	if !strings.Contains(strings.Join(s.Config().Warnings, "\n"), "is not writable") {
		t.Errorf("no warning about the state directory: %q", s.Config().Warnings)
	}
	if len(listOf(s)) != 1 {
		t.Fatal("the record was not restored from a read-only state directory")
	}
	n := spawn(t, s, "ok new")
	if d := waitFinal(t, s, n); d.Status != proto.StatusCompleted {
		t.Fatalf("spawn with an unwritable state dir: %s", d.Status)
	}
	if !strings.HasPrefix(s.RunDir(), os.TempDir()) {
		t.Errorf("run dir %s is not in the fallback", s.RunDir())
	}
	os.RemoveAll(filepath.Dir(filepath.Dir(s.RunDir()))) //nolint:errcheck // cleanup of the fallback folder outside t.TempDir
}

// TestStateDirRunsIsAFile: as TestUnwritableStateDir, for root too.
func TestStateDirRunsIsAFile(t *testing.T) {
	start, dir := hostOf(t, "echo hi")
	if err := os.MkdirAll(filepath.Join(dir, ".state"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".state", "runs"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := start()
	defer os.RemoveAll(filepath.Dir(filepath.Dir(s.RunDir()))) //nolint:errcheck // cleanup of the fallback folder outside t.TempDir
	warn := strings.Join(s.Config().Warnings, "\n")
	if !strings.Contains(warn, "is not writable") || !strings.Contains(warn, "cannot read earlier runs") {
		t.Errorf("warnings: %s", warn)
	}
	if d := waitFinal(t, s, spawn(t, s, "x")); d.Status != proto.StatusCompleted {
		t.Fatalf("spawn: %s", d.Status)
	}
}

// TestEmptyRunsLeftByAFullDiskAreRemoved: run folders a host
// left with an empty or headless journal, or none (it could not write on a
// full disk), hold nothing: the next start removes them, saying so once,
// and warns of no unreadable journal; a headless journal beside logs is
// still warned of and kept, and a folder made a moment ago (a host
// starting now) is left alone (both counted as unreadable).
func TestEmptyRunsLeftByAFullDiskAreRemoved(t *testing.T) {
	start, dir := hostOf(t, "echo kept")
	runs := filepath.Join(dir, ".state", "runs")
	old := time.Now().Add(-10 * time.Minute)
	mk := func(name, journal string, withLog bool) string {
		t.Helper()
		folder := filepath.Join(runs, name)
		if err := os.MkdirAll(folder, 0o700); err != nil {
			t.Fatal(err)
		}
		if journal != "-" {
			if err := os.WriteFile(filepath.Join(folder, "journal.jsonl"), []byte(journal), 0o600); err != nil {
				t.Fatal(err)
			}
			_ = os.Chtimes(filepath.Join(folder, "journal.jsonl"), old, old)
		}
		if withLog {
			if err := os.WriteFile(filepath.Join(folder, "1-x.log"), []byte("output"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_ = os.Chtimes(folder, old, old)
		return folder
	}
	empty := mk("20261201T000000Z-000001", "", false)
	headless := mk("20261201T000000Z-000002", `{"time":"2026-12-01T00:00:00Z","ev`, false)
	none := mk("20261201T000000Z-000003", "-", false)
	withLogs := mk("20261201T000000Z-000004", "", true)
	fresh := filepath.Join(runs, "20261201T000000Z-000005")
	if err := os.MkdirAll(fresh, 0o700); err != nil {
		t.Fatal(err)
	}
	s := start()
	for path, want := range map[string]bool{empty: false, headless: false, none: false, withLogs: true, fresh: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(path), err == nil, want)
		}
	}
	cfg := s.Config()
	if note := strings.Join(cfg.Notes, "\n"); !strings.Contains(note, "removed 3 empty run folder(s) from "+runs) {
		t.Errorf("notes: %s", note)
	}
	if warn := strings.Join(cfg.Warnings, "\n"); !strings.Contains(warn, "2 earlier run(s) under "+runs+" have an unreadable journal") {
		t.Errorf("warnings: %s", warn)
	}
}
