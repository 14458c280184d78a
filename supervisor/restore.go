package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
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
		b := s.sessionLocked(mb.Session)
		for _, mr := range mb.Items {
			b.items = append(b.items, s.adoptMail(mailItemOf(mr), s.sessionDir(mb.Session)))
		}
	}
	for _, r := range s.sessionRecordsLocked() {
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
// records used and no longer holds (issue 27): decoding them takes the Go
// heap to twice and more what the restored agents keep, and the runtime
// would keep the pages it grew to for minutes. One collection and the
// release of its free pages, at the end of the start, cost a restore of
// 10,000 records 30-60 ms of CPU and took the host's RSS at its first
// list from 149 to 102 MB (BENCHMARKS.md, "Restoring 10,000 records").
func (s *Supervisor) giveBack() {
	if s.restored >= giveBackFrom {
		debug.FreeOSMemory()
	}
}

// Restored returns how many agents were restored from earlier runs at
// start (SPEC §10).
func (s *Supervisor) Restored() int { return s.restored }

// ParseDuration reads a --restore-window or --log-retention value: a Go
// duration ("36h", "90m"), a number of days ("7d", "30d"), or "0".
func ParseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if n, ok := strings.CutSuffix(v, "d"); ok {
		var days float64
		days, err = strconv.ParseFloat(n, 64)
		d = time.Duration(days * float64(24*time.Hour))
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration: give days (7d), hours (36h) or 0", v)
	case d < 0:
		return 0, fmt.Errorf("%q is negative: give days (7d), hours (36h) or 0", v)
	}
	return d, nil
}

// Forget removes agent id, with its descendants, from the table and list
// for good (SPEC §10 forget, §14: a finished subtree), deepest first: the
// journal records it, so a later host does not restore them, and their
// paths are free again; their log and message files stay on disk.
// Descendants lists the others it forgot. Errors: "agent not found:
// <id>"; an agent of the subtree that runs is refused ("agent <id> is
// running; interrupt or close it before forgetting it").
func (s *Supervisor) Forget(ctx context.Context, id string) (proto.StatusResult, error) {
	tree, unlock, err := s.lockTree(proto.CallerOf(ctx), id)
	if err != nil {
		return proto.StatusResult{}, err
	}
	defer unlock()
	a := tree[len(tree)-1]
	s.mu.Lock()
	for _, d := range tree {
		if d.running != nil || d.replacing {
			s.mu.Unlock()
			return proto.StatusResult{}, proto.ErrForgetRunning(d.id)
		}
	}
	var dones []chan struct{}
	for _, d := range tree {
		if n := len(d.subs); n > 0 && d.subs[n-1].done != nil {
			dones = append(dones, d.subs[n-1].done)
		}
	}
	s.mu.Unlock()
	// Each agent took its final status, and its submission's end may be
	// being journaled: "forgotten" must come after it, or a later host
	// replaying the journal would bring the agent back. The operation
	// locks keep new submissions from starting meanwhile.
	for _, done := range dones {
		<-done
	}
	res := proto.StatusResult{AgentID: a.id, Status: proto.StatusForgotten}
	for _, d := range tree {
		s.mu.Lock()
		if _, ok := s.agents[d.id]; !ok {
			s.mu.Unlock()
			if d == a {
				return proto.StatusResult{}, proto.ErrNotFound(id)
			}
			continue
		}
		s.removeLocked(d)
		s.forgotten = append(s.forgotten, d.id)
		s.mu.Unlock()
		s.journal.Write(journal.Event{Event: "forgotten", AgentID: d.id, Note: "its logs stay on disk"})
		s.hub.Publish(proto.Change{AgentID: d.id, Agent: true, Forgotten: true})
		if d != a {
			res.Descendants = append(res.Descendants, d.id)
		}
	}
	return res, nil
}

// removeLocked takes agent a out of the supervisor: its id, path, display
// lines and mailbox. Call with s.mu held.
func (s *Supervisor) removeLocked(a *agent) {
	delete(s.agents, a.id)
	if s.paths[a.path] == a {
		delete(s.paths, a.path)
	}
	if i := slices.Index(s.order, a); i >= 0 {
		s.order = slices.Delete(s.order, i, i+1)
	}
	for _, sub := range a.subs {
		if sub.out != nil {
			s.lineMem.Forget(sub.out)
		}
	}
	for _, it := range append(a.inbox, a.handed...) {
		it.msg.Discard()
	}
	a.inbox, a.handed = nil, nil
}

