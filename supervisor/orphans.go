package supervisor

import (
	"fmt"
	"path/filepath"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/runner/local"
)

// recentRuns is how many earlier runs are checked for leftover submissions.
const recentRuns = 50

// leftovers returns the candidates of the orphan sweep (local.Orphans,
// which decides which of them still run): the submissions that started
// and never ended in the journals of the most recent of runs (at most
// recentRuns) that did not end cleanly.
func leftovers(runs journal.Runs) []local.Leftover {
	var out []local.Leftover
	for _, r := range runs.All[:min(len(runs.All), recentRuns)] {
		if journal.EndedCleanly(r.Journal) {
			continue
		}
		for _, u := range journal.Unended(r) {
			out = append(out, local.Leftover{RunDir: r.Folder(), HostPID: r.PID,
				AgentID: u.AgentID, SubmissionID: u.SubmissionID, PGID: u.PGID})
		}
	}
	return out
}

// reapOrphans terminates the orphans of earlier runs (local.Orphans; SPEC
// §4: nothing outlives its submission), recording each in the current
// journal, and returns a note for the dashboard, or "" when there were
// none.
func (s *Supervisor) reapOrphans(runs journal.Runs) string {
	orphans := local.Orphans(leftovers(runs))
	if len(orphans) == 0 {
		return ""
	}
	for _, o := range orphans {
		s.journal.Write(journal.Event{Event: "orphan_found", AgentID: o.AgentID, SubmissionID: o.SubmissionID, PID: o.PGID,
			Note: "left running by the earlier run " + filepath.Base(o.RunDir) + "; terminating its process group"})
	}
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		for _, o := range orphans {
			n, err := local.TerminateOrphan(o, s.cfg.Grace, s.cut)
			ev := journal.Event{Event: "orphan_terminated", AgentID: o.AgentID, SubmissionID: o.SubmissionID, PID: o.PGID}
			if err != nil {
				ev.Note = err.Error()
			} else if n > 0 {
				ev.Note = fmt.Sprintf("%d of its processes had left its process group", n)
			}
			s.journal.Write(ev)
		}
	}()
	// Said once at start and read long after (help's notes): in words
	// that stay true once the termination is done.
	return fmt.Sprintf("found %d agent process group(s) left running by an earlier subdash that did not exit cleanly, and terminated them (SIGTERM, SIGKILL after --grace; the journal says when each ended)", len(orphans))
}
