package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/budget"
	"github.com/subdash/subdash/supervisor/internal/output"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// Agents returns a snapshot of every agent, oldest first.
func (s *Supervisor) Agents() []proto.AgentInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]proto.AgentInfo, 0, len(s.order))
	for _, a := range s.order {
		out = append(out, s.infoLocked(a))
	}
	return out
}

// Agent returns a snapshot of agent id; ok is false for an unknown id.
func (s *Supervisor) Agent(id string) (info proto.AgentInfo, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.lookup(id)
	if err != nil {
		return proto.AgentInfo{}, false
	}
	return s.infoLocked(a), true
}

func (s *Supervisor) infoLocked(a *agent) proto.AgentInfo {
	info := proto.AgentInfo{
		Summary:    s.summaryLocked(a),
		LastOutput: copyStr(a.lastOutput),
		LastError:  copyStr(a.lastError),
		Origin:     a.origin,
		Structured: a.preset.Structured(),
	}
	if a.preset != nil {
		info.Preset = a.preset.Name
	}
	info.Submissions = make([]proto.SubmissionInfo, len(a.subs))
	for i, sub := range a.subs {
		info.Submissions[i] = proto.SubmissionInfo{
			ID: sub.id, Seq: sub.seq, Message: sub.message, Command: sub.command,
			Status: sub.status, StartedAt: sub.startedAt, EndedAt: sub.endedAt,
			ExitCode: sub.exitCode, Signal: sub.signal, LastError: copyStr(sub.lastError),
			Stopping: sub.reason != "" && sub.endedAt.IsZero(), LogPath: sub.logPath(),
			Output: sub.counts(), Changes: s.changesLocked(sub),
		}
	}
	if u := info.Summary.Usage; u != nil {
		info.Usage = *u
	}
	if r := a.running; r != nil {
		info.Stopping = r.reason != ""
		if r.tr != nil {
			info.Activity, _ = r.tr.activity()
		}
		if p := info.PendingApprovals; len(p) > 0 {
			info.Activity = proto.ApprovalActivity(p[0])
		}
		if q := info.PendingQuestions; len(q) > 0 && len(info.PendingApprovals) == 0 {
			info.Activity = proto.QuestionActivity(q[0])
		}
	}
	return info
}

// counts returns how much output sub holds now. Called with s.mu held
// (the output's and the transcript's locks come after it, as in eviction).
func (sub *submission) counts() proto.OutputCounts {
	var c proto.OutputCounts
	if sub.out == nil {
		return proto.OutputCounts{Evicted: true}
	}
	c.FirstLine, c.Lines, _, c.Evicted = sub.out.Window(0, 0)
	if sub.tr != nil {
		var pending string
		c.FirstEntry, c.Entries, _, pending = sub.tr.window(0, 0)
		if pending != "" {
			c.Entries++
		}
	}
	return c
}

// Counts returns how much output submission seq (0 = the latest) of agent
// id holds, and that submission's number. Errors: unknown agent or
// submission.
func (s *Supervisor) Counts(id string, seq int) (proto.OutputCounts, int, error) {
	sub, err := s.submission(id, seq)
	if err != nil {
		return proto.OutputCounts{}, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return sub.counts(), sub.seq, nil
}

// Window returns up to n display lines of submission seq (1-based; 0 means
// the latest) of agent id, starting at absolute line from; from < 0 asks
// for the last n lines (the bottom of the log, follow mode). It copies only
// the n lines asked for, so its cost does not depend on the scrollback size.
// A submission whose lines were released from memory (a finished or
// restored one, SPEC §5, §10) is read back from its log file first, which
// is file I/O: call it off the UI goroutine. Errors: unknown agent or
// submission, an unreadable log file.
func (s *Supervisor) Window(_ context.Context, id string, seq int, from int64, n int) (proto.Window, error) {
	return readBack(s, id, seq, func() (proto.Window, bool, error) { return s.window(id, seq, from, n) })
}

// window is Window from memory; evicted says the lines were released.
func (s *Supervisor) window(id string, seq int, from int64, n int) (w proto.Window, evicted bool, err error) {
	sub, err := s.submission(id, seq)
	if err != nil {
		return proto.Window{}, false, err
	}
	if from < 0 {
		first, total, _, _ := sub.out.Window(0, 0)
		from = max(first, total-int64(n))
	}
	w.First, w.Total, w.Lines, evicted = sub.out.Window(from, n)
	return w, evicted, nil
}

// readBack calls get, and when what it got was released from memory,
// reads submission seq of agent id back from its log file (loadOutput)
// and calls get again. A read back counts as a use of the submission for
// the memory limit of finished submissions, so the next get finds it; one
// released again every time (a limit too small for one submission) is an
// error after three tries, never a window without its lines.
func readBack[T any](s *Supervisor, id string, seq int, get func() (T, bool, error)) (T, error) {
	for try := 0; ; try++ {
		v, evicted, err := get()
		if err != nil || !evicted {
			return v, err
		}
		if try == 3 {
			return v, &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("the output of submission %d of agent %s was released from memory again each time it was read back; raise --line-memory", seq, id)}
		}
		if err := s.loadOutput(id, seq); err != nil {
			return v, err
		}
	}
}

