package proto

import (
	"encoding/json"
	"fmt"
	"math"
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
