package journal

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// TestWriterAppendsLinesReadBack: what a Writer appends, one event or a
// checkpoint at once, Read hands back in order; a zero time becomes now;
// a message over 64 KiB is cut at a whole character with its length said.
func TestWriterAppendsLinesReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second)
	huge := strings.Repeat("é", maxMessage) // 2 bytes each: the cut falls inside one
	w.Write(Event{Event: "run_started", Dir: "/w"})
	w.WriteAll([]Event{{Event: "record", Record: &AgentRecord{AgentID: "a"}}, {Event: "records_restored"}})
	w.Write(Event{Event: "spawned", AgentID: "a", Message: huge})
	if !w.OK() || w.Failure() != "" {
		t.Fatalf("a healthy journal: OK %v, failure %q", w.OK(), w.Failure())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Write(Event{Event: "after close"})
	var got []Event
	if damaged, err := Read(path, func(ev Event) { got = append(got, ev) }); err != nil || damaged != nil {
		t.Fatalf("read back: damaged %v, %v", damaged, err)
	}
	if len(got) != 4 || got[1].Record == nil || got[1].Record.AgentID != "a" || got[3].Event != "spawned" {
		t.Fatalf("read back %d events: %+v", len(got), got)
	}
	for _, ev := range got {
		if ev.Time.Before(before) {
			t.Errorf("event %s has time %v; want now", ev.Event, ev.Time)
		}
	}
	msg := got[3].Message
	want := "...[truncated: " + strconv.Itoa(len(huge)) + " bytes in all]"
	if !strings.HasSuffix(msg, want) || !utf8.ValidString(msg) || len(msg) > maxMessage+len(want) {
		t.Errorf("a message of %d bytes was written as %d bytes ending %q; want at most 64 KiB of whole characters and %q",
			len(huge), len(msg), msg[max(0, len(msg)-40):], want)
	}
}

// TestWriterFailureIsReportedOnce: the first write that fails is said in
// words with the path, to the watcher once and by Failure; a watcher
// added after it gets the failure at once.
func TestWriterFailureIsReportedOnce(t *testing.T) {
	w, err := Create("/dev/full") // every write fails: ENOSPC
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer w.Close() //nolint:errcheck // /dev/full: its writes fail on purpose, the test checks what the writer reports
	told := make(chan string, 4)
	if f := w.Watch(func(msg string) { told <- msg }); f != "" {
		t.Fatalf("failure before any write: %q", f)
	}
	w.Write(Event{Event: "one"})
	w.WriteAll([]Event{{Event: "two"}, {Event: "three"}})
	want := "journal could not be written (no space left on device): /dev/full; this run's records may not be restored"
	select {
	case got := <-told:
		if got != want {
			t.Errorf("told %q; want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher was not told")
	}
	if w.Failure() != want || w.OK() {
		t.Errorf("Failure %q, OK %v; want the failure and not OK", w.Failure(), w.OK())
	}
	if got := w.Watch(func(string) { t.Error("a late watcher was called") }); got != want {
		t.Errorf("a late watcher got %q; want %q at once", got, want)
	}
	select {
	case again := <-told:
		t.Errorf("told again: %q", again)
	default:
	}
}

// TestMessageHead: a message up to 4 KiB is its own head; a longer one is
// cut at a whole character, with its length; its file is beside its log.
func TestMessageHead(t *testing.T) {
	short := strings.Repeat("a", MaxMessageHead)
	if MessageHead(short) != short {
		t.Error("a 4 KiB message is not its own head")
	}
	long := "a" + strings.Repeat("é", MaxMessageHead)
	head := MessageHead(long)
	if !utf8.ValidString(head) || !strings.HasSuffix(head, "...[truncated: "+strconv.Itoa(len(long))+" bytes in all]") {
		t.Errorf("head of %d bytes: %q…", len(long), head[len(head)-40:])
	}
	if HeadOf(long[:MaxMessageHead+1], len(long)) != head {
		t.Error("HeadOf a message's prefix differs from its MessageHead")
	}
	if got := MessagePath("/r/a/2-s.log"); got != "/r/a/2-s.msg" {
		t.Errorf("MessagePath %q", got)
	}
}

// withFileLimit runs fn with this process's files limited to n bytes
// (RLIMIT_FSIZE: a write past it writes up to it, then fails with
// "file too large", as a full disk cuts a write; Go ignores SIGXFSZ).
func withFileLimit(t *testing.T, n uint64, fn func()) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Skip("cannot read RLIMIT_FSIZE:", err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: n, Max: old.Max}); err != nil {
		t.Skip("cannot set RLIMIT_FSIZE:", err)
	}
	defer func() {
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
			t.Fatal("cannot restore RLIMIT_FSIZE:", err)
		}
	}()
	fn()
}

