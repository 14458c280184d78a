package supervisor

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestRestoredStringsPacked: a restored agent keeps the strings
// of its record (ids, messages, answer, error, session, the tree, its
// submissions' folder, commands and signals) in one string of its own,
// back to back, not the decoder's one per field among the record's
// garbage, and the record it writes next is the one it was read from.
func TestRestoredStringsPacked(t *testing.T) {
	run := filepath.Join(t.TempDir(), "runs", "20261130T100000Z-000001")
	id := "aaaaaaaa-0000-4000-8000-000000000001"
	at := proto.Time{Time: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	answer, oops, killed := "the answer", "it failed", "exit 1: it failed"
	code := 1
	r := &journal.AgentRecord{AgentID: id, Dir: "/w", Status: proto.StatusErrored, CreatedAt: at, UpdatedAt: at,
		LastMessage: "message s3", LastOutput: &answer, LastError: &oops, SessionID: "session-1", Command: "agent --go",
		Runner: "local", TaskName: "fix", AgentPath: "/root/fix", ParentID: "bbbbbbbb", Session: "mcp-1", ClosedBy: "cccccccc"}
	for i, sid := range []string{"s1", "s2", "s3"} {
		log := journal.LogPath(run, id, i+1, sid)
		sr := journal.SubmissionRecord{ID: sid, Seq: i + 1, Message: "message " + sid, MessageBytes: 10, MessageFile: journal.MessagePath(log),
			Command: "agent --go", Log: log, StartedAt: at, EndedAt: at, Status: proto.StatusCompleted}
		if i == 2 {
			sr.Command, sr.Status, sr.ExitCode, sr.Signal, sr.LastError = "agent --other", proto.StatusErrored, &code, "SIGTERM", &killed
			sr.Log, sr.MessageFile = "/elsewhere/3.log", "" // an older subdash's
		}
		r.Submissions = append(r.Submissions, sr)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var read journal.AgentRecord // as a restore reads it: the decoder's strings
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	a := agentOf(&read, Config{})
	kept := []string{a.id, a.lastMessage, a.sessionID, a.command, a.taskName, a.path, a.parentID, a.session, a.closedBy, *a.lastOutput, *a.lastError}
	for _, sub := range a.subs {
		kept = append(kept, sub.id, sub.message, sub.signal, sub.folder, sub.command)
		if sub.lastError != nil {
			kept = append(kept, *sub.lastError)
		}
	}
	lo, hi, n := uintptr(0), uintptr(0), uintptr(0)
	seen := map[uintptr]bool{}
	for _, v := range kept {
		if v == "" {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(v)))
		if seen[p] {
			continue // shared: the folder of two submissions, a command
		}
		seen[p] = true
		if lo == 0 || p < lo {
			lo = p
		}
		hi, n = max(hi, p+uintptr(len(v))), n+uintptr(len(v))
	}
	if hi-lo != n {
		t.Errorf("the restored agent's %d strings (%d bytes) span %d bytes; want them back to back in one", len(seen), n, hi-lo)
	}
	if a.subs[0].folder != a.subs[1].folder || unsafe.StringData(a.subs[0].folder) != unsafe.StringData(a.subs[1].folder) {
		t.Errorf("the folders of submissions 1 and 2: %q, %q; want one string", a.subs[0].folder, a.subs[1].folder)
	}
	s := &Supervisor{cfg: Config{Dir: "/w"}}
	if got := s.recordLocked(a); !reflect.DeepEqual(*got, *r) {
		g, _ := json.Marshal(got)
		t.Errorf("the record the restored agent writes\n%s\nwant the one read\n%s", g, b)
	}
}
