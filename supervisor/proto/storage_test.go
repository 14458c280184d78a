package proto

import (
	"encoding/json"
	"testing"
	"time"
)

// A Storage that travelled as JSON keeps its retention (a viewer's help
// says how long its host keeps runs).
func TestStorageKeepsItsRetentionOnTheWire(t *testing.T) {
	for _, d := range []time.Duration{0, 30 * 24 * time.Hour, 36 * time.Hour} {
		b, err := json.Marshal(Storage{RunsDir: "/s/runs", Retention: d, RetentionDays: d.Hours() / 24})
		if err != nil {
			t.Fatal(err)
		}
		var got Storage
		if err := json.Unmarshal(b, &got); err != nil || got.Retention != d || got.RunsDir != "/s/runs" {
			t.Errorf("%s came back as %+v (%v)", d, got, err)
		}
	}
}
