package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/termtext"
)

// interruptedByHostEnd is last_error of a submission that was running
// when its host ended (SPEC §10).
const interruptedByHostEnd = "interrupted (host ended)"

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
	// sessions are the root mailboxes of MCP sessions (SPEC §14); maxSeq
	// is the highest mailbox item number seen, for the items hostEnded
	// adds.
	sessions map[string]*MailboxRecord
	maxSeq   uint64
}

func newReplay(dir string) *replay {
	return &replay{dir: dir, byID: map[string]*AgentRecord{}, queued: map[string]string{}, forgotten: map[string]bool{},
		owner: map[string]int{}, sessions: map[string]*MailboxRecord{}}
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

// replayed are the events apply (and sessionEvent) use: readRun keeps
// only these. An event apply learns to read is named here too, or a
// host killed before its next checkpoint loses it (steered and
// steer_receipt were missing: a kill -9 lost every receipt).
var replayed = map[string]bool{
	"spawned": true, "sent": true, "submission_started": true, "submission_ended": true,
	"closed": true, "resumed": true, "session": true, "forgotten": true, "record": true,
	"queued": true, "queue_dropped": true, "mail": true, "mail_removed": true, "mail_taken": true,
	"mailbox": true, "approval_answered": true, "steered": true, "steer_receipt": true, "changes": true,
	"question_requested": true, "question_answered": true, "question_expired": true, "approval_withdrawn": true,
}

// apply applies one journal event.
func (rp *replay) apply(ev Event) {
	if ev.Event == "record" {
		rp.record(ev.Record)
		return
	}
	if rp.sessionEvent(ev) {
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
		rp.queued[ev.AgentID] = MessageHead(ev.Message)
		return
	case "queue_dropped", "sent":
		delete(rp.queued, ev.AgentID)
	}
	r := rp.agent(ev.AgentID, ev.Time)
	changed(r)
	r.UpdatedAt = ev.Time
	switch ev.Event {
	case "spawned", "sent":
		rp.sent(r, ev)
	case "submission_started":
		s := rp.sub(r, ev.Seq, ev.SubmissionID, ev.Time)
		s.Command, s.Log = ev.Command, ev.Log
		if ev.Log != "" {
			s.MessageFile = MessagePath(ev.Log)
		}
	case "submission_ended":
		rp.ended(r, ev)
	case "closed":
		if r.Status != proto.StatusClosed {
			if n := len(r.Submissions); n == 0 || !r.Submissions[n-1].EndedAt.IsZero() {
				r.BeforeClose = r.Status
			}
			r.Status = proto.StatusClosed
			r.ClosedBy = ev.ClosedBy
		}
	case "resumed":
		if ev.Status != "" {
			r.Status = ev.Status
		}
		r.ClosedBy = ""
	case "mail", "mail_removed":
		rp.mail(r, ev)
	case "session":
		r.SessionID = ev.SessionID
	case "approval_answered":
		if ev.Decision == proto.DecisionAllowAlways && ev.Tool != "" && !slices.Contains(r.AlwaysAllowed, ev.Tool) {
			r.AlwaysAllowed = append(r.AlwaysAllowed, ev.Tool)
			slices.Sort(r.AlwaysAllowed)
		}
	case "steered", "steer_receipt":
		if ev.Steered != nil {
			s := rp.sub(r, ev.Seq, ev.SubmissionID, ev.Time)
			s.Steered = upsertSteered(s.Steered, *ev.Steered)
		}
	case "changes":
		rp.sub(r, ev.Seq, ev.SubmissionID, ev.Time).Changes = ev.Changes
	case "question_requested", "question_answered", "question_expired", "approval_withdrawn":
		rp.questionEvent(r, ev)
	}
}

// record applies a checkpoint's record: it replaces what the events
// before it said of its agent. A record of another directory is counted,
// not applied.
func (rp *replay) record(r *AgentRecord) {
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
}

// sent applies a spawned or sent event to r: a submission with its
// message, running.
func (rp *replay) sent(r *AgentRecord, ev Event) {
	if ev.Event == "spawned" {
		r.CreatedAt = ev.Time
		r.Command, r.Preset, r.Builtin = ev.Command, ev.Preset, ev.Builtin
		if ev.Runner != "" {
			r.Runner = ev.Runner
		}
		r.TaskName, r.AgentPath, r.ParentID, r.Session = ev.TaskName, ev.AgentPath, ev.ParentID, ev.Session
	}
	r.Mailbox = removeSeqs(r.Mailbox, ev.Seqs)
	s := rp.sub(r, ev.Seq, ev.SubmissionID, ev.Time)
	s.Message, s.MessageBytes = MessageHead(ev.Message), len(ev.Message)
	if ev.MessageBytes > 0 { // a head of the whole message
		s.Message, s.MessageBytes = ev.Message, ev.MessageBytes
	}
	r.LastMessage = s.Message
	r.Status = proto.StatusRunning
}

// ended applies a submission_ended event to r: the submission's outcome,
// and the agent's when it is its latest submission.
func (rp *replay) ended(r *AgentRecord, ev Event) {
	s := rp.sub(r, ev.Seq, ev.SubmissionID, ev.Time)
	// The same end applied again (a run replayed after a checkpoint that
	// holds part of it) counts its usage once.
	again := s.EndedAt.Equal(ev.Time.Time) && s.Status == ev.Status
	s.EndedAt, s.Status, s.ExitCode, s.Signal = ev.Time, ev.Status, ev.ExitCode, ev.Signal
	s.LogDropped = ev.LogDropped
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
	if !again {
		r.InnerAgents = proto.AppendInner(r.InnerAgents, ev.InnerAgents)
	}
	if r.Status == proto.StatusClosed {
		r.BeforeClose = s.Status
	} else if s.Seq == len(r.Submissions) {
		r.Status = s.Status
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
			notes = append(notes, fmt.Sprintf("agent %s had a message queued when its host ended; it was not run (send it again if it is still wanted): %q", termtext.ShortID(id), firstLine(msg)))
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
				changed(r)
				r.Status = proto.StatusErrored
			}
			continue
		}
		s := &r.Submissions[n-1]
		if !s.EndedAt.IsZero() {
			continue
		}
		changed(r)
		le := interruptedByHostEnd
		s.EndedAt, s.Status, s.LastError = proto.Time{Time: at}, proto.StatusErrored, &le
		r.LastError = s.LastError
		questionsUnanswered(s)
		if n := rp.endedByHost(r, at); n != "" {
			notes = append(notes, n)
		}
		if r.UpdatedAt.Before(at) {
			r.UpdatedAt = proto.Time{Time: at}
		}
		if r.Status == proto.StatusClosed {
			r.BeforeClose = proto.StatusErrored
		} else {
			r.Status = proto.StatusErrored
		}
	}
	sort.Strings(notes)
	return notes
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
				if ev.Event == "record" || ev.Event == "mailbox" {
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
			rp.findLog(rj, ev)
			if id := ev.AgentID; id != "" {
				rp.owner[id] = pick
			} else if ev.Record != nil {
				rp.owner[ev.Record.AgentID] = pick
			}
		}
		next[pick]++
	}
}

