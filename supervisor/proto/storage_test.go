package proto

import (
	"encoding/json"
	"strings"
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

// --max-log-size takes binary units in the forms SPEC §2 names, and
// FormatSize writes a size back as the flag takes it; a bad size says how
// to write one.
func TestParseSizeTakesBinaryUnits(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "10MiB": 10 << 20, "10M": 10 << 20, "10mb": 10 << 20,
		"1GiB": 1 << 30, "1G": 1 << 30, "64KiB": 64 << 10, "1.5G": 3 << 29, " 2 TiB ": 2 << 40,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
		if err == nil {
			if back, err := ParseSize(FormatSize(got)); err != nil || back != got {
				t.Errorf("FormatSize(%d) = %q reads back as %d, %v", got, FormatSize(got), back, err)
			}
		}
	}
	for _, in := range []string{"", "ten", "-1M", "10X", "1e30G"} {
		if _, err := ParseSize(in); err == nil || !strings.Contains(err.Error(), "10MiB, 10M, 1GiB") {
			t.Errorf("ParseSize(%q): error %v, want one saying how to write a size", in, err)
		}
	}
	if FormatSize(10<<20) != "10MiB" || FormatSize(1<<30) != "1GiB" || FormatSize(1000) != "1000" {
		t.Errorf("FormatSize: %q %q %q", FormatSize(10<<20), FormatSize(1<<30), FormatSize(1000))
	}
}

func TestRestoredNoteLess(t *testing.T) {
	note := RestoredNote(3, 7*24*time.Hour)
	if want := "restored 3 agent(s) of this directory from earlier runs (updated within 7 days)"; note != want {
		t.Fatalf("note %q, want %q", note, want)
	}
	for _, c := range []struct {
		note string
		gone int
		want string
		ok   bool
	}{
		{note, 0, note, true},
		{note, 1, "restored 2 agent(s) of this directory from earlier runs (updated within 7 days)", true},
		{note, 3, "", true},
		{"restored 3 run folder(s)", 1, "", false},
		{"memo not found on PATH", 1, "", false},
	} {
		if got, ok := RestoredNoteLess(c.note, c.gone); got != c.want || ok != c.ok {
			t.Errorf("RestoredNoteLess(%q, %d) = %q, %v; want %q, %v", c.note, c.gone, got, ok, c.want, c.ok)
		}
	}
}
