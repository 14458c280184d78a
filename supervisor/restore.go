package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/mailbox"
	"github.com/subdash/subdash/supervisor/internal/output"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/transcript"
)

// openRun creates the run's folder <StateDir>/runs/<run-id>/ (mode 0700)
// and its journal. When the state directory cannot be written (read-only,
// another owner), the run goes to a folder under the temporary directory
// instead, with a warning saying so: the records of earlier runs are still
// restored from the state directory, and nothing of this run is lost while
// it runs (SPEC §10). It fails only when neither can be written.
func openRun(cfg *Config, runID string) (string, *journal.Writer, error) {
	runDir := filepath.Join(cfg.StateDir, "runs", runID)
	j, err := createRun(runDir)
	if err == nil {
		return runDir, j, nil
	}
	fallback := filepath.Join(os.TempDir(), fmt.Sprintf("subdash-%d-state", os.Getuid()), "runs", runID)
	j, ferr := createRun(fallback)
	if ferr != nil {
		return "", nil, fmt.Errorf("cannot create state directory %s: %v; pass a writable --state-dir", runDir, err)
	}
	cfg.Warnings = append(cfg.Warnings, fmt.Sprintf(
		"state directory %s is not writable (%v): this run's logs and journal are in %s, and a later subdash will not restore its agents; fix the permissions or pass a writable --state-dir",
		cfg.StateDir, errors.Unwrap(err), fallback))
	return fallback, j, nil
}

func createRun(runDir string) (*journal.Writer, error) {
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return nil, err
	}
	return journal.Create(filepath.Join(runDir, "journal.jsonl"))
}

// restore restores the records of this directory from runs, the earlier
// runs (SPEC §10): those updated within RestoreWindow become agents; the
// others, up to LogRetention old, are only carried on in this run's
// checkpoint, so a later host with a wider window still finds them.
// Restored agents hold no display lines until viewed. What could not be
// restored is added to the configuration's warnings. now is when it began
// reading the earlier runs: the checkpoint's records bear that time, as
// they hold every event written before it (and perhaps some after, which a
// later replay applies again; see journal.Load).
func (s *Supervisor) restore(runs journal.Runs, now time.Time) {
	ld := journal.Load(runs, s.cfg.Dir)
	s.cfg.Warnings = append(s.cfg.Warnings, ld.Warnings...)
	s.cfg.Notes = append(s.cfg.Notes, ld.Notes...)
	kept, dropped := 0, 0
	checkpoint := make([]journal.Event, 0, len(ld.Records)+1)
	restoring := restoreSet(ld.Records, now, s.cfg.RestoreWindow)
	for _, r := range ld.Records {
		age := now.Sub(r.UpdatedAt.Time)
		switch {
		case restoring[r.AgentID]:
			a := agentOf(r, s.cfg)
			s.adopt(a)
			checkpoint = append(checkpoint, journal.Event{Time: proto.Time{Time: now}, Event: "record", AgentID: a.id, Record: journal.Carry(r, s.recordLocked(a))})
		case s.cfg.LogRetention <= 0 || age <= s.cfg.LogRetention:
			kept++
			checkpoint = append(checkpoint, journal.Event{Time: proto.Time{Time: now}, Event: "record", AgentID: r.AgentID, Record: r})
		default:
			dropped++
		}
	}
	s.restored = len(s.order)
	for _, mb := range ld.Mailboxes {
		b := s.rootLocked(mb.Session)
		for _, mr := range mb.Items {
			it := mailbox.ItemOf(mr)
			s.adoptItem(it, s.rootDir(mb.Session))
			b.Put(it)
		}
	}
	for _, r := range s.rootRecordsLocked() {
		checkpoint = append(checkpoint, journal.Event{Time: proto.Time{Time: now}, Event: "mailbox", Session: r.Session, Mailbox: r})
	}
	s.journal.WriteAll(append(checkpoint, journal.Event{Event: "records_restored", Note: fmt.Sprintf(
		"restored %d agent(s); kept %d record(s) outside the restore window of %s; dropped %d older than the log retention of %s",
		s.restored, kept, proto.FormatDuration(s.cfg.RestoreWindow), dropped, proto.FormatDuration(s.cfg.LogRetention))}))
	if s.restored > 0 {
		s.cfg.Notes = append(s.cfg.Notes, proto.RestoredNote(s.restored, s.cfg.RestoreWindow))
	}
}

// giveBackFrom is how many restored agents make a start give back the
// memory its restore used and no longer holds (giveBack).
const giveBackFrom = 1000

// giveBack returns to the system the memory that the restore of many
// records used and no longer holds: decoding them takes the Go heap to
// twice and more what the restored agents keep, and the runtime would
// keep the pages it grew to for minutes. One collection and the release
// of its free pages at the end of the start cost far less than the pages
// they give back (BENCHMARKS.md, "Restoring 10,000 records").
func (s *Supervisor) giveBack() {
	if s.restored >= giveBackFrom {
		debug.FreeOSMemory()
	}
}