// findLog gives the submission a spawned or sent event of run rj began the
// log file it has on disk in rj's folder (LogPath) while no
// submission_started event named it: that line was lost (cut by a host
// killed mid-write), and the submission would be restored saying its log
// file "is gone ()" though it is there.
func (rp *replay) findLog(rj *runJournal, ev Event) {
	if ev.Event != "spawned" && ev.Event != "sent" || ev.Seq < 1 || ev.SubmissionID == "" {
		return
	}
	r := rp.byID[ev.AgentID]
	if r == nil || len(r.Submissions) < ev.Seq {
		return
	}
	s := &r.Submissions[ev.Seq-1]
	if s.Log != "" || s.ID != ev.SubmissionID {
		return
	}
	p := LogPath(filepath.Dir(rj.path), ev.AgentID, ev.Seq, ev.SubmissionID)
	if _, err := os.Stat(p); err == nil {
		changed(r)
		s.Log, s.MessageFile = p, MessagePath(p)
	}
}

// firstLine returns the first line of s, cut at 60 characters.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// records returns the records replayed and not forgotten, in the order
// their agents were first seen.
func (rp *replay) records() []*AgentRecord {
	var out []*AgentRecord
	seen := map[string]bool{}
	for _, id := range rp.order {
		if r, ok := rp.byID[id]; ok && !seen[id] {
			seen[id] = true
			out = append(out, r)
		}
	}
	return out
}

// upsertSteered puts m in list in place of the message with its id, or at
// its end.
func upsertSteered(list []proto.SteeredMessage, m proto.SteeredMessage) []proto.SteeredMessage {
	for i := range list {
		if list[i].ID == m.ID {
			list[i] = m
			return list
		}
	}
	return append(list, m)
}