// loadOutput reads the display lines (and the transcript) of a submission
// whose scrollback was released back from its log file, keeping the newest
// Scrollback lines. It does file I/O. It counts as a use of the submission
// for the memory limit of finished submissions (see defaultResident).
func (s *Supervisor) loadOutput(id string, seq int) error {
	sub, err := s.submission(id, seq)
	if err != nil {
		return err
	}
	_, _, _, evicted := sub.out.Window(0, 0)
	if err := sub.out.Reload(sub.logPath(), s.cfg.Scrollback); err != nil {
		return &proto.Error{Code: proto.CodeInternal, Message: err.Error()}
	}
	s.loadTranscript(id, sub)
	s.mu.Lock()
	if !sub.endedAt.IsZero() {
		s.lineMem.Keep(sub.out)
	}
	agentID := ""
	if a, err := s.lookup(id); err == nil {
		agentID = a.id
	}
	s.mu.Unlock()
	if evicted && agentID != "" {
		// the snapshot's counts are known again (OutputCounts.Evicted)
		s.hub.Publish(proto.Change{AgentID: agentID, Agent: true})
	}
	return nil
}

func (s *Supervisor) submission(id string, seq int) (*submission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	if seq == 0 {
		seq = len(a.subs)
	}
	if seq < 1 || seq > len(a.subs) {
		return nil, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("agent %s has no submission %d; it has %d", a.id, seq, len(a.subs))}
	}
	sub := a.subs[seq-1]
	if sub.out == nil && sub.restored {
		sub.out = output.Restored(s.lineMem)
	}
	if sub.out == nil {
		return nil, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("submission %d of agent %s has not started", seq, a.id)}
	}
	return sub, nil
}

// Logs returns the output of submission seq (1-based; 0 means the latest)
// of agent id as plain text (SPEC §3 logs): the log file's bytes, stdout and
// stderr in arrival order, turned into lines with every escape sequence and
// control character removed; for a preset with a transcript (SPEC §8), the
// transcript the log holds, as text (writeTranscriptText). Errors: "agent
// not found: <id>", an unknown submission, an unreadable log file. For
// large logs prefer WriteLogs, which streams.
func (s *Supervisor) Logs(id string, seq int) (string, error) {
	var b strings.Builder
	err := s.WriteLogs(context.Background(), &b, id, seq, false)
	return b.String(), err
}

// WriteLogs writes the output of submission seq (0 = latest) of agent id to
// w as it reads the log: as plain text like Logs, each run of output the
// log misses as its marker line (SPEC §5), or, with raw, the bytes the log
// holds, the child's own (escape sequences, NUL bytes and all; where bytes
// are missing, WriteRawLog says). Errors are those of Logs, found before
// anything is written, or w's.
func (s *Supervisor) WriteLogs(ctx context.Context, w io.Writer, id string, seq int, raw bool) error {
	if raw {
		return s.WriteRawLog(ctx, w, id, seq, nil)
	}
	lg, path, err := s.openLog(id, seq)
	if err != nil {
		return err
	}
	defer lg.Close()
	s.mu.Lock()
	var preset *Preset
	if a, err := s.lookup(id); err == nil {
		preset = a.preset
	}
	s.mu.Unlock()
	if preset.Structured() {
		err = writeTranscriptText(w, lg, preset)
	} else {
		err = lg.WriteLines(w, false)
	}
	if err != nil {
		return &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("cannot read log file %s: %v", path, err)}
	}
	return nil
}

// WriteRawLog writes the bytes the log of submission seq (0 = latest) of
// agent id holds to w, unchanged, and first hands gaps (when not nil)
// where output is missing in them (none: it holds every byte), so a
// caller says it beside the bytes (SPEC §5: the raw log's
// proto.LogGapsHeader). Errors are those of WriteLogs.
func (s *Supervisor) WriteRawLog(_ context.Context, w io.Writer, id string, seq int, gaps func([]proto.LogGap)) error {
	lg, path, err := s.openLog(id, seq)
	if err != nil {
		return err
	}
	defer lg.Close()
	if gaps != nil {
		gaps(lg.Gaps())
	}
	if _, err := io.Copy(w, lg); err != nil {
		return &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("cannot read log file %s: %v", path, err)}
	}
	return nil
}

