package proto

import "time"

// RateBucket and RateBuckets shape OutputRate: the bytes of output per
// 15 seconds over the last 2 minutes (SPEC §7 the activity column).
const (
	RateBucket  = 15 * time.Second
	RateBuckets = 8
)

// OutputRate is how much output an agent's latest submission read
// recently (Summary.OutputRate, FeatureOutputRate): the bytes its stdout
// and stderr read in each bucket of BucketSeconds, oldest first, the
// last being the bucket that starts at Newest (buckets start at whole
// multiples of BucketSeconds since the Unix epoch). A front-end shifts
// it by its own clock: a bucket after Newest read nothing.
type OutputRate struct {
	BucketSeconds int                `json:"bucket_seconds"`
	Newest        Time               `json:"newest"`
	Bytes         [RateBuckets]int64 `json:"bytes"`
}

// At returns the bytes per bucket of the RateBuckets buckets up to the
// one holding now, oldest first: r's shifted by the buckets that passed
// since Newest (nil r: all zero).
func (r *OutputRate) At(now time.Time) (out [RateBuckets]int64) {
	if r == nil || r.BucketSeconds <= 0 {
		return out
	}
	b := time.Duration(r.BucketSeconds) * time.Second
	shift := now.UnixNano()/int64(b) - r.Newest.UnixNano()/int64(b)
	if shift < 0 {
		shift = 0 // the host's clock is ahead of ours: as it sent it
	}
	for k := int64(0); k+shift < RateBuckets; k++ {
		out[k] = r.Bytes[k+shift]
	}
	return out
}
