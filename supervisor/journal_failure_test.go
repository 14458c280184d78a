package supervisor

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
)

// TestJournalFailureIsAWarning: the journal's first write failure reaches
// every screen as a warning (a Change, then Config().Warnings) and programs
// through Failure, also when no agent exists to show it; later failures add
// nothing.
func TestJournalFailureIsAWarning(t *testing.T) {
	s := newTestSupervisor(t, "cat")
	sub := s.Subscribe()
	defer sub.Close()
	path := filepath.Join(s.RunDir(), "journal.jsonl")
	breakJournal(t, path)

	s.journal.Write(journal.Event{Event: "test"})
	s.journal.Write(journal.Event{Event: "test again"})
	want := "journal could not be written (bad file descriptor): " + path + "; this run's records may not be restored"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var warned []string
	for len(warned) == 0 {
		changes, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("no warning: %v", err)
		}
		for _, c := range changes {
			warned = append(warned, c.Warnings...)
		}
	}
	if !slices.Equal(warned, []string{want}) {
		t.Errorf("warnings %q, want [%q]", warned, want)
	}
	if got := s.Failure(); got != want {
		t.Errorf("Failure() = %q, want %q", got, want)
	}
	if n := strings.Count(strings.Join(s.Config().Warnings, "\n"), "journal could not be written"); n != 1 {
		t.Errorf("Config().Warnings name the journal %d times, want once: %q", n, s.Config().Warnings)
	}
}
