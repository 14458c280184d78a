package supervisor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// recentRuns is how many earlier runs are checked for leftover submissions.
const recentRuns = 50

// orphan is a submission of an earlier run whose process group is still
// alive although that run's supervisor is gone (it was killed with SIGKILL,
// or the machine's init killed it without letting it clean up).
type orphan struct {
	runDir, agentID, submissionID string
	pgid                          int
}

// findOrphans reads the journals of the most recent runs under stateDir
// (but current) and returns their submissions that started and never ended,
// whose supervisor process is gone, and that still have live processes
// verifiably theirs: a member of their process group, or a process that
// left it, whose environment holds the submission's SUBDASH_SUBMISSION_ID,
// so a reused pid is never taken for one.
func findOrphans(stateDir, current string) []orphan {
	runs, _ := filepath.Glob(filepath.Join(stateDir, "runs", "*", "journal.jsonl"))
	sort.Sort(sort.Reverse(sort.StringSlice(runs))) // run ids start with their time
	var out []orphan
	for i, j := range runs {
		if i >= recentRuns {
			break
		}
		if filepath.Dir(j) == current {
			continue
		}
		out = append(out, orphansOf(j)...)
	}
	return out
}

func orphansOf(journalPath string) []orphan {
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
	if runPID == 0 || processAlive(runPID) {
		return nil // an older journal without the pid, or its supervisor still runs
	}
	var out []orphan
	for _, ev := range started {
		if ev.PID > 0 && groupHolds(ev.PID, ev.SubmissionID) || len(escapees(ev.SubmissionID)) > 0 {
			out = append(out, orphan{filepath.Dir(journalPath), ev.AgentID, ev.SubmissionID, ev.PID})
		}
	}
	return out
}

// groupHolds reports whether a live member of process group pgid is a
// process of submission submissionID.
func groupHolds(pgid int, submissionID string) bool {
	members, _ := groupMembers(pgid)
	for _, pid := range members {
		if ofSubmission(pid, submissionID) {
			return true
		}
	}
	return false
}

// reapOrphans terminates the process groups of orphans (SPEC §4: nothing
// outlives its submission), recording each in the current journal, and
// returns a note for the dashboard, or "" when there were none.
func (s *Supervisor) reapOrphans() string {
	orphans := findOrphans(s.cfg.StateDir, s.runDir)
	if len(orphans) == 0 {
		return ""
	}
	for _, o := range orphans {
		s.journal.write(JournalEvent{Event: "orphan_found", AgentID: o.agentID, SubmissionID: o.submissionID, PID: o.pgid,
			Note: "left running by the earlier run " + filepath.Base(o.runDir) + "; terminating its process group"})
	}
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		for _, o := range orphans {
			var err error
			if groupHolds(o.pgid, o.submissionID) {
				err = terminateGroup(o.pgid, s.cfg.Grace, s.cut)
			}
			n := terminateEscapees(o.submissionID, s.cfg.Grace, s.cut)
			ev := JournalEvent{Event: "orphan_terminated", AgentID: o.agentID, SubmissionID: o.submissionID, PID: o.pgid}
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
