package agenttable

import (
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// The ACTIVITY column (SPEC §7): a sparkline of the bytes an agent's
// latest submission read per bucket of proto.RateBucket over the last
// proto.RateBuckets buckets (the host counts them, Summary.OutputRate: a
// viewer draws what the host dashboard draws), oldest left. The scale is
// the same for every row, in powers of four, so rows compare across the
// table: a bucket with no output is SparkLevels[0] and any output at
// least SparkLevels[1]; a running agent that wrote nothing lately is a
// flat line, an agent that is not running and wrote nothing lately has
// an empty cell. The cell is built for the rows on screen only, from the
// snapshot and the clock: nothing per agent per tick.

// SparkLevels are the sparkline's glyphs, lowest first.
var SparkLevels = []rune("▁▂▃▄▅▆▇█")

// sparkLevel returns the level of a bucket of n bytes: 0 for none, then
// 1 below 64 bytes, 2 below 256, … 7 from 64 KiB.
func sparkLevel(n int64) int {
	if n <= 0 {
		return 0
	}
	lv := 1
	for lim := int64(64); n >= lim && lv < len(SparkLevels)-1; lim *= 4 {
		lv++
	}
	return lv
}

// Spark returns the ACTIVITY cell of agent a at now: proto.RateBuckets
// glyphs, or "" when it is not running and read nothing lately.
func Spark(a *proto.AgentInfo, now time.Time) string {
	if a.OutputRate == nil && !a.Running() {
		return ""
	}
	buckets := a.OutputRate.At(now)
	if !a.Running() && buckets == [proto.RateBuckets]int64{} {
		return "" // ended, and its last output is older than the line
	}
	var b strings.Builder
	b.Grow(len(buckets) * 3)
	for _, n := range buckets {
		b.WriteRune(SparkLevels[sparkLevel(n)])
	}
	return b.String()
}