// Restored returns how many agents were restored from earlier runs at
// start (SPEC §10).
func (s *Supervisor) Restored() int { return s.restored }

// checkRestored reports, in words, why restored agent a cannot run on this
// host, before its next submission takes its mailbox: it was spawned on
// another runner (SPEC §13), or its agent CLI is missing on this machine
// (checkCLI). In a pod the image's PATH decides, which only the pod's
// shell can tell: there a missing CLI is the submission's exit 127.
func (s *Supervisor) checkRestored(a *agent) error {
	if err := s.checkRunner(a); err != nil {
		return err
	}
	if s.cfg.RunnerName != runner.Local {
		return nil
	}
	return checkCLI(a, s.cfg.Dir, s.cfg.Environ)
}

// checkRunner refuses agent a when it was spawned on a runner other than
// this host's (SPEC §13: its session store, pod or process groups are
// that runner's).
func (s *Supervisor) checkRunner(a *agent) error {
	if a.runner == "" || a.runner == s.cfg.RunnerName {
		return nil
	}
	return &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("agent %s runs on the %s runner; start the host with --runner %s to continue it", a.id, a.runner, a.runner)}
}

// checkCLI reports, in words, that the agent CLI a restored agent was
// spawned with is missing now (SPEC §10: it keeps its command or preset
// whatever the new host's flags). A plain command is checked when its
// first word is a plain program name; shell syntax is left to the shell.
// The shell answers, with the submissions' environment and directory, so
// builtins and PATH count as they will for the submission.
func checkCLI(a *agent, dir string, env []string) error {
	var name, what string
	switch p := a.preset; {
	case p != nil && p.Name == "builtin":
		if _, err := os.Stat(p.executable); err != nil {
			return &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("agent %s was spawned with the builtin preset of %s, which is gone now (%v); spawn a new agent to continue", a.id, p.executable, err)}
		}
		return nil
	case p != nil:
		name, what = p.CLI(), "the "+p.Name+" preset"
	default:
		f := strings.Fields(a.command)
		if len(f) == 0 || strings.ContainsAny(f[0], "=$`'\"\\;|&<>(){}*?[]~") {
			return nil
		}
		name, what = f[0], "the agent command "+a.command
	}
	sh := exec.Command("/bin/sh", "-c", `command -v -- "$1" >/dev/null`, "sh", name)
	sh.Dir, sh.Env = dir, env
	if sh.Run() != nil {
		return &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("agent %s was spawned with %s, but %s is not found now; install it or put it on PATH to continue this agent, or spawn a new one", a.id, what, name)}
	}
	return nil
}

// restoredTranscript returns sub's transcript, and whether it is one of a
// restored submission of a preset with structured output that was not
// read back from its log file yet (loadOutput does).
func (s *Supervisor) restoredTranscript(id string, sub *submission) (tr *transcriptState, unread bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sub.tr != nil || !sub.restored {
		return sub.tr, false
	}
	a, err := s.lookup(id)
	return nil, err == nil && a.preset.Structured()
}

// loadTranscript rebuilds the transcript of a restored submission of a
// structured preset from its log file (SPEC §10: restored records hold
// nothing until viewed). The log holds stdout and stderr in one file, so
// a line of stderr that is not JSON shows as an unparsed line; where the
// log misses output (SPEC §5) a note says how much, and the parse goes on
// after it.
func (s *Supervisor) loadTranscript(id string, sub *submission) {
	s.mu.Lock()
	a, err := s.lookup(id)
	if err != nil || sub.tr != nil || !sub.restored || !a.preset.Structured() {
		s.mu.Unlock()
		return
	}
	preset := a.preset
	s.mu.Unlock()
	tr := newTranscriptState(preset, nil)
	if lg, err := output.OpenLog(sub.logPath()); err == nil {
		_ = lg.Walk(func(part io.Reader) error {
			r := bufio.NewReaderSize(part, 256<<10)
			for {
				line, err := r.ReadBytes('\n')
				if len(line) > 0 {
					tr.line(runner.Stdout, bytes.TrimRight(line, "\r\n"))
				}
				if err != nil {
					return nil
				}
			}
		}, func(g output.Gap) error {
			tr.add(transcript.Entry{Kind: transcript.KindNote, Text: strings.TrimPrefix(g.Marker(), "subdash: ")})
			return nil
		})
		lg.Close()
	} else {
		tr.line(runner.Stderr, []byte("subdash: the log file of this submission is gone ("+sub.logPath()+"); its transcript cannot be shown"))
	}
	tr.outcome() // ends the parse
	s.restoreAnswers(sub, tr)
	s.mu.Lock()
	if sub.tr == nil {
		sub.tr = tr
	}
	s.mu.Unlock()
}
