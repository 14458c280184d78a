package supervisor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
)

// maxReplayRuns bounds how many runs of one directory are replayed when
// none of them holds a complete checkpoint (journals of a subdash older
// than records).
const maxReplayRuns = 200

// loaded is what loadRecords found in the journals of earlier runs.
type loaded struct {
	records  []*AgentRecord // not forgotten, oldest first
	warnings []string       // what could not be restored, in words
	notes    []string       // what restoring did not do, in words (queued messages)
}

// runJournal is one earlier run's journal, parsed.
type runJournal struct {
	path     string
	events   []JournalEvent
	bad      []int // line numbers that could not be read
	complete bool  // holds a complete checkpoint (records_restored)
	// asOf is the time of its checkpoint's first line: its host began
	// reading the earlier runs then, so the checkpoint holds every event
	// written before it (zero: no checkpoint).
	asOf time.Time
	last time.Time
}

// loadRecords reads the records of working directory dir from the journals
// of earlier runs under stateDir (all but current, this run's folder):
// the newest run of dir that holds a complete checkpoint, every later run
// of dir, and every earlier one written after that checkpoint began (a
// host that was still running then: the checkpoint does not hold what it
// did later), their events replayed in the order they happened (see
// replayRuns). A submission that was running when its host ended becomes
// errored, "interrupted (host ended)". It never fails: unreadable lines
// and runs are skipped and named in warnings.
func loadRecords(stateDir, dir, current string) loaded {
	var out loaded
	entries, err := os.ReadDir(filepath.Join(stateDir, "runs"))
	if err != nil {
		if !os.IsNotExist(err) {
			out.warnings = append(out.warnings, fmt.Sprintf("cannot read earlier runs in %s: %v; no agents were restored", filepath.Join(stateDir, "runs"), err))
		}
		return out
	}
	// Runs in the order they started (run_started's time; run ids have
	// whole seconds only), newest first.
	type candidate struct {
		path    string
		started time.Time
	}
	var cands []candidate
	unreadable := 0
	for _, e := range entries {
		runDir := filepath.Join(stateDir, "runs", e.Name())
		if !e.IsDir() || runDir == current {
			continue
		}
		path := filepath.Join(runDir, "journal.jsonl")
		rdir, started, ok := journalDir(path)
		switch {
		case !ok:
			unreadable++
		case rdir == dir:
			cands = append(cands, candidate{path, started})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].started.After(cands[j].started) })
	var runs []*runJournal // newest start first
	for i, c := range cands {
		rj := parseJournal(c.path)
		runs = append(runs, rj)
		if rj.complete {
			for _, older := range cands[i+1:] {
				if fi, err := os.Stat(older.path); err == nil && fi.ModTime().After(rj.asOf) {
					runs = append(runs, parseJournal(older.path))
				}
			}
		}
		if rj.complete || len(runs) >= maxReplayRuns {
			break
		}
	}
	if unreadable > 0 {
		out.warnings = append(out.warnings, fmt.Sprintf("%d earlier run(s) under %s have an unreadable journal (first line); their agents, if any were of this directory, were not restored", unreadable, filepath.Join(stateDir, "runs")))
	}
	slices.Reverse(runs)
	rp := newReplay(dir)
	out.notes = rp.replayRuns(runs)
	for _, rj := range runs {
		if len(rj.bad) > 0 {
			out.warnings = append(out.warnings, fmt.Sprintf("journal %s: %d unreadable line(s) skipped (%s); the agents they described may be missing a submission or be out of date", rj.path, len(rj.bad), lineList(rj.bad)))
		}
	}
	if rp.otherDir > 0 {
		out.warnings = append(out.warnings, fmt.Sprintf("%d record(s) of another working directory were found in this directory's journals and not restored here", rp.otherDir))
	}
	seen := map[string]bool{}
	for _, id := range rp.order {
		if r, ok := rp.byID[id]; ok && !seen[id] {
			seen[id] = true
			out.records = append(out.records, r)
		}
	}
	return out
}

// replayRuns applies the events of runs (oldest start first) in the order
// they happened, each run's own in its line order, and ends each run's
// host at its last entry (hostEnded): a host that ran while a later one
// took its checkpoint (two hosts of one directory at once, or a start
// that wrote a checkpoint and never became the host) has its later events
// applied after that checkpoint, not lost behind it. An event applied
// again over a checkpoint that holds it changes nothing. At the same
// millisecond a checkpoint's records come first, then events, then ends
// of hosts; then the older run. It returns hostEnded's notes.
func (rp *replay) replayRuns(runs []*runJournal) []string {
	var notes []string
	next := make([]int, len(runs)) // per run: its next event, len(events) for its end, past that when done
	for {
		pick, pickAt, pickKind := -1, time.Time{}, 0
		for i, rj := range runs {
			at, kind := rj.last, 2 // the host's end
			switch {
			case next[i] > len(rj.events):
				continue
			case next[i] < len(rj.events):
				ev := rj.events[next[i]]
				at, kind = ev.Time.Time, 1
				if ev.Event == "record" {
					kind = 0
				}
			}
			if pick < 0 || at.Before(pickAt) || at.Equal(pickAt) && kind < pickKind {
				pick, pickAt, pickKind = i, at, kind
			}
		}
		if pick < 0 {
			return notes
		}
		rj := runs[pick]
		if next[pick] == len(rj.events) {
			notes = append(notes, rp.hostEnded(pick, rj.last)...)
		} else {
			ev := rj.events[next[pick]]
			rp.apply(ev)
			if id := ev.AgentID; id != "" {
				rp.owner[id] = pick
			} else if ev.Record != nil {
				rp.owner[ev.Record.AgentID] = pick
			}
		}
		next[pick]++
	}
}

