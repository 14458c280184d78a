package supervisor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/subdash/subdash/supervisor/runner/local"
)

// recentRuns is how many earlier runs are checked for leftover submissions.
const recentRuns = 50

// leftovers reads the journals of the most recent runs under stateDir (but
// current) that did not end cleanly, and returns their submissions that
// started and never ended: the candidates of the orphan sweep
// (local.Orphans), which decides which of them still run.
func leftovers(stateDir, current string) []local.Leftover {
	runs, _ := filepath.Glob(filepath.Join(stateDir, "runs", "*", "journal.jsonl"))
	sort.Sort(sort.Reverse(sort.StringSlice(runs))) // run ids start with their time
	var out []local.Leftover
	for i, j := range runs {
		if i >= recentRuns {
			break
		}
		if filepath.Dir(j) == current {
			continue
		}
		out = append(out, leftoversOf(j)...)
	}
	return out
}

func leftoversOf(journalPath string) []local.Leftover {
	if endedCleanly(journalPath) {
		return nil
	}
	f, err := os.Open(journalPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	runPID := 0
	started := map[string]JournalEvent{}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			break
		}
		if isRecordLine(line) {
			continue // a whole record (records.go): no process in it
		}
		var ev JournalEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		switch ev.Event {
		case "run_started":
			runPID = ev.PID
		case "submission_started":
			started[ev.SubmissionID] = ev
		case "submission_ended", "orphan_terminated":
			delete(started, ev.SubmissionID)
		}
	}
	out := make([]local.Leftover, 0, len(started))
	for _, ev := range started {
		out = append(out, local.Leftover{RunDir: filepath.Dir(journalPath), HostPID: runPID,
			AgentID: ev.AgentID, SubmissionID: ev.SubmissionID, PGID: ev.PID})
	}
	return out
}

// reapOrphans terminates the orphans of earlier runs (local.Orphans; SPEC
// §4: nothing outlives its submission), recording each in the current
// journal, and returns a note for the dashboard, or "" when there were
// none.
func (s *Supervisor) reapOrphans() string {
	orphans := local.Orphans(leftovers(s.cfg.StateDir, s.runDir))
	if len(orphans) == 0 {
		return ""
	}
	for _, o := range orphans {
		s.journal.write(JournalEvent{Event: "orphan_found", AgentID: o.AgentID, SubmissionID: o.SubmissionID, PID: o.PGID,
			Note: "left running by the earlier run " + filepath.Base(o.RunDir) + "; terminating its process group"})
	}
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		for _, o := range orphans {
			n, err := local.TerminateOrphan(o, s.cfg.Grace, s.cut)
			ev := JournalEvent{Event: "orphan_terminated", AgentID: o.AgentID, SubmissionID: o.SubmissionID, PID: o.PGID}
			if err != nil {
				ev.Note = err.Error()
			} else if n > 0 {
				ev.Note = fmt.Sprintf("%d of its processes had left its process group", n)
			}
			s.journal.write(ev)
		}
	}()
	// Said once at start and read long after (help's notes): in words
	// that stay true once the termination is done.
	return fmt.Sprintf("found %d agent process group(s) left running by an earlier subdash that did not exit cleanly, and terminated them (SIGTERM, SIGKILL after --grace; the journal says when each ended)", len(orphans))
}

// endedCleanly reports whether a run's journal ends with run_ended: its host
// shut down after every submission ended, so nothing of it can be left.
// Only the file's tail is read: journals carrying many records are large.
func endedCleanly(journalPath string) bool {
	f, err := os.Open(journalPath)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	const tail = 512
	off := max(fi.Size()-tail, 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil {
		return false
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	return bytes.Contains(lines[len(lines)-1], []byte(`"event":"run_ended"`))
}
