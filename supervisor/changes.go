package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/changes"
	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
)

var _ proto.Differ = (*Supervisor)(nil)

// trackerOf returns the snapshots' tracker of cfg, nil with
// --track-changes=false: the private indexes and the snapshots' objects
// live in the run's folder, <run>/changes, removed with it; the state
// directory is left out of every snapshot.
func trackerOf(cfg Config, runDir string) *changes.Tracker {
	if !cfg.TrackChanges {
		return nil
	}
	return changes.New(filepath.Join(runDir, "changes"), cfg.StateDir)
}

// latestChangesLocked is the changes of a's latest submission (nil
// without one). Call with s.mu held.
func (s *Supervisor) latestChangesLocked(a *agent) *proto.Changes {
	if n := len(a.subs); n > 0 {
		return s.changesLocked(a.subs[n-1])
	}
	return nil
}

// subChanges is what a submission changed in its work tree (SPEC §15):
// the snapshot at its start (root, from), the tree it was counted
// against (to: its end, or a live count) and the counts. Guarded by
// Supervisor.mu.
type subChanges struct {
	root, from, to string
	objects        string // the object store of from and to; "" for the repository's (an earlier release)
	noUntracked    bool   // the snapshots hold the tracked files only (the bounds of SPEC §15)
	notTracked     string // why its changes are not tracked; "" when they are
	note           string // what a snapshot skipped, or why counting failed
	stat           changes.Stat
	shared         bool // other submissions ran in the same work tree meanwhile
	counted        bool // stat holds the count at the end
}

// snapshotRoot returns the top of the work tree whose snapshot sub
// starts from (SPEC §15), for snapshotStart, before its process starts;
// "" when there is none to take: changes are not tracked (not a git work
// tree, a pod's files), which it records and journals.
func (s *Supervisor) snapshotRoot(a *agent, sub *submission) string {
	if s.changes == nil {
		return ""
	}
	c := &subChanges{}
	if r := a.runner; r != "" && r != runner.Local {
		c.notTracked = "the " + r + " runner's pods have their own files"
	} else {
		root, err := s.changes.Root(context.Background(), s.cfg.Dir)
		var nt *changes.NotTrackedError
		switch {
		case err == nil:
			return root
		case errors.As(err, &nt):
			c.notTracked = nt.Reason
		default:
			c.notTracked = "no snapshot at the start: " + err.Error()
		}
	}
	s.setChanges(a, sub, c)
	return ""
}

// snapshotStart records the snapshot of the work tree at root that sub
// starts from (SPEC §15), before its process starts: shared with the
// submissions starting in the same work tree within a second, bounded in
// what it reads (changes.MaxUntrackedTotal, changes.UntrackedTime). A
// failed snapshot is a note, never a failed submission.
func (s *Supervisor) snapshotStart(a *agent, sub *submission, root string) {
	c := &subChanges{}
	snap, err := s.changes.Snapshot(context.Background(), root)
	var nt *changes.NotTrackedError
	switch {
	case errors.As(err, &nt):
		c.notTracked = nt.Reason
	case err != nil:
		c.notTracked = "no snapshot at the start: " + err.Error()
	default:
		c.root, c.from, c.objects = snap.Root, snap.Tree, snap.Objects
		var notes []string
		if len(snap.Skipped) > 0 {
			notes = append(notes, "untracked files over 10 MiB not tracked: "+strings.Join(snap.Skipped, ", "))
		}
		if snap.NoUntracked != "" {
			c.noUntracked = true
			notes = append(notes, "untracked files not tracked: "+snap.NoUntracked)
		}
		c.note = strings.Join(notes, "; ")
	}
	s.setChanges(a, sub, c)
}

// setChanges gives sub its changes c and journals them.
func (s *Supervisor) setChanges(a *agent, sub *submission, c *subChanges) {
	s.mu.Lock()
	sub.chg = c
	rec := c.record()
	s.mu.Unlock()
	s.journal.Write(journal.Event{Event: "changes", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Changes: rec})
}

// countEnd counts sub's changes at its end and journals them.
func (s *Supervisor) countEnd(a *agent, sub *submission) {
	s.mu.Lock()
	c := sub.chg
	ok := c != nil && c.from != ""
	s.mu.Unlock()
	if !ok {
		return
	}
	snap, st, err := s.countNow(context.Background(), c)
	s.mu.Lock()
	switch {
	case err != nil:
		c.note = strings.TrimPrefix(c.note+"; not counted at the end: "+err.Error(), "; ")
	case snap.NoUntracked != "":
		c.note = strings.TrimPrefix(c.note+"; untracked files at the end not tracked: "+snap.NoUntracked, "; ")
		fallthrough
	default:
		c.to, c.stat = snap.Tree, st
	}
	c.counted = true
	c.shared = s.sharedLocked(sub, time.Now())
	rec := c.record()
	s.mu.Unlock()
	s.journal.Write(journal.Event{Event: "changes", AgentID: a.id, SubmissionID: sub.id, Seq: sub.seq, Changes: rec})
}

