package steer

import (
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// The receipts as claude's stream places them (notes/claude-steer.md):
// an echo before the turn's result is folded; an echo after a result
// (it came with the next turn) is next_turn; stdin may close at a result
// only when nothing is pending; what is pending at the end is
// not_delivered, and a message cannot be added once stdin closes.
func TestBookReceipts(t *testing.T) {
	now := time.Now()
	var b Book
	b.Add("a", 1, "fold me", now)
	if sm, ok := b.Echo("a", now); !ok || sm.Receipt != proto.ReceiptFolded {
		t.Fatalf("echo before a result: %+v %v", sm, ok)
	}
	b.Add("b", 1, "next turn", now)
	if closeNow, _ := b.Result(now); closeNow {
		t.Fatal("stdin may not close while b is pending")
	}
	if sm, ok := b.Echo("b", now); !ok || sm.Receipt != proto.ReceiptNextTurn {
		t.Fatalf("echo after a result: %+v %v", sm, ok)
	}
	if _, ok := b.Echo("b", now); ok {
		t.Fatal("a second echo of b changed its receipt")
	}
	if closeNow, _ := b.Result(now); !closeNow {
		t.Fatal("nothing pending: stdin should close")
	}
	b.Close()
	if b.Add("c", 1, "late", now) {
		t.Fatal("Add after Close")
	}
	var e Book
	e.Add("x", 2, "never taken", now)
	got := e.End("the submission ended first", now)
	if len(got) != 1 || got[0].Receipt != proto.ReceiptNotDelivered || got[0].Note != "the submission ended first" || got[0].SubmissionSeq != 2 {
		t.Fatalf("End: %+v", got)
	}
}

// Without an echo, a message written two results ago had a turn of its
// own: next_turn by the count of results, so stdin is not held open for
// ever.
func TestBookFallbackOnResults(t *testing.T) {
	now := time.Now()
	var b Book
	b.Add("a", 1, "no echo", now)
	if closeNow, taken := b.Result(now); closeNow || len(taken) != 0 {
		t.Fatalf("first result: close %v taken %+v", closeNow, taken)
	}
	closeNow, taken := b.Result(now)
	if !closeNow || len(taken) != 1 || taken[0].Receipt != proto.ReceiptNextTurn {
		t.Fatalf("second result: close %v taken %+v", closeNow, taken)
	}
}