// openLog opens the log of submission seq (0 = latest) of agent id, with
// the errors of Logs.
func (s *Supervisor) openLog(id string, seq int) (*output.Log, string, error) {
	sub, err := s.submission(id, seq)
	if err != nil {
		return nil, "", err
	}
	lg, err := output.OpenLog(sub.logPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, sub.logPath(), &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf("the log file %s of submission %d of agent %s is gone (removed by --log-retention or by hand); its output cannot be shown", sub.logPath(), sub.seq, id)}
	}
	if err != nil {
		return nil, sub.logPath(), &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("cannot read log file %s: %v", sub.logPath(), err)}
	}
	return lg, sub.logPath(), nil
}

// LogPath returns the log file of submission seq (0 = latest) of agent id.
func (s *Supervisor) LogPath(id string, seq int) (string, error) {
	sub, err := s.submission(id, seq)
	if err != nil {
		return "", err
	}
	return sub.logPath(), nil
}

// rateLocked returns the output rate of a's latest submission (SPEC §7
// the activity column), nil when it read nothing lately.
func rateLocked(a *agent) *proto.OutputRate {
	if n := len(a.subs); n > 0 {
		return a.subs[n-1].out.Rate(time.Now())
	}
	return nil
}

// logDroppedLocked returns the bytes of a's latest submission's output
// its log files do not hold (SPEC §5): the output's count, or the
// record's for a restored submission.
func logDroppedLocked(a *agent) int64 {
	n := len(a.subs)
	if n == 0 {
		return 0
	}
	sub := a.subs[n-1]
	return max(sub.out.LogDropped(), sub.logDropped)
}

// failureLocked says what subdash failed to do for a (SPEC §5): its latest
// submission's log file or the journal could not be written; "" when
// nothing failed.
func (s *Supervisor) failureLocked(a *agent) string {
	var parts []string
	if n := len(a.subs); n > 0 {
		if f := a.subs[n-1].out.LogFailure(); f != "" {
			parts = append(parts, f)
		}
	}
	if f := s.hostFailureLocked(); f != "" {
		parts = append(parts, f)
	}
	return strings.Join(parts, "; ")
}

// usageLocked returns the tokens and cost a's agent CLI reported, its
// running submission's so far included (Summary.Usage; nil when none),
// and what of the cost a spent on this host (Summary.RunCostUSD).
func usageLocked(a *agent) (*proto.Usage, float64) {
	u, here := a.usage, a.runCost
	if r := a.running; r != nil && r.tr != nil {
		_, now := r.tr.activity()
		u.Add(now)
		here += now.CostUSD
	}
	if u == (proto.Usage{}) {
		return nil, here
	}
	return &u, here
}

// Spend returns what this host spent against its budgets (SPEC §11
// "Budgets"; GET /v1/info's spend).
func (s *Supervisor) Spend() proto.Spend {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.Spend{FleetSpentUSD: s.fleetSpentLocked(), FleetBudgetUSD: s.cfg.Budget.Fleet, MaxBudgetUSD: s.cfg.Budget.Agent}
}

// fleetSpentLocked is the host's spend since it started: the ended
// submissions' (s.spent) and the running ones' so far.
func (s *Supervisor) fleetSpentLocked() float64 {
	spent := s.spent
	for _, a := range s.order {
		if r := a.running; r != nil && r.tr != nil {
			_, now := r.tr.activity()
			spent += now.CostUSD
		}
	}
	return spent
}

// agentBudgetLocked says why agent a starts no new submission: it spent
// its --max-budget-usd; "" while it may (Summary.BudgetReached).
func (s *Supervisor) agentBudgetLocked(a *agent) string {
	if s.cfg.Budget.Agent <= 0 {
		return ""
	}
	u, _ := usageLocked(a)
	if u == nil {
		return ""
	}
	return budget.AgentReached(termtext.ShortID(a.id), u.CostUSD, s.cfg.Budget.Agent)
}

// checkBudgetLocked refuses a new submission of agent a, or a message
// that would reach its running one, once a spent its --max-budget-usd or
// the host its --fleet-budget-usd (SPEC §11 "Budgets": proto.ErrBudget);
// running submissions go on.
func (s *Supervisor) checkBudgetLocked(a *agent) error {
	if !s.cfg.Budget.On() {
		return nil
	}
	if why := budget.FleetReached(s.fleetSpentLocked(), s.cfg.Budget.Fleet); why != "" {
		return proto.ErrBudget(why)
	}
	if why := s.agentBudgetLocked(a); why != "" {
		return proto.ErrBudget(why)
	}
	return nil
}

// stalledLocked returns when a's running submission turned stalled
// (Summary.StalledSince, SPEC §11), nil when it is not.
func stalledLocked(a *agent) *proto.Time {
	if a.running == nil {
		return nil
	}
	if t, ok := a.running.clock.Since(); ok {
		return &proto.Time{Time: t}
	}
	return nil
}
