package proto

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Storage says where the logs are and how much space they take.
type Storage struct {
	// RunsDir is the folder of every run's logs and journal:
	// <state-dir>/runs.
	RunsDir string `json:"runs_dir"`
	// Bytes is the space the files under RunsDir take, in bytes.
	Bytes int64 `json:"bytes"`
	// Runs is the number of runs under RunsDir.
	Runs int `json:"runs"`
	// Retention is --log-retention; 0 keeps every run. RetentionDays is
	// the same in days, for JSON; decoding sets Retention from it.
	Retention     time.Duration `json:"-"`
	RetentionDays float64       `json:"retention_days"`
	// Freed is what the retention removed at start, in bytes, in Removed
	// runs.
	Freed   int64 `json:"freed_bytes"`
	Removed int   `json:"removed_runs"`
}

// storageFields is Storage without its methods, for decoding.
type storageFields Storage

// UnmarshalJSON decodes a Storage and sets Retention from retention_days:
// a viewer learns its host's --log-retention from /v1/info (it showed
// "kept until removed by hand" for every host).
func (s *Storage) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*storageFields)(s)); err != nil {
		return err
	}
	s.Retention = time.Duration(math.Round(s.RetentionDays * float64(24*time.Hour)))
	return nil
}

// FormatBytes writes n bytes for people: "512 B", "3.4 kB", "12.3 MB",
// "1.2 GB".
func FormatBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// FormatSize writes a size given in binary units as a flag takes it:
// "10MiB", "1GiB", "64KiB" when it is a whole number of one, else its
// bytes ("1000"); 0 is "0". FormatBytes is for amounts read by people.
func FormatSize(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.unit
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseSize parses a size in binary units as --max-log-size takes it (SPEC §5): a
// number of bytes, or of KiB, MiB, GiB or TiB, written "10MiB" or "10M"
// (case ignored, "B" after the letter allowed: 10MB is 10 MiB too, as
// binary units throughout), a decimal fraction allowed ("1.5G"). The error
// says how to write one.
func ParseSize(v string) (int64, error) {
	s := strings.ToUpper(strings.TrimSpace(v))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "I")
	mult := int64(1)
	if n := len(s); n > 0 {
		if i := strings.IndexByte("KMGT", s[n-1]); i >= 0 {
			mult, s = int64(1)<<(10*(i+1)), strings.TrimSpace(s[:n-1])
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size: give bytes or binary units (10MiB, 10M, 1GiB, 0 for none)", v)
	}
	return int64(f * float64(mult)), nil
}

// FormatDuration writes d in days when it is a whole number of days ("7
// days"), else as time.Duration does; 0 is "0".
func FormatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == 0:
		return "0"
	case d%day == 0 && d/day == 1:
		return "1 day"
	case d%day == 0:
		return fmt.Sprintf("%d days", d/day)
	}
	return d.String()
}

// LogGap is a run of a submission's output its log files do not hold
// (SPEC §5), as the raw log says it beside the bytes (LogGapsHeader).
type LogGap struct {
	// At is where it is in the raw log: the bytes before it.
	At int64 `json:"at"`
	// Bytes is how many bytes of the child's output are missing there.
	Bytes int64 `json:"bytes"`
	// Cap: --max-log-size dropped them; LowSpace: they were not written
	// while free space was below the floor. Both may be set.
	Cap      bool `json:"cap,omitempty"`
	LowSpace bool `json:"low_space,omitempty"`
}

// LogGapsHeader is the HTTP header of GET /v1/agents/{id}/logs?raw=1 that
// lists the raw log's gaps as a JSON array of LogGap, so the bytes stay
// the child's (SPEC §5); absent when the log holds every byte.
const LogGapsHeader = "Subdash-Log-Gaps"

// Marker is the line that stands for g where a log is shown as text: the
// log pane, the pager, `ctl logs`, a read-back (SPEC §5).
func (g LogGap) Marker() string {
	why := "dropped here by --max-log-size (the log keeps the first and the last part)"
	switch {
	case g.Cap && g.LowSpace:
		why = "dropped here by --max-log-size and while free space was below the floor"
	case g.LowSpace:
		why = "not logged here: free space on the state directory's filesystem was below the floor"
	}
	return fmt.Sprintf("subdash: %d bytes (%s) of output %s", g.Bytes, FormatBytes(g.Bytes), why)
}

// restoredNoteTail follows the count in RestoredNote.
const restoredNoteTail = " agent(s) of this directory from earlier runs (updated within "

// RestoredNote is a host's note on the n agents it restored from earlier
// runs at start, those updated within window (SPEC §10): "restored 3
// agent(s) of this directory from earlier runs (updated within 7d)".
func RestoredNote(n int, window time.Duration) string {
	return "restored " + strconv.Itoa(n) + restoredNoteTail + FormatDuration(window) + ")"
}

// RestoredNoteLess returns note, a RestoredNote, counting gone agents
// fewer, as a dashboard keeps it true while restored agents are forgotten:
// "" when none is left. ok is false when note is not a RestoredNote.
func RestoredNoteLess(note string, gone int) (_ string, ok bool) {
	rest, ok := strings.CutPrefix(note, "restored ")
	i := strings.Index(rest, restoredNoteTail)
	if !ok || i < 0 {
		return "", false
	}
	n, err := strconv.Atoi(rest[:i])
	if err != nil {
		return "", false
	}
	if n-gone <= 0 {
		return "", true
	}
	return "restored " + strconv.Itoa(n-gone) + rest[i:], true
}