// journalDir returns the working directory and start time named by the
// first line of a run's journal (run_started); ok is false when it cannot
// be read.
func journalDir(path string) (string, time.Time, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", time.Time{}, false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil && err != io.EOF {
		return "", time.Time{}, false
	}
	var ev JournalEvent
	if json.Unmarshal(line, &ev) != nil || ev.Event != "run_started" {
		return "", time.Time{}, false
	}
	if ev.Dir != "" {
		return ev.Dir, ev.Time.Time, true
	}
	d, ok := strings.CutPrefix(ev.Note, "dir ") // journals of an older subdash
	return d, ev.Time.Time, ok
}

// parseJournal parses a journal; unreadable lines (corrupt, or torn by a
// host that was killed mid-write) are counted by number and skipped.
func parseJournal(path string) *runJournal {
	rj := &runJournal{path: path}
	f, err := os.Open(path)
	if err != nil {
		rj.bad = append(rj.bad, 0)
		return rj
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		rj.last = fi.ModTime()
	}
	r := bufio.NewReaderSize(f, 256<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			break
		}
		var ev JournalEvent
		if json.Unmarshal(line, &ev) != nil || ev.Event == "" {
			rj.bad = append(rj.bad, n)
			continue
		}
		if ev.Time.After(rj.last) {
			rj.last = ev.Time.Time
		}
		if (ev.Event == "record" || ev.Event == "records_restored") && rj.asOf.IsZero() {
			rj.asOf = ev.Time.Time
		}
		switch ev.Event {
		case "records_restored":
			rj.complete = true
		case "spawned", "sent", "submission_started", "submission_ended", "closed", "resumed", "session", "forgotten", "record",
			"queued", "queue_dropped":
			rj.events = append(rj.events, ev)
		}
	}
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

// replay rebuilds records from journal events.
type replay struct {
	dir      string
	byID     map[string]*AgentRecord
	order    []string
	otherDir int
	// queued holds the head of a message queued (SPEC §11) and not started
	// yet, per agent: when the host ends, it is not run.
	queued map[string]string
	// forgotten holds the agents forgotten for good (SPEC §10): a later
	// event of one (a journal written before Forget waited for the end
	// of its submission to be journaled) does not bring it back.
	forgotten map[string]bool
	// owner is, per agent, the run (its index in replayRuns) whose event
	// was applied to it last: the host whose end ends its submission.
	owner map[string]int
}

func newReplay(dir string) *replay {
	return &replay{dir: dir, byID: map[string]*AgentRecord{}, queued: map[string]string{}, forgotten: map[string]bool{},
		owner: map[string]int{}}
}

// agent returns the record of id, creating it when an event names an agent
// whose spawn line was lost.
func (rp *replay) agent(id string, at proto.Time) *AgentRecord {
	r, ok := rp.byID[id]
	if !ok {
		r = &AgentRecord{AgentID: id, Dir: rp.dir, Status: proto.StatusRunning, CreatedAt: at, UpdatedAt: at, Runner: runner.Local}
		rp.byID[id] = r
		rp.order = append(rp.order, id)
	}
	return r
}

// sub returns submission seq of r, creating it (and placeholders for
// submissions whose lines were lost, so that seq n stays at index n-1).
func (rp *replay) sub(r *AgentRecord, seq int, id string, at proto.Time) *SubmissionRecord {
	if seq < 1 {
		for i := range r.Submissions {
			if r.Submissions[i].ID == id {
				return &r.Submissions[i]
			}
		}
		seq = len(r.Submissions) + 1
	}
	for len(r.Submissions) < seq {
		n := len(r.Submissions) + 1
		lost := "record lost: its journal line could not be read"
		r.Submissions = append(r.Submissions, SubmissionRecord{Seq: n, StartedAt: at, EndedAt: at, Status: proto.StatusErrored, LastError: &lost})
	}
	s := &r.Submissions[seq-1]
	if s.ID == "" || s.ID != id && id != "" {
		*s = SubmissionRecord{ID: id, Seq: seq, StartedAt: at, Status: proto.StatusRunning}
	}
	return s
}

