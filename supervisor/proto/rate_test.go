package proto

import (
	"testing"
	"time"
)

// TestOutputRateAt: a front-end shifts the host's buckets by its own
// clock, so a quiet agent's line goes flat without a new snapshot.
func TestOutputRateAt(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	r := &OutputRate{BucketSeconds: 15, Newest: Time{Time: base}, Bytes: [RateBuckets]int64{1, 2, 3, 4, 5, 6, 7, 8}}
	if got := r.At(base.Add(14 * time.Second)); got != r.Bytes {
		t.Fatalf("in the newest bucket: %v", got)
	}
	if got, want := r.At(base.Add(31*time.Second)), [RateBuckets]int64{3, 4, 5, 6, 7, 8, 0, 0}; got != want {
		t.Fatalf("two buckets later: %v, want %v", got, want)
	}
	if got := r.At(base.Add(time.Hour)); got != [RateBuckets]int64{} {
		t.Fatalf("an hour later: %v", got)
	}
	if got := r.At(base.Add(-time.Minute)); got != r.Bytes {
		t.Fatalf("a clock behind the host's: %v, want the host's buckets", got)
	}
	var none *OutputRate
	if none.At(base) != [RateBuckets]int64{} {
		t.Fatal("nil rate not zero")
	}
}
