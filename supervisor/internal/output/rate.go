package output

import (
	"sync/atomic"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// rate counts the bytes a submission's streams read per bucket of
// proto.RateBucket, over the last proto.RateBuckets of them (SPEC §7 the
// activity column): a ring written by the feeds (feedMu held: one writer)
// and read by summaries without a lock. A reader may see one bucket
// being reset as the previous count: the sparkline is a glance, not a
// measure.
type rate struct {
	at    [proto.RateBuckets]atomic.Int64 // the bucket's index (unix time / RateBucket) + 1; 0: never written
	bytes [proto.RateBuckets]atomic.Int64
}

// add counts n bytes read at now. Call with feedMu held.
func (r *rate) add(now time.Time, n int) {
	if n <= 0 {
		return
	}
	idx := now.UnixNano()/int64(proto.RateBucket) + 1
	slot := idx % proto.RateBuckets
	if r.at[slot].Load() != idx {
		r.bytes[slot].Store(0)
		r.at[slot].Store(idx)
	}
	r.bytes[slot].Add(int64(n))
}

// Rate returns the bytes the submission's streams read per bucket over
// the last proto.RateBuckets buckets up to now, oldest first; nil when
// it read nothing in that time (an agent that is idle or ended draws no
// line).
func (o *Output) Rate(now time.Time) *proto.OutputRate {
	if o == nil {
		return nil
	}
	newest := now.UnixNano()/int64(proto.RateBucket) + 1
	var out proto.OutputRate
	some := false
	for k := int64(0); k < proto.RateBuckets; k++ {
		idx := newest - proto.RateBuckets + 1 + k
		slot := idx % proto.RateBuckets
		if o.rate.at[slot].Load() == idx {
			if b := o.rate.bytes[slot].Load(); b > 0 {
				out.Bytes[k], some = b, true
			}
		}
	}
	if !some {
		return nil
	}
	out.Newest = proto.Time{Time: time.Unix(0, (newest-1)*int64(proto.RateBucket)).UTC()}
	out.BucketSeconds = int(proto.RateBucket / time.Second)
	return &out
}