// apply applies one journal event.
func (rp *replay) apply(ev JournalEvent) {
	if ev.Event == "record" {
		r := ev.Record
		if r == nil || r.AgentID == "" {
			return
		}
		if r.Dir != "" && r.Dir != rp.dir {
			rp.otherDir++
			return
		}
		if _, ok := rp.byID[r.AgentID]; !ok {
			rp.order = append(rp.order, r.AgentID)
		}
		rp.byID[r.AgentID] = r
		return
	}
	if ev.AgentID == "" || rp.forgotten[ev.AgentID] {
		return
	}
	switch ev.Event {
	case "forgotten":
		delete(rp.byID, ev.AgentID)
		delete(rp.queued, ev.AgentID)
		rp.forgotten[ev.AgentID] = true
		return
	case "queued":
		rp.queued[ev.AgentID] = messageHead(ev.Message)
		return
	case "queue_dropped", "sent":
		delete(rp.queued, ev.AgentID)
	}
	r := rp.agent(ev.AgentID, ev.Time)
	r.UpdatedAt = ev.Time
	switch ev.Event {
	case "spawned", "sent":
		if ev.Event == "spawned" {
			r.CreatedAt = ev.Time
			r.Command, r.Preset, r.Builtin = ev.Command, ev.Preset, ev.Builtin
			if ev.Runner != "" {
				r.Runner = ev.Runner
			}
		}
		s := rp.sub(r, ev.Seq, ev.SubmissionID, ev.Time)
		s.Message, s.MessageBytes = messageHead(ev.Message), len(ev.Message)
		if ev.MessageBytes > 0 { // a head of the whole message
			s.Message, s.MessageBytes = ev.Message, ev.MessageBytes
		}
		r.LastMessage = s.Message
		r.Status = proto.StatusRunning
	case "submission_started":
		s := rp.sub(r, ev.Seq, ev.SubmissionID, ev.Time)
		s.Command, s.Log = ev.Command, ev.Log
		if ev.Log != "" {
			s.MessageFile = msgPathOf(ev.Log)
		}
	case "submission_ended":
		s := rp.sub(r, ev.Seq, ev.SubmissionID, ev.Time)
		// The same end applied again (a run replayed after a checkpoint
		// that holds part of it) counts its usage once.
		again := s.EndedAt.Equal(ev.Time.Time) && s.Status == ev.Status
		s.EndedAt, s.Status, s.ExitCode, s.Signal = ev.Time, ev.Status, ev.ExitCode, ev.Signal
		s.LastError = nil
		if ev.LastError != "" {
			le := ev.LastError
			s.LastError = &le
		}
		r.LastError, r.LastOutput = s.LastError, ev.LastOutput
		if ev.SessionID != "" {
			r.SessionID = ev.SessionID
		}
		if ev.Usage != nil && !again {
			r.Usage.Add(*ev.Usage)
		}
		if r.Status == proto.StatusClosed {
			r.BeforeClose = s.Status
		} else if s.Seq == len(r.Submissions) {
			r.Status = s.Status
		}
	case "closed":
		if r.Status != proto.StatusClosed {
			if n := len(r.Submissions); n == 0 || !r.Submissions[n-1].EndedAt.IsZero() {
				r.BeforeClose = r.Status
			}
			r.Status = proto.StatusClosed
		}
	case "resumed":
		if ev.Status != "" {
			r.Status = ev.Status
		}
	case "session":
		r.SessionID = ev.SessionID
	}
}

// hostEnded ends the submissions that were still running when the host of
// run ended, at its last journal entry (SPEC §10: never restored as
// running, never as completed): those of the agents it owns (the run whose
// event was applied to them last).
//
// It returns a note for each message that was queued (SPEC §11) when the
// host ended: such a message is not run by restoring.
func (rp *replay) hostEnded(run int, at time.Time) []string {
	var notes []string
	for id, msg := range rp.queued {
		if rp.owner[id] != run {
			continue
		}
		if _, ok := rp.byID[id]; ok {
			notes = append(notes, fmt.Sprintf("agent %s had a message queued when its host ended; it was not run (send it again if it is still wanted): %q", id[:min(8, len(id))], firstLine(msg)))
		}
		delete(rp.queued, id)
	}
	sort.Strings(notes)
	for id, r := range rp.byID {
		if rp.owner[id] != run {
			continue
		}
		n := len(r.Submissions)
		if n == 0 {
			if r.Status == proto.StatusRunning {
				r.Status = proto.StatusErrored
			}
			continue
		}
		s := &r.Submissions[n-1]
		if !s.EndedAt.IsZero() {
			continue
		}
		le := interruptedByHostEnd
		s.EndedAt, s.Status, s.LastError = proto.Time{Time: at}, proto.StatusErrored, &le
		r.LastError = s.LastError
		if r.UpdatedAt.Before(at) {
			r.UpdatedAt = proto.Time{Time: at}
		}
		if r.Status == proto.StatusClosed {
			r.BeforeClose = proto.StatusErrored
		} else {
			r.Status = proto.StatusErrored
		}
	}
	return notes
}

// isRecordLine reports whether a journal line is a "record" event, without
// decoding it: the encoder writes "time" then "event" first.
func isRecordLine(line []byte) bool {
	head := line[:min(len(line), 64)]
	return bytes.Contains(head, []byte(`"event":"record"`))
}

// firstLine returns the first line of s, cut at 60 characters.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
