package supervisor

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/internal/mailbox"
	"github.com/subdash/subdash/supervisor/internal/steer"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
	"github.com/subdash/subdash/supervisor/termtext"
)

// Records and restore (SPEC §10): the journal (internal/journal) keeps
// every agent's record; at start a host restores the records of its
// directory from the journals of earlier runs (journal.Load, in restore),
// carries them on in its own journal's checkpoint, and turns those inside
// --restore-window into agents (agentOf); recordLocked is an agent's
// record for the next checkpoint.

// Defaults of SPEC §10.
const (
	// DefaultRestoreWindow is how recently a record must have been
	// updated to be restored at start (--restore-window).
	DefaultRestoreWindow = 7 * 24 * time.Hour
	// DefaultLogRetention is how old a run must be for its logs to be
	// removed at start (--log-retention), unless it holds a record inside
	// the restore window.
	DefaultLogRetention = 30 * 24 * time.Hour
)

// recordLocked returns a's record. Call with s.mu held.
func (s *Supervisor) recordLocked(a *agent) *journal.AgentRecord {
	r := &journal.AgentRecord{
		AgentID: a.id, Dir: s.cfg.Dir, Status: a.status, BeforeClose: a.beforeClose,
		CreatedAt: proto.Time{Time: a.createdAt}, UpdatedAt: proto.Time{Time: a.updatedAt}, LastMessage: a.lastMessage,
		LastOutput: copyStr(a.lastOutput), LastError: copyStr(a.lastError), SessionID: a.sessionID,
		Command: a.command, Builtin: a.builtin, Runner: a.runner, Usage: a.usage,
		Submissions: make([]journal.SubmissionRecord, len(a.subs)),
		TaskName:    a.taskName, AgentPath: a.path, ParentID: a.parentID, Session: a.session, ClosedBy: a.closedBy,
		InnerAgents: slices.Clone(a.inner),
	}
	r.Mailbox = a.mailbox.Records()
	if p := a.preset; p != nil {
		r.Preset = presetRecord(p, a.home)
	}
	for tool := range a.alwaysAllowed {
		r.AlwaysAllowed = append(r.AlwaysAllowed, tool)
	}
	slices.Sort(r.AlwaysAllowed)
	for i, sub := range a.subs {
		r.Submissions[i] = journal.SubmissionRecord{
			ID: sub.id, Seq: sub.seq, Message: sub.message, MessageBytes: sub.msgLen, MessageFile: sub.msgPath(),
			Command: sub.command, Log: sub.logPath(), StartedAt: proto.Time{Time: sub.startedAt}, EndedAt: proto.Time{Time: sub.endedAt},
			Status: sub.status, ExitCode: sub.exitCode, Signal: sub.signal, LastError: copyStr(sub.lastError),
			LogDropped: max(sub.out.LogDropped(), sub.logDropped), Questions: questionRecordsLocked(sub),
		}
		if sub.steer != nil {
			r.Submissions[i].Steered = sub.steer.book.Messages()
		}
		if sub.chg != nil {
			r.Submissions[i].Changes = sub.chg.record()
		}
	}
	return r
}

