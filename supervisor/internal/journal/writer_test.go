package journal

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
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
