package output

import (
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
)

// TestRateCountsPerBucket: the bytes read go to the bucket of their time,
// the oldest bucket drops out as time passes, a slot is reused for a
// later bucket, and nothing read lately is nil.
func TestRateCountsPerBucket(t *testing.T) {
	o := New(Options{MaxLines: 10})
	base := time.Unix(1_800_000_000, 0) // a whole multiple of 15 s
	o.rate.add(base, 100)
	o.rate.add(base.Add(14*time.Second), 50)
	o.rate.add(base.Add(30*time.Second), 7)
	r := o.Rate(base.Add(31 * time.Second))
	if r == nil || r.BucketSeconds != 15 || !r.Newest.Equal(base.Add(30*time.Second)) {
		t.Fatalf("rate %+v", r)
	}
	if want := [proto.RateBuckets]int64{0, 0, 0, 0, 0, 150, 0, 7}; r.Bytes != want {
		t.Fatalf("bytes %v, want %v", r.Bytes, want)
	}
	// Eight buckets later the first slot holds a new bucket: not summed
	// with the old one.
	o.rate.add(base.Add(proto.RateBuckets*proto.RateBucket), 9)
	r = o.Rate(base.Add(proto.RateBuckets * proto.RateBucket))
	if want := [proto.RateBuckets]int64{0, 7, 0, 0, 0, 0, 0, 9}; r.Bytes != want {
		t.Fatalf("bytes after a lap %v, want %v (the 150 is older than 2 minutes, its slot holds the 9)", r.Bytes, want)
	}
	if r := o.Rate(base.Add(10 * time.Minute)); r != nil {
		t.Fatalf("nothing read in the last 2 minutes: %+v, want nil", r)
	}
	var none *Output
	if none.Rate(base) != nil {
		t.Fatal("a nil output has a rate")
	}
}

// TestRateOfFeeds: what Feed reads is counted now.
func TestRateOfFeeds(t *testing.T) {
	o := New(Options{MaxLines: 10})
	o.Feed(runner.Stdout, []byte("hello\n"))
	o.Feed(runner.Stderr, []byte("oops\n"))
	r := o.Rate(time.Now())
	if r == nil {
		t.Fatal("no rate after two feeds")
	}
	sum := int64(0)
	for _, b := range r.Bytes {
		sum += b
	}
	if sum != 11 {
		t.Fatalf("counted %d bytes, want 11", sum)
	}
}