// agentOf turns a restored record into an agent. Its submissions hold no
// display lines: they are read back from the log file when viewed.
func agentOf(r *journal.AgentRecord, fallback Config) *agent {
	a := &agent{
		id: r.AgentID, createdAt: r.CreatedAt.Time, status: r.Status, beforeClose: r.BeforeClose,
		updatedAt: r.UpdatedAt.Time, lastMessage: r.LastMessage, lastOutput: r.LastOutput, lastError: r.LastError,
		sessionID: r.SessionID, usage: r.Usage, command: r.Command, runner: r.Runner, restored: true,
		taskName: r.TaskName, path: r.AgentPath, parentID: r.ParentID, session: r.Session, closedBy: r.ClosedBy,
		inner: r.InnerAgents,
	}
	for _, mr := range r.Mailbox {
		a.mailbox.Put(mailbox.ItemOf(mr))
	}
	for _, tool := range r.AlwaysAllowed {
		if a.alwaysAllowed == nil {
			a.alwaysAllowed = map[string]bool{}
		}
		a.alwaysAllowed[tool] = true
	}
	if a.runner == "" {
		a.runner = runner.Local
	}
	// The built-in agent is part of subdash: a restored agent of it runs
	// this host's binary, wherever the one that spawned it was.
	exe := fallback.Executable
	if r.Builtin && exe != "" {
		a.command, a.builtin = BuiltinCommand(exe), true
	}
	if p := r.Preset; p != nil {
		if p.Name != "builtin" || exe == "" {
			exe = p.Executable
		}
		if lp, err := LookupPreset(p.Name, p.Args, exe); err == nil {
			lp.Approvals = p.Approvals && (lp.Name == "claude" || lp.isCodexApp())
			a.preset = lp
			if lp.isMemo() && a.runner == runner.Local {
				a.home = p.Home
				if a.home == "" && len(r.Submissions) > 0 && r.Submissions[0].Log != "" {
					// spawned by a subdash that gave it none
					a.home = filepath.Join(filepath.Dir(r.Submissions[0].Log), memoHomeName)
				}
			}
		}
	}
	if a.preset == nil && a.command == "" {
		// a record of an older subdash that did not keep the command
		a.command, a.preset = fallback.Command, fallback.Preset
		a.builtin = fallback.CommandSource == SourceBuiltin && a.preset == nil
	}
	a.subs = make([]*submission, len(r.Submissions))
	folder := "" // the agent's folder in a run, shared by its submissions there
	for i, sr := range r.Submissions {
		a.subs[i] = &submission{
			id: sr.ID, seq: sr.Seq, message: sr.Message, msgLen: sr.MessageBytes,
			command: sr.Command, startedAt: sr.StartedAt.Time, endedAt: sr.EndedAt.Time,
			status: sr.Status, exitCode: sr.ExitCode, signal: sr.Signal, lastError: sr.LastError, restored: true, logDropped: sr.LogDropped,
			chg: changesOf(sr.Changes), appr: restoredApprovals(sr.Questions),
		}
		folder = a.subs[i].setFiles(sr.Log, sr.MessageFile, folder)
		if len(sr.Steered) > 0 { // its receipts, as they were (SPEC §11)
			a.subs[i].steer = &steering{book: &steer.Book{}}
			a.subs[i].steer.book.Restore(sr.Steered)
		}
	}
	packRestored(a)
	endNowLocked(a)
	return a
}