// TestWriterCutsAFailedWriteBack: a write that fails part way (the disk
// filled) leaves no part of its line: the record written once space is
// back is read back whole, with its task name and message, and no line
// is damaged. The failure lasts until a checkpoint writes the records
// again, which ends it.
func TestWriterCutsAFailedWriteBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() //nolint:errcheck // the test reads the file back
	told := make(chan string, 4)
	w.Watch(func(msg string) { told <- msg })
	w.Write(Event{Event: "run_started", Dir: "/w"})
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	withFileLimit(t, uint64(fi.Size())+100, func() {
		w.Write(Event{Event: "submission_ended", AgentID: "a", LastError: strings.Repeat("x", 400)})
	})
	if got := <-told; !strings.Contains(got, "journal could not be written (file too large): "+path) {
		t.Errorf("told %q", got)
	}
	if after, _ := os.Stat(path); after.Size() != fi.Size() {
		t.Errorf("the journal is %d bytes after the failed write; want %d, its last whole line", after.Size(), fi.Size())
	}
	w.Write(Event{Event: "spawned", AgentID: "b", TaskName: "after", AgentPath: "/root/after", Message: "the message after"})
	var got []Event
	damaged, err := Read(path, func(ev Event) { got = append(got, ev) })
	if err != nil || damaged != nil {
		t.Fatalf("read back: damaged lines %v, %v", damaged, err)
	}
	if len(got) != 2 || got[1].Event != "spawned" || got[1].TaskName != "after" || got[1].Message != "the message after" {
		t.Fatalf("read back %+v; want run_started and the spawned record whole", got)
	}
	if w.Failure() == "" || w.OK() {
		t.Errorf("the failure ended before a checkpoint wrote the records again: %q", w.Failure())
	}
	if !w.Due(time.Now()) {
		t.Error("a journal that missed an event and wrote again is not due for a checkpoint")
	}
	if err := w.Checkpoint(func() []Event {
		return []Event{{Event: "record", AgentID: "a", Record: &AgentRecord{AgentID: "a"}}}
	}); err != nil {
		t.Fatal(err)
	}
	if w.Failure() != "" || !w.OK() || w.Due(time.Now().Add(time.Hour)) {
		t.Errorf("after a checkpoint: failure %q, OK %v", w.Failure(), w.OK())
	}
}

// TestReadRecoversAnEventAfterACutLine: a journal written before failed
// writes were cut back holds the part of a line a full disk cut glued to
// the next event; the line is reported damaged, and the event after the
// cut is read all the same.
func TestReadRecoversAnEventAfterACutLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	body := `{"time":"2026-12-07T18:00:00Z","event":"run_started","dir":"/w"}` + "\n" +
		`{"time":"2026-12-07T18:00:01Z","event":"submission_ended","agent_id":"a","status":"err` +
		`{"time":"2026-12-07T18:00:05Z","event":"spawned","agent_id":"b","task_name":"after","agent_path":"/root/after","message":"the message after","steered":{"time":"x"}}` + "\n" +
		`{"time":"2026-12-07T18:00:06Z","event":"sent","agent_id":"b"}` + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	damaged, err := Read(path, func(ev Event) { got = append(got, ev.Event+" "+ev.TaskName+" "+ev.Message) })
	if err != nil || !slices.Equal(damaged, []int{2}) {
		t.Errorf("damaged %v, %v; want line 2", damaged, err)
	}
	want := []string{"run_started  ", "spawned after the message after", "sent  "}
	if !slices.Equal(got, want) {
		t.Errorf("read %q; want %q", got, want)
	}
}
