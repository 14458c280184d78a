package journal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// checkpoint writes, as a host's restore does, a run of dir at state
// holding a checkpoint of records (each passed through Carry against an
// equal copy of itself, unless it is in changed) and returns its journal.
func checkpoint(t *testing.T, state, dir, id string, records []*AgentRecord, changed map[string]*AgentRecord) string {
	t.Helper()
	path := journalPath(t, state, id)
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	now := proto.Time{Time: time.Now()}
	w.Write(Event{Time: now, Event: "run_started", Dir: dir})
	var evs []Event
	for _, r := range records {
		same := *r
		same.src = nil
		rec := &same
		if c := changed[r.AgentID]; c != nil {
			rec = c
		}
		evs = append(evs, Event{Time: now, Event: "record", AgentID: r.AgentID, Record: Carry(r, rec)})
	}
	w.WriteAll(append(evs, Event{Event: "records_restored"}))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// plain returns the records as the journal writes them (times to the
// millisecond), for comparing.
func plain(rs []*AgentRecord) string {
	b, err := json.MarshalIndent(rs, "", " ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestCarriedCheckpointRestoresTheSame (SPEC §10): the dad5536 journals
// (run 2's checkpoint, then its events, a submission its host's end
// interrupted, a child's end in its parent's mailbox) replayed, then
// carried into a new checkpoint: that checkpoint alone restores exactly
// the same records. The records the events changed are encoded, the
// others' bytes are those of run 2's checkpoint.
func TestCarriedCheckpointRestoresTheSame(t *testing.T) {
	base := goldenState(t)
	state, work := filepath.Join(base, "state"), filepath.Join(base, "work")
	ld := Load(ListRuns(state, ""), work)
	if len(ld.Records) == 0 {
		t.Fatal("nothing restored from the dad5536 journals")
	}
	carried := 0
	for _, r := range ld.Records {
		if r.src != nil {
			carried++
		}
	}
	if carried == 0 || carried == len(ld.Records) {
		t.Fatalf("%d of %d records keep their checkpoint's bytes; the journals hold both kinds", carried, len(ld.Records))
	}
	path := checkpoint(t, state, work, "20270101T000000Z-carry1", ld.Records, nil)
	for _, r := range ListRuns(state, "").All {
		if r.Journal != path {
			if err := os.RemoveAll(r.Folder()); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Each record line is read from run 2's journal or encoded: it is
	// gone now, and the new checkpoint restores the same.
	again := Load(ListRuns(state, ""), work)
	if got, want := plain(again.Records), plain(ld.Records); got != want {
		t.Errorf("the carried checkpoint restores what differs:\n%s", lineDiff(want, got))
	}
	if len(again.Warnings) != 0 {
		t.Errorf("warnings %q", again.Warnings)
	}
}

// TestCarryCopiesOnlyWhatIsUnchanged: a record equal to what was read is
// copied from the journal it was read from (the bytes of its line's
// record, under the new line's time); one the host changed is encoded
// and restores changed; a record whose journal is gone is encoded.
func TestCarryCopiesOnlyWhatIsUnchanged(t *testing.T) {
	state := t.TempDir()
	out := "done"
	rec := func(id, msg string) *AgentRecord {
		return &AgentRecord{AgentID: id, Dir: "/w", Status: proto.StatusCompleted, LastMessage: msg, LastOutput: &out,
			AgentPath: "/root/" + id, Runner: "local", Submissions: []SubmissionRecord{{ID: id + "1", Seq: 1, Message: msg,
				MessageBytes: len(msg), Status: proto.StatusCompleted, Log: "/s/" + id + ".log",
				StartedAt: at("2026-12-01T00:00:00Z"), EndedAt: at("2026-12-01T00:00:01Z")}}}
	}
	// An older writer's spacing and key order: copied as they are.
	old := `{"time":"2026-12-01T00:00:01Z","event":"record","agent_id":"a","record":{"agent_id":"a", "dir":"/w","status":"completed","last_message":"one \"}{\" brace","last_output":"done","runner":"local","agent_path":"/root/a","usage":{"input_tokens":0,"output_tokens":0,"cost_usd":0},"submissions":[{"id":"a1","seq":1,"message":"one \"}{\" brace","message_bytes":13,"status":"completed","log":"/s/a.log","started_at":"2026-12-01T00:00:00Z","ended_at":"2026-12-01T00:00:01Z"}],"created_at":null,"updated_at":null}}` + "\n"
	first := writeRun(t, state, "20261201T000000Z-aaaaaa", Event{Time: at("2026-12-01T00:00:00Z"), Event: "run_started", Dir: "/w"}, old,
		Event{Time: at("2026-12-01T00:00:01Z"), Event: "record", AgentID: "b", Record: rec("b", "two")},
		Event{Time: at("2026-12-01T00:00:01Z"), Event: "records_restored"})
	ld := Load(ListRuns(state, ""), "/w")
	if len(ld.Records) != 2 || ld.Records[0].src == nil || ld.Records[1].src == nil {
		t.Fatalf("records %+v", ld.Records)
	}
	if ld.Records[0].LastMessage != `one "}{" brace` {
		t.Fatalf("record a: %+v", ld.Records[0])
	}
	b := *ld.Records[1]
	b.src, b.Status, b.BeforeClose = nil, proto.StatusClosed, proto.StatusCompleted
	if Carry(ld.Records[1], &b) != &b || Carry(ld.Records[0], nil) != nil {
		t.Fatal("Carry kept a record that changed")
	}
	second := checkpoint(t, state, "/w", "20261202T000000Z-bbbbbb", ld.Records, map[string]*AgentRecord{"b": &b})
	lines, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	raw := old[strings.Index(old, `"record":{`)+len(`"record":`) : len(old)-2]
	l := strings.Split(string(lines), "\n")
	if len(l) != 5 || !strings.HasSuffix(l[1], `"event":"record","agent_id":"a","record":`+raw+"}") || strings.HasPrefix(l[1], `{"time":"2026-12-01`) {
		t.Errorf("record a's line %q\nwant its record copied: %s", l[1], raw)
	}
	if !strings.Contains(l[2], `"status":"closed","before_close":"completed"`) {
		t.Errorf("record b's line %q; want it encoded, closed", l[2])
	}
	if err := os.RemoveAll(filepath.Dir(first)); err != nil {
		t.Fatal(err)
	}
	again := Load(ListRuns(state, ""), "/w")
	want := plain([]*AgentRecord{ld.Records[0], &b})
	if got := plain(again.Records); got != want {
		t.Errorf("restored from the carried checkpoint, what differs:\n%s", lineDiff(want, got))
	}
	// Its source gone (the run removed), a record is encoded.
	third := checkpoint(t, state, "/w", "20261203T000000Z-cccccc", ld.Records[:1], nil)
	lines, err = os.ReadFile(third)
	if err != nil {
		t.Fatal(err)
	}
	if l := strings.Split(string(lines), "\n"); !strings.Contains(l[1], `"record":{"agent_id":"a","dir":"/w","status":"completed"`) {
		t.Errorf("record a's line with its journal gone %q; want it encoded", l[1])
	}
}

// TestValueOf: the span of a line's own key, not a key of an object it
// holds, nor one inside a string.
func TestValueOf(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"record":{"a":1}}`, `{"a":1}`},
		{`{"x":{"record":2},"record":[1,{"b":"]"}]}`, `[1,{"b":"]"}]`},
		{`{"x":"\",\"record\":3","record":true}`, `true`},
		{` { "time" : "t" , "record" : {"n":"}\\"} } ` + "\n", `{"n":"}\\"}`},
		{`{"record":12.5e3}`, `12.5e3`},
		{`{"x":"a\\\"b\\","record":"\\\\"}`, `"\\\\"`},
		{`{"x":1}`, ``},
		{`{"x":`, ``},
	} {
		s, e, ok := valueOf([]byte(c.line), "record")
		got := ""
		if ok {
			got = c.line[s:e]
		}
		if got != c.want || ok != (c.want != "") {
			t.Errorf("valueOf(%q) = %q, %v; want %q", c.line, got, ok, c.want)
		}
	}
}

// TestChangedAfterItsCheckpointIsNotCarried: every change replay makes
// to a record read from a checkpoint (an event of the run after it, the
// end of its host interrupting a submission, a child's end put in the
// parent's mailbox) is in the checkpoint carried from it: none is copied
// from the old line.
func TestChangedAfterItsCheckpointIsNotCarried(t *testing.T) {
	state := t.TempDir()
	t0 := at("2026-12-01T00:00:00Z")
	tt := func(s int) proto.Time { return proto.Time{Time: t0.Add(time.Duration(s) * time.Second)} }
	ended := func(id string) *AgentRecord {
		return &AgentRecord{AgentID: id, Dir: "/w", Status: proto.StatusCompleted, AgentPath: "/root/" + id, Runner: "local",
			CreatedAt: tt(0), UpdatedAt: tt(1), Submissions: []SubmissionRecord{{ID: id + "1", Seq: 1, Message: "m",
				MessageBytes: 1, Status: proto.StatusCompleted, StartedAt: tt(0), EndedAt: tt(1)}}}
	}
	running := ended("run")
	running.Status, running.Submissions[0].Status, running.Submissions[0].EndedAt = proto.StatusRunning, proto.StatusRunning, proto.Time{}
	child := ended("child")
	child.AgentPath, child.ParentID = "/root/parent/child", "parent"
	child.Status, child.Submissions[0].Status, child.Submissions[0].EndedAt = proto.StatusRunning, proto.StatusRunning, proto.Time{}
	code := 0
	writeRun(t, state, "20261201T000000Z-aaaaaa", Event{Time: tt(0), Event: "run_started", Dir: "/w"},
		Event{Time: tt(2), Event: "record", AgentID: "sent", Record: ended("sent")},
		Event{Time: tt(2), Event: "record", AgentID: "closed", Record: ended("closed")},
		Event{Time: tt(2), Event: "record", AgentID: "same", Record: ended("same")},
		Event{Time: tt(2), Event: "record", AgentID: "run", Record: running},
		Event{Time: tt(2), Event: "record", AgentID: "parent", Record: ended("parent")},
		Event{Time: tt(2), Event: "record", AgentID: "child", Record: child},
		Event{Time: tt(2), Event: "records_restored"},
		Event{Time: tt(3), Event: "sent", AgentID: "sent", SubmissionID: "sent2", Seq: 2, Message: "again"},
		Event{Time: tt(4), Event: "submission_ended", AgentID: "sent", SubmissionID: "sent2", Seq: 2, Status: proto.StatusCompleted, ExitCode: &code},
		Event{Time: tt(5), Event: "closed", AgentID: "closed"})
	ld := Load(ListRuns(state, ""), "/w")
	if len(ld.Records) != 6 {
		t.Fatalf("records %+v", ld.Records)
	}
	want := map[string]bool{"same": true}
	for _, r := range ld.Records {
		if (r.src != nil) != want[r.AgentID] {
			t.Errorf("record %s keeps its checkpoint's bytes: %v; want %v", r.AgentID, r.src != nil, want[r.AgentID])
		}
	}
	checkpoint(t, state, "/w", "20261202T000000Z-bbbbbb", ld.Records, nil)
	if err := os.RemoveAll(filepath.Join(state, "runs", "20261201T000000Z-aaaaaa")); err != nil {
		t.Fatal(err)
	}
	again := Load(ListRuns(state, ""), "/w")
	if got, want := plain(again.Records), plain(ld.Records); got != want {
		t.Errorf("the carried checkpoint restores what differs:\n%s", lineDiff(want, got))
	}
}