// packRestored puts the strings that restored agent a keeps (ids,
// messages, its answer, its submissions' folder) into one string of its
// own, and its statuses and commands in the constants and the agent's
// command they equal: the JSON decoder made each a string of its own
// among those of the record it read, which is garbage once the start has
// carried it on, and the pages of many records would stay in use for the
// few strings the agents keep.
func packRestored(a *agent) {
	a.status, a.beforeClose = knownStatus(a.status), knownStatus(a.beforeClose)
	if a.runner == runner.Local {
		a.runner = runner.Local
	}
	keep := []*string{&a.id, &a.sessionID, &a.command, &a.taskName, &a.path, &a.parentID, &a.session, &a.closedBy}
	for _, p := range []**string{&a.lastOutput, &a.lastError} {
		if *p != nil {
			*p = copyStr(*p)
			keep = append(keep, *p)
		}
	}
	for i, sub := range a.subs {
		if i == 0 || sub.folder != a.subs[i-1].folder {
			keep = append(keep, &sub.folder)
		}
		sub.status = knownStatus(sub.status)
		if sub.command != a.command {
			keep = append(keep, &sub.command)
		}
		keep = append(keep, &sub.id, &sub.message, &sub.signal)
		if sub.lastError != nil {
			sub.lastError = copyStr(sub.lastError)
			keep = append(keep, sub.lastError)
		}
	}
	last := len(a.subs) > 0 && a.subs[len(a.subs)-1].message == a.lastMessage
	if !last {
		keep = append(keep, &a.lastMessage)
	}
	n := 0
	for _, p := range keep {
		n += len(*p)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range keep {
		b.WriteString(*p)
	}
	all := b.String()
	for _, p := range keep {
		v := *p
		*p, all = all[:len(v)], all[len(v):]
	}
	for i, sub := range a.subs {
		if i > 0 && sub.folder == a.subs[i-1].folder {
			sub.folder = a.subs[i-1].folder // the one kept
		}
		if sub.command == a.command {
			sub.command = a.command
		}
	}
	if last {
		a.lastMessage = a.subs[len(a.subs)-1].message // the latest submission's
	}
}

// knownStatus returns st, the constant it equals when it is one.
func knownStatus(st proto.Status) proto.Status {
	for _, k := range []proto.Status{proto.StatusCompleted, proto.StatusErrored, proto.StatusClosed, proto.StatusRunning, proto.StatusNotFound} {
		if st == k {
			return k
		}
	}
	return st
}

// spawnedWith returns how a new agent's submissions run: the host's preset
// or agent command, on the host's runner.
func (s *Supervisor) spawnedWith(a *agent) {
	a.command, a.preset, a.runner = s.cfg.Command, s.cfg.Preset, s.cfg.RunnerName
	a.builtin = s.cfg.CommandSource == SourceBuiltin && a.preset == nil
	if a.preset.isMemo() && a.runner == runner.Local {
		a.home = filepath.Join(s.runDir, a.id, memoHomeName)
	}
}

// presetRecord returns p as the journal keeps it, with the agent's home,
// nil for none.
func presetRecord(p *Preset, home string) *journal.PresetRecord {
	if p == nil {
		return nil
	}
	return &journal.PresetRecord{Name: p.Name, Args: p.Args, Executable: p.executable, Approvals: p.Approvals, Home: home}
}

// restoreSet returns the ids of the records to restore (SPEC §10, §14):
// those updated within window, and their ancestors, so that a restored
// agent's parent is in the table and its path is what it was.
func restoreSet(records []*journal.AgentRecord, now time.Time, window time.Duration) map[string]bool {
	set := map[string]bool{}
	if window <= 0 {
		return set
	}
	byID := make(map[string]*journal.AgentRecord, len(records))
	for _, r := range records {
		byID[r.AgentID] = r
	}
	for _, r := range records {
		if now.Sub(r.UpdatedAt.Time) > window {
			continue
		}
		for p := r; p != nil && !set[p.AgentID]; p = byID[p.ParentID] {
			set[p.AgentID] = true
		}
	}
	return set
}

// adopt adds restored agent a to the supervisor: its path (that of a
// record before the tree, or one another restored agent took, becomes
// /root/<short id>) and its mailbox, whose message files move into this
// run (the run that wrote them may be removed by --log-retention). Call
// with s.mu held, at start.
func (s *Supervisor) adopt(a *agent) {
	if a.path == "" || s.paths[a.path] != nil {
		a.path, a.parentID = proto.JoinPath(proto.RootPath, termtext.ShortID(a.id)), ""
	}
	s.agents[a.id] = a
	s.order = append(s.order, a)
	s.paths[a.path] = a
	for _, it := range a.mailbox.Items() {
		s.adoptItem(it, filepath.Join(s.runDir, a.id))
	}
}

// adoptItem moves the message file of a restored mailbox item into dir,
// a folder of this run (mailbox.Item.Adopt), and numbers the host's next
// items after it.
func (s *Supervisor) adoptItem(it *mailbox.Item, dir string) {
	if it.Seq > s.mailboxSeq.Load() {
		s.mailboxSeq.Store(it.Seq)
	}
	it.Adopt(dir)
}

// subFiles are the log and message files of a submission whose record
// names other paths than those its folder gives (a record of an older
// subdash).
type subFiles struct{ log, msg string }

// logPath returns the submission's log file (SPEC §5), "" for none:
// <folder>/<seq>-<id>.log, made when asked.
func (sub *submission) logPath() string {
	if sub.folder != "" {
		return sub.folder + string(filepath.Separator) + sub.fileName(".log")
	}
	if sub.files != nil {
		return sub.files.log
	}
	return ""
}

// msgPath returns the file holding the submission's whole message (SPEC
// §10), "" for none: <folder>/<seq>-<id>.msg, beside its log file.
func (sub *submission) msgPath() string {
	if sub.folder != "" {
		return sub.folder + string(filepath.Separator) + sub.fileName(".msg")
	}
	if sub.files != nil {
		return sub.files.msg
	}
	return ""
}

// hasLog reports whether the submission has a log file, without making
// its path.
func (sub *submission) hasLog() bool {
	return sub.folder != "" || sub.files != nil && sub.files.log != ""
}

// fileName returns <seq>-<id><ext>, the name of its log and message files
// in its folder (journal.LogPath).
func (sub *submission) fileName(ext string) string {
	return strconv.Itoa(sub.seq) + "-" + sub.id + ext
}

// setFiles gives a restored submission the log and message files its
// record names: the folder they are in when they are where journal.LogPath
// and journal.MessagePath put them (prev, the folder of the agent's
// submission before, when it is the same: one string for all), else the
// paths themselves. It returns the folder set, or prev.
func (sub *submission) setFiles(log, msg, prev string) string {
	name := sub.fileName("")
	folder, ok := strings.CutSuffix(log, string(filepath.Separator)+name+".log")
	if ok && folder != "" && len(msg) == len(log) && strings.HasPrefix(msg, folder) &&
		msg[len(folder):len(msg)-len(".msg")] == string(filepath.Separator)+name && strings.HasSuffix(msg, ".msg") {
		if folder == prev {
			folder = prev
		}
		sub.folder = folder
		return folder
	}
	if log != "" || msg != "" {
		sub.files = &subFiles{log: log, msg: msg}
	}
	return prev
}

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
