package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Run is an earlier run of a host, as the first line of its journal
// (run_started) tells it.
type Run struct {
	// Journal is the journal's path: <state-dir>/runs/<run-id>/journal.jsonl.
	Journal string
	// WorkDir is the working directory of its host: records belong to
	// one (SPEC §10). "" when the journal does not say (the orphan sweep
	// still looks at the run; no directory's records are in it).
	WorkDir string
	// Started is when its host started.
	Started time.Time
	// PID is its host's process id; 0 in the journal of an older subdash
	// that did not write it.
	PID int
}

// Folder returns the run's folder, which holds its journal and its
// agents' logs.
func (r Run) Folder() string { return filepath.Dir(r.Journal) }

// Written returns when r's journal was last written (its modification
// time), read now: a host still running writes it later. The zero time
// when it cannot be read (removed).
func (r Run) Written() time.Time {
	fi, err := os.Stat(r.Journal)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// Runs are the earlier runs of a state directory, as ListRuns finds them.
type Runs struct {
	// Folder is <state-dir>/runs.
	Folder string
	// All are the runs whose journal begins with run_started, newest
	// start first.
	All []Run
	// Unreadable counts the runs whose journal's first line could not be
	// read (missing, damaged, cut): their working directory is unknown.
	Unreadable int
	// Leftovers are the folders of runs that hold nothing but a journal
	// that is empty or has no first line, or not even that, for over
	// leftoverAge: what a host that could not write its journal (a full
	// disk) leaves. Nothing in them can be restored or read; they are not
	// counted in Unreadable, and the retention removes them (SPEC §10).
	Leftovers []string
	// Err is why Folder could not be read (os.ReadDir's error); nil also
	// when it does not exist yet.
	Err error
}

// maxHead bounds a journal's first line, in bytes: run_started holds the
// agent command, which may be long.
const maxHead = 64 << 10

// ListRuns reads the first line of the journal of every run under
// <stateDir>/runs but the one in the folder except (this host's own run),
// newest start first (run ids have whole seconds only). A state directory
// without runs has none.
func ListRuns(stateDir, except string) Runs {
	rs := Runs{Folder: filepath.Join(stateDir, "runs")}
	entries, err := os.ReadDir(rs.Folder)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			rs.Err = err
		}
		return rs
	}
	for _, e := range entries {
		folder := filepath.Join(rs.Folder, e.Name())
		if !e.IsDir() || folder == except {
			continue
		}
		r, ok := readHead(filepath.Join(folder, "journal.jsonl"))
		switch {
		case !ok && leftover(folder):
			rs.Leftovers = append(rs.Leftovers, folder)
			continue
		case !ok:
			rs.Unreadable++
			continue
		}
		rs.All = append(rs.All, r)
	}
	sort.SliceStable(rs.All, func(i, j int) bool { return rs.All[i].Started.After(rs.All[j].Started) })
	return rs
}

// readHead reads the run_started line that begins a journal.
func readHead(path string) (Run, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Run{}, false
	}
	defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxHead), 4096).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return Run{}, false
	}
	var ev Event
	if json.Unmarshal(line, &ev) != nil || ev.Event != "run_started" {
		return Run{}, false
	}
	r := Run{Journal: path, WorkDir: ev.Dir, Started: ev.Time.Time, PID: ev.PID}
	if r.WorkDir == "" {
		r.WorkDir, _ = strings.CutPrefix(ev.Note, "dir ") // journals of an older subdash
	}
	return r, true
}

// EndedCleanly reports whether the journal at path ends with run_ended:
// its host shut down after every submission ended, so nothing of it can
// be left running. Only the file's last 512 bytes are read: journals that
// carry many records are large.
func EndedCleanly(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
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

// Submission is a submission of an earlier run that started and never
// ended, as Unended finds it.
type Submission struct {
	AgentID, SubmissionID string
	// PGID is its process group, the pid of its first process.
	PGID int
}

// Unended returns the submissions in r's journal that started and never
// ended (no submission_ended, no orphan_terminated): when r's host is gone
// without a clean end, their process groups are what the orphan sweep
// looks for (SPEC §4). Record lines are not decoded. A journal that
// cannot be read has none.
func Unended(r Run) []Submission {
	started := map[string]Event{}
	var order []string
	_, _ = Read(r.Journal, func(ev Event) {
		switch ev.Event {
		case "submission_started":
			if _, ok := started[ev.SubmissionID]; !ok {
				order = append(order, ev.SubmissionID)
			}
			started[ev.SubmissionID] = ev
		case "submission_ended", "orphan_terminated":
			delete(started, ev.SubmissionID)
		}
	}, "record")
	var out []Submission
	for _, id := range order {
		if ev, ok := started[id]; ok {
			out = append(out, Submission{AgentID: ev.AgentID, SubmissionID: id, PGID: ev.PID})
		}
	}
	return out
}

// leftoverAge is how long a run folder without a journal's first line must
// have been left alone to be a leftover: a host starting now makes its
// folder and writes run_started at once.
const leftoverAge = time.Minute

// leftover reports whether folder, whose journal's first line cannot be
// read, holds nothing else and was last changed over leftoverAge ago.
func leftover(folder string) bool {
	entries, err := os.ReadDir(folder)
	if err != nil || len(entries) > 1 || len(entries) == 1 && entries[0].Name() != "journal.jsonl" {
		return false
	}
	cutoff := time.Now().Add(-leftoverAge)
	for _, p := range []string{folder, filepath.Join(folder, "journal.jsonl")} {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(cutoff) {
			return false
		}
	}
	return true
}
