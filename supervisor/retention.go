package supervisor

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner/local"
)

// Log retention (SPEC §10, --log-retention).
//
// At start a host removes the runs of its own working directory whose
// journal was last written more than LogRetention ago, except a run that
// holds a log of an agent it restored (a record inside the restore window)
// and a run whose host is still alive. Runs of other directories are left
// to the hosts of those directories, which know their records. A run
// folder left with nothing but an empty or headless journal (a host that
// could not write it) holds nothing of any directory and goes at once.

// storageTTL is how long a measured size is reused: measuring walks every
// log file.
const storageTTL = 10 * time.Second

// storageCache holds the last measure of the state directory.
type storageCache struct {
	mu   sync.Mutex
	at   time.Time
	last proto.Storage
}

// Storage measures where the logs are and how much space they take (at
// most every 10 s; it walks the runs folder, so call it off the UI
// goroutine). An unreadable folder counts as empty, so the error is
// always nil (proto.Reader's Storage, whose client may fail).
func (s *Supervisor) Storage(context.Context) (proto.Storage, error) {
	s.storage.mu.Lock()
	defer s.storage.mu.Unlock()
	if !s.storage.at.IsZero() && time.Since(s.storage.at) < storageTTL {
		return s.storage.last, nil
	}
	st := s.storage.last
	st.RunsDir = filepath.Join(s.cfg.StateDir, "runs")
	st.Retention = s.cfg.LogRetention
	st.RetentionDays = s.cfg.LogRetention.Hours() / 24
	st.Bytes, st.Runs = 0, 0
	if entries, err := os.ReadDir(st.RunsDir); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				st.Runs++
				st.Bytes += dirSize(filepath.Join(st.RunsDir, e.Name()))
			}
		}
	}
	s.storage.at, s.storage.last = time.Now(), st
	return st, nil
}

// dirSize sums the sizes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// removeOldRuns applies --log-retention at start (see the top of this
// file) to runs, the earlier runs as New listed them, and adds a note
// saying how much was freed, or a warning naming what could not be
// removed. asOf is when restore began reading the earlier runs: this run's
// checkpoint holds what they held then.
func (s *Supervisor) removeOldRuns(runs journal.Runs, asOf time.Time) {
	if s.cfg.LogRetention <= 0 {
		return
	}
	keep := s.runsOfRecords()
	cutoff := time.Now().Add(-s.cfg.LogRetention)
	// This run's checkpoint carries every record forward, so an earlier
	// run of this directory that holds nothing else (no agent's logs: it
	// restored agents and ran none), ended cleanly and was last written
	// before this run read it is superseded; it goes, or every start would
	// add a copy of all the records. A run written since (a live host, or
	// one that started after this one) holds events this checkpoint does
	// not, and stays.
	carried := filepath.Dir(s.runDir) == runs.Folder && s.journal.OK()
	superseded := 0
	var failed []string
	for _, r := range runs.All {
		folder, written := r.Folder(), r.Written()
		switch {
		case r.WorkDir != s.cfg.Dir || keep[folder] || written.IsZero():
		case carried && written.Before(asOf) && journalOnly(folder) && journal.EndedCleanly(r.Journal):
			if os.RemoveAll(folder) == nil {
				superseded++
			}
		case written.After(cutoff) || r.PID > 0 && local.ProcessAlive(r.PID):
		default:
			size := dirSize(folder)
			if err := os.RemoveAll(folder); err != nil {
				failed = append(failed, fmt.Sprintf("%s (%v)", folder, err))
				continue
			}
			s.storage.last.Freed += size
			s.storage.last.Removed++
		}
	}
	left := 0
	for _, folder := range runs.Leftovers {
		if err := os.RemoveAll(folder); err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", folder, err))
			continue
		}
		left++
	}
	if left > 0 {
		// They hold nothing; left there, each start would warn of them
		// again, one more after every start a full disk spoiled.
		s.cfg.Notes = append(s.cfg.Notes, fmt.Sprintf("removed %d empty run folder(s) from %s, left by a host that could not write its journal (a full disk?)", left, runs.Folder))
	}
	s.removedRuns(runs.Folder, superseded, failed)
}

// runsOfRecords returns the run folders that hold a log of an agent this
// host restored: the retention keeps them.
func (s *Supervisor) runsOfRecords() map[string]bool {
	keep := map[string]bool{}
	for _, a := range s.order {
		for _, sub := range a.subs {
			if sub.folder != "" {
				keep[filepath.Dir(sub.folder)] = true
			} else if sub.hasLog() {
				keep[filepath.Dir(filepath.Dir(sub.logPath()))] = true
			}
		}
	}
	return keep
}

// removedRuns says what removeOldRuns did: a note and a journal entry for
// the runs removed, one for the runs superseded, a warning for those that
// could not be removed.
func (s *Supervisor) removedRuns(runsDir string, superseded int, failed []string) {
	if n := s.storage.last.Removed; n > 0 {
		note := fmt.Sprintf("removed %d run(s) older than %s (--log-retention) from %s: %s freed",
			n, proto.FormatDuration(s.cfg.LogRetention), runsDir, proto.FormatBytes(s.storage.last.Freed))
		s.cfg.Notes = append(s.cfg.Notes, note)
		s.journal.Write(journal.Event{Event: "logs_removed", Note: note})
	}
	if superseded > 0 {
		s.journal.Write(journal.Event{Event: "runs_superseded", Note: fmt.Sprintf("removed %d earlier run(s) that held only records, all carried by this run's checkpoint", superseded)})
	}
	if len(failed) > 0 {
		s.cfg.Warnings = append(s.cfg.Warnings, "--log-retention could not remove "+strings.Join(failed, ", "))
	}
}

// journalOnly reports whether a run's folder holds its journal and nothing
// else: no agent ran a submission in it.
func journalOnly(runDir string) bool {
	entries, err := os.ReadDir(runDir)
	return err == nil && len(entries) == 1 && entries[0].Name() == "journal.jsonl"
}