// Message returns the whole message of submission seq (1-based; 0 = the
// latest) of agent id, read from its message file beside the log (SPEC
// §10): resend and edit-and-resend send the whole message, never the cut
// copy the journal and the JSON results hold. It does file I/O; call it off
// the UI goroutine. Errors: unknown agent or submission; a message file
// that is gone when only the head of the message is known. A long message
// is better streamed (WriteMessage, Resend).
func (s *Supervisor) Message(ctx context.Context, id string, seq int) (string, error) {
	var b strings.Builder
	if err := s.WriteMessage(ctx, &b, id, seq); err != nil {
		return "", err
	}
	return b.String(), nil
}

// WriteMessage writes the whole message of submission seq (0 = the
// latest) of agent id to w as it reads it from its file (proto.MessageFiles):
// never whole in memory. Errors: those of Message; w's.
func (s *Supervisor) WriteMessage(ctx context.Context, w io.Writer, id string, seq int) error {
	r, err := s.openMessage(id, seq)
	if err != nil {
		return err
	}
	defer r.Close() //nolint:errcheck // read only: its Close cannot lose data
	_, err = io.Copy(w, r)
	return err
}

// SendFrom is Send, or with queue Queue, of the message read from r to its
// end, which goes to a file of the run (ReadMessage), never whole in
// memory (proto.MessageFiles).
func (s *Supervisor) SendFrom(ctx context.Context, id string, r io.Reader, interrupt, queue bool) (proto.SendResult, error) {
	m, err := s.ReadMessage(r)
	if err != nil {
		return proto.SendResult{}, err
	}
	if queue {
		return s.QueueMessage(ctx, id, m)
	}
	return s.SendMessage(ctx, id, m, interrupt)
}

// Resend sends again (queue: queues) the whole message of agent id's latest
// submission, copied from its kept file to the new one (SPEC §10; POST
// /v1/agents/{id}/resend): a 63 MiB message costs the host a copy buffer,
// not 63 MiB. Errors: those of WriteMessage and SendFrom.
func (s *Supervisor) Resend(ctx context.Context, id string, interrupt, queue bool) (proto.SendResult, error) {
	r, err := s.openMessage(id, 0)
	if err != nil {
		return proto.SendResult{}, err
	}
	defer r.Close() //nolint:errcheck // read only: its Close cannot lose data
	return s.SendFrom(ctx, id, r, interrupt, queue)
}

// openMessage opens the whole message of submission seq (0 = the latest)
// of agent id: its kept file, the message not kept yet (launch is about to
// keep it), or the head when that is the whole message.
func (s *Supervisor) openMessage(id string, seq int) (io.ReadCloser, error) {
	s.mu.Lock()
	a, err := s.lookup(id)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if seq == 0 {
		seq = len(a.subs)
	}
	if seq < 1 || seq > len(a.subs) {
		s.mu.Unlock()
		if len(a.subs) == 0 {
			return nil, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("agent %s has no submission yet, so no message", a.id)}
		}
		return nil, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("agent %s has no submission %d; it has %d", a.id, seq, len(a.subs))}
	}
	sub := a.subs[seq-1]
	path, head, pending := sub.msgPath(), sub.message, sub.pending
	s.mu.Unlock()
	cut := strings.Contains(head, "...[truncated: ")
	if path != "" {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) && pending != nil {
			// not kept yet: launch is about to
			b, perr := pending.read()
			if perr == nil {
				return io.NopCloser(bytes.NewReader(b)), nil
			}
			if errors.Is(perr, fs.ErrNotExist) {
				f, err = os.Open(path) // kept meanwhile
			}
		}
		if err == nil {
			return f, nil
		}
		if !cut {
			return io.NopCloser(strings.NewReader(head)), nil
		}
		return nil, &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("cannot read the whole message of submission %d of agent %s from %s: %v; only its first %d bytes are known", seq, a.id, path, err, journal.MaxMessageHead)}
	}
	if cut {
		return nil, &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("the whole message of submission %d of agent %s was not kept on disk; only its first %d bytes are known", seq, a.id, journal.MaxMessageHead)}
	}
	return io.NopCloser(strings.NewReader(head)), nil
}

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
	s.mu.Lock()
	if sub.tr == nil {
		sub.tr = tr
	}
	s.mu.Unlock()
}
