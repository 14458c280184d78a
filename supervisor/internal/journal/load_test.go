package journal

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// golden is where testdata/dad5536 was written (see its gen.sh): the
// journals name their working directory and logs under it.
const golden = "/tmp/subdash-golden"

// goldenState copies testdata/dad5536's runs into a state directory under
// a temporary base, the journals' paths moved there and their
// modification times set to their last line's time (git keeps no times),
// leaving out the runs named in without. It returns the base (holding
// state/ and work/).
func goldenState(t *testing.T, without ...string) string {
	t.Helper()
	base := t.TempDir()
	src := filepath.Join("testdata", "dad5536", "runs")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if contains(without, strings.Split(rel, string(filepath.Separator))[0]) {
			return nil
		}
		dst := filepath.Join(base, "state", "runs", rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if d.Name() != "journal.jsonl" {
			return os.WriteFile(dst, b, 0o600)
		}
		b = bytes.ReplaceAll(b, []byte(golden), []byte(base))
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			return err
		}
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		var last Event
		if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
			return err
		}
		return os.Chtimes(dst, last.Time.Time, last.Time.Time)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	return base
}

const (
	run1 = "20261202T070842Z-83b3bb" // a plain agent command, killed with SIGKILL
	run2 = "20261202T070845Z-189f92" // --preset builtin: restores run 1, ends cleanly
)

