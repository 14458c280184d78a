package mailbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// message returns a queued or held message of text, kept in a file of dir.
func message(t *testing.T, dir string, seq uint64, text string, queued bool) *Item {
	t.Helper()
	it := &Item{Seq: seq, Queued: queued, From: "/root/a", At: time.Now().UTC(), File: File(dir, seq), Head: text, Size: len(text)}
	if err := os.WriteFile(it.File, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return it
}

func seqsOf(items []*Item) []uint64 {
	var out []uint64
	for _, it := range items {
		out = append(out, it.Seq)
	}
	return out
}

// TestBox (SPEC §11, §14): items keep their order; cancel takes the newest
// message, not an end; a wait hands items over until acknowledged, and
// hands them again until then; drop and acknowledge remove the files.
func TestBox(t *testing.T) {
	dir := t.TempDir()
	var b Box
	held, queued := message(t, dir, 1, "held", false), message(t, dir, 2, "queued", true)
	b.Put(held)
	if b.HasQueued() {
		t.Error("a held message counts as queued")
	}
	b.Put(queued)
	b.Put(NewEnd(3, time.Now(), End{AgentID: "c", Path: "/root/a/c", Status: proto.TreeCompleted, Detail: "done"}))
	if !b.HasQueued() || !slices.Equal(b.Messages(), []string{"held", "queued"}) || b.Len() != 3 {
		t.Fatalf("messages %q, queued %v, %d items", b.Messages(), b.HasQueued(), b.Len())
	}
	if it := b.CancelLast(); it != queued || b.HasQueued() || !slices.Equal(seqsOf(b.Items()), []uint64{1, 3}) {
		t.Fatalf("cancel took %+v, left %v", it, seqsOf(b.Items()))
	}

	if got := seqsOf(b.HandOver()); !slices.Equal(got, []uint64{1, 3}) {
		t.Fatalf("handed over %v", got)
	}
	b.Put(message(t, dir, 4, "later", false))
	if got := seqsOf(b.HandOver()); !slices.Equal(got, []uint64{1, 3, 4}) {
		t.Fatalf("the next wait got %v; the items not acknowledged come again", got)
	}
	if rs := b.Records(); len(rs) != 3 || rs[0].Seq != 1 || rs[2].MessageFile != File(dir, 4) {
		t.Fatalf("records %+v", rs)
	}
	if gone := b.Ack(3); !slices.Equal(gone, []uint64{1, 3}) || b.Len() != 1 {
		t.Fatalf("ack 3 took %v, left %d", gone, b.Len())
	}
	if _, err := os.Stat(held.File); !os.IsNotExist(err) {
		t.Errorf("an acknowledged message's file is still there: %v", err)
	}
	b.DropAll()
	if left, _ := filepath.Glob(filepath.Join(dir, "mail-4.msg")); b.Len() != 0 || len(left) != 0 {
		t.Errorf("after DropAll: %d items, files %q", b.Len(), left)
	}
}

// TestItemRecordsRestore (SPEC §10): an item restored from its record is
// the item that was journaled; a file that is gone leaves the head.
func TestItemRecordsRestore(t *testing.T) {
	dir := t.TempDir()
	end := NewEnd(2, time.Now().UTC(), End{AgentID: "c", Path: "/root/c", Status: proto.TreeErrored, Detail: strings.Repeat("x", 5000)})
	for _, it := range []*Item{message(t, dir, 1, "queued", true), end} {
		got := ItemOf(*it.Record())
		if *got.Record() != *it.Record() || got.Text != it.Text || (it.End != nil) != (got.End != nil) {
			t.Errorf("restored %+v, journaled %+v", got, it)
		}
	}
	if end.Answer("/root").Text != proto.FormatEnd("/root/c", proto.TreeErrored, strings.Repeat("x", 5000)) {
		t.Error("an end is not handed over whole")
	}

	gone := message(t, dir, 3, "short", false)
	_ = os.Remove(gone.File)
	gone.Adopt(filepath.Join(dir, "next"))
	if gone.File != "" || gone.Text != "short" {
		t.Errorf("an item whose file is gone: %+v", gone)
	}
	moved := message(t, dir, 4, "moved", false)
	moved.Adopt(filepath.Join(dir, "next"))
	if b, err := os.ReadFile(moved.File); err != nil || string(b) != "moved" || filepath.Dir(moved.File) != filepath.Join(dir, "next") {
		t.Errorf("adopted to %s: %q %v", moved.File, b, err)
	}
}
