package supervisor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestRestoredPathsAsRecorded (SPEC §10): a restored submission
// makes its log and message paths from its folder instead of holding
// them; show, the logs, the message and the next checkpoint give exactly
// the paths its record named, those where a host puts them and those of
// an older subdash elsewhere (a message file in another folder, none).
func TestRestoredPathsAsRecorded(t *testing.T) {
	start, dir := hostOf(t, "echo fresh")
	run := filepath.Join(dir, ".state", "runs", "20261130T100000Z-000001")
	id := "aaaaaaaa-0000-4000-8000-000000000001"
	folder := filepath.Join(run, id)
	odd := filepath.Join(dir, "elsewhere")
	at := time.Now().Add(-time.Hour)
	subs := []journal.SubmissionRecord{
		{ID: "s1", Seq: 1, Log: journal.LogPath(run, id, 1, "s1"), MessageFile: journal.MessagePath(journal.LogPath(run, id, 1, "s1"))},
		{ID: "s2", Seq: 2, Log: journal.LogPath(run, id, 2, "s2"), MessageFile: filepath.Join(odd, "2-s2.msg")},
		{ID: "s3", Seq: 3, Log: filepath.Join(odd, "3-s3.log")},
		{ID: "s4", Seq: 4, Log: filepath.Join(folder, "4-other.log"), MessageFile: filepath.Join(folder, "4-other.msg")},
		{ID: "s5", Seq: 5, Log: journal.LogPath(run, id, 5, "s5"), MessageFile: filepath.Join(folder, "5-s9.msg")},
		{ID: "s6", Seq: 6},
	}
	for i := range subs {
		subs[i].Message, subs[i].MessageBytes, subs[i].Status = "message "+subs[i].ID, len("message "+subs[i].ID), proto.StatusCompleted
		subs[i].StartedAt, subs[i].EndedAt = proto.Time{Time: at}, proto.Time{Time: at}
		for path, text := range map[string]string{subs[i].Log: "output of " + subs[i].ID + "\n", subs[i].MessageFile: "whole message " + subs[i].ID} {
			if path == "" {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeJournal(t, run, dir, journal.Event{Event: "record", AgentID: id, Record: &journal.AgentRecord{
		AgentID: id, Dir: dir, Status: proto.StatusCompleted, CreatedAt: proto.Time{Time: at}, UpdatedAt: proto.Time{Time: at},
		LastMessage: "message s6", Command: "true", Submissions: subs,
	}}, journal.Event{Event: "records_restored"})
	s := start()
	info, ok := s.Agent(id)
	if !ok || len(info.Submissions) != len(subs) {
		t.Fatalf("restored: %+v", info)
	}
	for i, sr := range subs {
		if got := info.Submissions[i].LogPath; got != sr.Log {
			t.Errorf("show: submission %d's log %q, want %q", sr.Seq, got, sr.Log)
		}
		if sr.Log != "" {
			if out, err := s.Logs(id, sr.Seq); err != nil || out != "output of "+sr.ID+"\n" {
				t.Errorf("logs of submission %d: %q %v", sr.Seq, out, err)
			}
		}
		want := "message " + sr.ID
		if sr.MessageFile != "" {
			want = "whole message " + sr.ID
		}
		if msg, err := s.Message(t.Context(), id, sr.Seq); err != nil || msg != want {
			t.Errorf("message of submission %d: %q %v, want %q", sr.Seq, msg, err, want)
		}
	}
	shutdownNow(t, s)
	var rec journal.AgentRecord
	if err := json.Unmarshal([]byte(checkpointOf(t, s.RunDir())[id]), &rec); err != nil || len(rec.Submissions) != len(subs) {
		t.Fatalf("checkpoint record: %+v %v", rec, err)
	}
	for i, sr := range subs {
		if got := rec.Submissions[i]; got.Log != sr.Log || got.MessageFile != sr.MessageFile {
			t.Errorf("checkpoint: submission %d's files %q %q, want %q %q", sr.Seq, got.Log, got.MessageFile, sr.Log, sr.MessageFile)
		}
	}
}