// countNow snapshots c's work tree now (with the ends waiting for one; of
// the kind of its start: its untracked files or not) and counts the
// changes since c's start. c.root, c.from, c.objects and c.noUntracked
// never change, so it reads them without the lock.
func (s *Supervisor) countNow(ctx context.Context, c *subChanges) (changes.Snapshot, changes.Stat, error) {
	snap, err := s.changes.Now(ctx, c.root, !c.noUntracked)
	if err != nil {
		return snap, changes.Stat{}, err
	}
	st, err := s.changes.Stat(ctx, c.root, c.from, snap.Tree, c.objects, snap.Objects)
	return snap, st, err
}

// sharedLocked reports whether another submission ran in sub's work tree
// while sub ran (up to end when sub still runs). Call with s.mu held.
func (s *Supervisor) sharedLocked(sub *submission, end time.Time) bool {
	if !sub.endedAt.IsZero() {
		end = sub.endedAt
	}
	for _, a := range s.order {
		for _, o := range a.subs {
			if o == sub || o.chg == nil || o.chg.root != sub.chg.root || o.startedAt.IsZero() {
				continue
			}
			if o.startedAt.Before(end) && (o.endedAt.IsZero() || o.endedAt.After(sub.startedAt)) {
				return true
			}
		}
	}
	return false
}

// changesLocked is sub's changes as front-ends see them; nil with
// --track-changes=false. Call with s.mu held.
func (s *Supervisor) changesLocked(sub *submission) *proto.Changes {
	c := sub.chg
	if c == nil {
		return nil
	}
	out := &proto.Changes{Files: c.stat.Files, Added: c.stat.Added, Removed: c.stat.Removed, Note: c.note}
	switch {
	case c.notTracked != "":
		out.Note = strings.TrimSpace("changes not tracked: " + c.notTracked + "; " + c.note)
		out.Note = strings.TrimSuffix(out.Note, ";")
	case c.from == "":
	case !c.counted && !sub.endedAt.IsZero():
		// its host ended before it was counted (a restored record)
		out.Tracked = true
		out.Pending = true
		out.Note = strings.TrimPrefix(c.note+"; not counted: its host ended first (ctl diff compares with the tree now)", "; ")
	default:
		out.Tracked = true
		out.Pending = !c.counted
		out.Shared = c.shared || !c.counted && s.sharedLocked(sub, time.Now())
	}
	return out
}

// WriteChanges writes the unified diff of what submission seq (0 = the
// latest) of agent id changed in its work tree (SPEC §15; proto.Differ):
// from the snapshot at its start to its end, or to now while it runs.
// Errors: unknown agent or submission; changes not tracked (CodeInvalid,
// saying why); git's failure.
func (s *Supervisor) WriteChanges(ctx context.Context, w io.Writer, id string, seq int, color bool) error {
	sub, err := s.submission(id, seq)
	if err != nil {
		return err
	}
	s.mu.Lock()
	c := sub.chg
	var from, to, root, why string
	running := sub.endedAt.IsZero()
	if c != nil {
		from, to, root, why = c.from, c.to, c.root, c.notTracked
		if why == "" && from == "" {
			why = c.note
		}
	}
	s.mu.Unlock()
	switch {
	case c == nil:
		return &proto.Error{Code: proto.CodeInvalid, Message: "changes not tracked: the host runs with --track-changes=false"}
	case why != "":
		return &proto.Error{Code: proto.CodeInvalid, Message: "changes not tracked: " + why}
	case running || to == "":
		snap, _, err := s.countNow(ctx, c)
		if err != nil {
			return &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("cannot count the changes of submission %d of agent %s: %v", sub.seq, id, err)}
		}
		to = snap.Tree
	}
	if err := s.changes.WriteDiff(ctx, w, root, from, to, color, c.objects, s.changes.Objects()); err != nil {
		return &proto.Error{Code: proto.CodeInternal, Message: err.Error()}
	}
	return nil
}

// record is c as the journal keeps it. Call with s.mu held.
func (c *subChanges) record() *journal.ChangesRecord {
	return &journal.ChangesRecord{Root: c.root, From: c.from, To: c.to, Objects: c.objects, NoUntracked: c.noUntracked, NotTracked: c.notTracked, Note: c.note,
		Files: c.stat.Files, Added: c.stat.Added, Removed: c.stat.Removed, Shared: c.shared, Counted: c.counted}
}

// changesOf is a restored submission's changes from its record (nil when
// it has none).
func changesOf(r *journal.ChangesRecord) *subChanges {
	if r == nil {
		return nil
	}
	return &subChanges{root: r.Root, from: r.From, to: r.To, objects: r.Objects, noUntracked: r.NoUntracked, notTracked: r.NotTracked, note: r.Note,
		stat: changes.Stat{Files: r.Files, Added: r.Added, Removed: r.Removed}, shared: r.Shared, counted: r.Counted}
}
