package journal

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Records and restore (SPEC §10).
//
// The journal is the source of the records; there is no snapshot file. The
// journal is already written at every lifecycle event, append-only, one
// write per event, so a host killed with SIGKILL loses at most a torn last
// line, while a snapshot would have to be rewritten whole at every event
// (or lose the newest ones). To keep start-up flat in the number of runs, a
// host begins its own journal with a checkpoint: one "record" line per
// record it carries on (restored or kept outside the restore window), then
// a "records_restored" line. The next host then replays only the newest
// run of its directory that holds a complete checkpoint, plus any later
// runs (one that was killed before its checkpoint was complete) and any
// earlier run written after that checkpoint began (its host still ran),
// their events in the order they happened. Records of other working
// directories are never read into this one: each run's journal names its
// directory in its first line. A host writes its run only once it holds
// the control socket, so a start that is refused writes no checkpoint at
// all.

// maxReplayRuns bounds how many runs of one directory are replayed when
// none of them holds a complete checkpoint (journals of a subdash older
// than records).
const maxReplayRuns = 200

// Loaded is what Load found in the journals of earlier runs.
type Loaded struct {
	// Records are the records not forgotten, oldest first.
	Records []*AgentRecord
	// Warnings say what could not be restored, in words.
	Warnings []string
	// Notes say what restoring did not do, in words (queued messages not
	// run).
	Notes []string
	// Mailboxes are the root mailboxes of MCP sessions that hold items not
	// taken yet (SPEC §14).
	Mailboxes []*MailboxRecord
}

// runJournal is one earlier run's journal, read.
type runJournal struct {
	path     string
	events   []Event // those replay applies
	bad      []int   // line numbers that could not be read; 0: the file
	complete bool    // holds a complete checkpoint (records_restored)
	// asOf is the time of its checkpoint's first line: its host began
	// reading the earlier runs then, so the checkpoint holds every event
	// written before it (zero: no checkpoint).
	asOf time.Time
	last time.Time // its last entry: the later of its newest event and its file's time
}

// Load reads the records of working directory dir from runs (ListRuns):
// the newest run of dir that holds a complete checkpoint, every later run
// of dir, and every earlier one written after that checkpoint began (a
// host that was still running then: the checkpoint does not hold what it
// did later), their events replayed in the order they happened (see
// replayRuns). A submission that was running when its host ended becomes
// errored, "interrupted (host ended)". It never fails: unreadable lines
// and runs are skipped and named in Warnings.
func Load(runs Runs, dir string) Loaded {
	var out Loaded
	if runs.Err != nil {
		out.Warnings = append(out.Warnings, fmt.Sprintf("cannot read earlier runs in %s: %v; no agents were restored", runs.Folder, runs.Err))
		return out
	}
	var mine []Run // newest start first
	unreadable := runs.Unreadable
	for _, r := range runs.All {
		switch r.WorkDir {
		case dir:
			mine = append(mine, r)
		case "":
			unreadable++
		}
	}
	var read []*runJournal
	for i, r := range mine {
		rj := readRun(r)
		read = append(read, rj)
		if rj.complete {
			for _, older := range mine[i+1:] {
				if older.Written().After(rj.asOf) {
					read = append(read, readRun(older))
				}
			}
		}
		if rj.complete || len(read) >= maxReplayRuns {
			break
		}
	}
	if unreadable > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d earlier run(s) under %s have an unreadable journal (first line); their agents, if any were of this directory, were not restored", unreadable, runs.Folder))
	}
	slices.Reverse(read)
	rp := newReplay(dir)
	out.Notes = rp.replayRuns(read)
	for _, rj := range read {
		if len(rj.bad) > 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("journal %s: %d unreadable line(s) skipped (%s); the agents they described may be missing a submission or be out of date", rj.path, len(rj.bad), lineList(rj.bad)))
		}
	}
	if rp.otherDir > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d record(s) of another working directory were found in this directory's journals and not restored here", rp.otherDir))
	}
	out.Records = rp.records()
	out.Mailboxes = rp.mailboxes()
	return out
}

// readRun reads the journal of r: the events replay applies, whether it
// holds a complete checkpoint and since when, and its last entry.
func readRun(r Run) *runJournal {
	rj := &runJournal{path: r.Journal, last: r.Written()}
	bad, err := Read(r.Journal, func(ev Event) {
		if ev.Time.After(rj.last) {
			rj.last = ev.Time.Time
		}
		if (ev.Event == "record" || ev.Event == "mailbox" || ev.Event == "records_restored") && rj.asOf.IsZero() {
			rj.asOf = ev.Time.Time
		}
		if ev.Event == "records_restored" {
			rj.complete = true
		}
		if replayed[ev.Event] {
			rj.events = append(rj.events, ev)
		}
	})
	if err != nil && len(bad) == 0 {
		bad = []int{0} // the file could not be opened
	}
	rj.bad = bad
	return rj
}

// lineList names up to five line numbers.
func lineList(ns []int) string {
	var b strings.Builder
	b.WriteString("line")
	if len(ns) > 1 {
		b.WriteString("s")
	}
	for i, n := range ns {
		if i == 5 {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(" " + strconv.Itoa(n))
	}
	return b.String()
}