// TestJournalsOfTheLastReleaseRestore: the journals written by subdash at
// dad5536 (testdata/dad5536/gen.sh) replay into exactly the records,
// warnings and notes that release made of them: run 1 alone (events only,
// its host killed: a submission interrupted by the host's end, a queued
// message not run), run 1 with its last line cut by the kill, and both
// runs (run 2's checkpoint, then its events).
func TestJournalsOfTheLastReleaseRestore(t *testing.T) {
	for _, c := range []struct {
		name    string
		without []string
		cut     int
	}{
		{"run1", []string{run2}, 0},
		{"run1-cut", []string{run2}, 40},
		{"both", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := goldenState(t, c.without...)
			state := filepath.Join(base, "state")
			if c.cut > 0 {
				j := filepath.Join(state, "runs", run1, "journal.jsonl")
				fi, err := os.Stat(j)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(j, fi.Size()-int64(c.cut)); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(j, fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
			}
			ld := Load(ListRuns(state, ""), filepath.Join(base, "work"))
			got, err := json.MarshalIndent(map[string]any{"records": ld.Records, "warnings": ld.Warnings, "notes": ld.Notes}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(bytes.ReplaceAll(got, []byte(base), []byte(golden)), '\n')
			want, err := os.ReadFile(filepath.Join("testdata", "dad5536", "records-"+c.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("records of the dad5536 journals differ from what dad5536 restored:\n%s", lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff names the first lines where got differs from want.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 5; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			shown++
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want " + wl + "\n  got  " + gl + "\n")
		}
	}
	return b.String()
}

// TestLoadKeepsToItsDirectory: Load replays only the runs of its working
// directory; a run whose journal names no directory, or whose first line
// cannot be read, is said in a warning; the runs folder that cannot be
// read is said too, and nothing is restored.
func TestLoadKeepsToItsDirectory(t *testing.T) {
	state := t.TempDir()
	writeRun(t, state, "20261201T000000Z-aaaaaa", Event{Event: "run_started", Dir: "/w"},
		Event{Event: "spawned", AgentID: "a", SubmissionID: "a1", Seq: 1, Message: "mine"})
	writeRun(t, state, "20261202T000000Z-bbbbbb", Event{Event: "run_started", Dir: "/elsewhere"},
		Event{Event: "spawned", AgentID: "b", SubmissionID: "b1", Seq: 1, Message: "theirs"})
	writeRun(t, state, "20261203T000000Z-cccccc", Event{Event: "run_started", PID: 9},
		Event{Event: "spawned", AgentID: "c", SubmissionID: "c1", Seq: 1, Message: "nobody's"})
	writeRun(t, state, "20261204T000000Z-dddddd", "{torn")
	ld := Load(ListRuns(state, ""), "/w")
	if len(ld.Records) != 1 || ld.Records[0].AgentID != "a" || ld.Records[0].LastMessage != "mine" {
		t.Fatalf("records %+v; want agent a only", ld.Records)
	}
	want := "2 earlier run(s) under " + filepath.Join(state, "runs") + " have an unreadable journal (first line)"
	if len(ld.Warnings) != 1 || !strings.HasPrefix(ld.Warnings[0], want) {
		t.Errorf("warnings %q; want one starting %q", ld.Warnings, want)
	}
	broken := Load(Runs{Folder: "/state/runs", Err: os.ErrPermission}, "/w")
	if len(broken.Records) != 0 || len(broken.Warnings) != 1 ||
		broken.Warnings[0] != "cannot read earlier runs in /state/runs: permission denied; no agents were restored" {
		t.Errorf("a runs folder that cannot be read: %+v", broken)
	}
}

// TestCutStartLineKeepsTheLog: a host killed while it wrote a
// submission's submission_started line (the journal's last, cut mid-line)
// leaves the submission's log and message files in the run's folder; the
// restored submission names them (it said its log file "is gone ()").
func TestCutStartLineKeepsTheLog(t *testing.T) {
	base := goldenState(t, run2)
	const agent, sub = "44adfc38-75ca-4b3d-9d8b-627e2ab4301f", "e8753d91-452b-4b84-9239-b878c21400db"
	j := filepath.Join(base, "state", "runs", run1, "journal.jsonl")
	b, err := os.ReadFile(j)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.LastIndex(b, []byte(`"event":"submission_started","agent_id":"`+agent))
	if at < 0 {
		t.Fatal("no submission_started line of " + agent)
	}
	if err := os.WriteFile(j, b[:at+30], 0o600); err != nil {
		t.Fatal(err)
	}
	ld := Load(ListRuns(filepath.Join(base, "state"), ""), filepath.Join(base, "work"))
	want := filepath.Join(base, "state", "runs", run1, agent, "1-"+sub+".log")
	for _, r := range ld.Records {
		if r.AgentID != agent {
			continue
		}
		if len(r.Submissions) != 1 || r.Submissions[0].Log != want || r.Submissions[0].MessageFile != MessagePath(want) {
			t.Fatalf("the submission whose start line was cut: %+v\nwant log %s", r.Submissions, want)
		}
		return
	}
	t.Fatalf("agent %s not restored: %+v", agent, ld.Warnings)
}

// TestKilledHostKeepsWhatApplyReads (SPEC §10, §11, §15): a host killed
// before any checkpoint leaves only its events; every event apply reads
// is kept by readRun, so a steered message's receipt and a submission's
// changes come back (a kill -9 lost every receipt).
func TestKilledHostKeepsWhatApplyReads(t *testing.T) {
	state := t.TempDir()
	folded := proto.SteeredMessage{ID: "m1", SubmissionSeq: 1, Message: "also the tests", Receipt: proto.ReceiptFolded}
	pending := folded
	pending.Receipt = proto.ReceiptPending
	writeRun(t, state, "20261201T000000Z-aaaaaa", Event{Event: "run_started", Dir: "/w"},
		Event{Event: "spawned", AgentID: "a", SubmissionID: "a1", Seq: 1, Message: "audit"},
		Event{Event: "changes", AgentID: "a", SubmissionID: "a1", Seq: 1, Changes: &ChangesRecord{Root: "/w", From: "abc"}},
		Event{Event: "submission_started", AgentID: "a", SubmissionID: "a1", Seq: 1},
		Event{Event: "steered", AgentID: "a", SubmissionID: "a1", Seq: 1, Steered: &pending},
		Event{Event: "steer_receipt", AgentID: "a", SubmissionID: "a1", Seq: 1, Steered: &folded})
	ld := Load(ListRuns(state, ""), "/w")
	if len(ld.Records) != 1 || len(ld.Records[0].Submissions) != 1 {
		t.Fatalf("records %+v", ld.Records)
	}
	sub := ld.Records[0].Submissions[0]
	if len(sub.Steered) != 1 || sub.Steered[0].Receipt != proto.ReceiptFolded || sub.Steered[0].Message != "also the tests" {
		t.Errorf("the steered message after a kill: %+v; want it folded", sub.Steered)
	}
	if sub.Changes == nil || sub.Changes.From != "abc" {
		t.Errorf("the submission's changes after a kill: %+v", sub.Changes)
	}
}
