package supervisor

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/runner"
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
// the control socket (control.Take), so a start that is refused writes no
// checkpoint at all.

// Defaults of SPEC §10.
const (
	// DefaultRestoreWindow is how recently a record must have been
	// updated to be restored at start (--restore-window).
	DefaultRestoreWindow = 7 * 24 * time.Hour
	// DefaultLogRetention is how old a run must be for its logs to be
	// removed at start (--log-retention), unless it holds a record inside
	// the restore window.
	DefaultLogRetention = 30 * 24 * time.Hour
	// interruptedByHostEnd is last_error of a submission that was running
	// when its host ended (SPEC §10).
	interruptedByHostEnd = "interrupted (host ended)"
	// maxMessageHead is how much of a message is kept in memory and in the
	// records, in bytes; the whole message is in its .msg file.
	maxMessageHead = 4 << 10
)

// PresetRecord is the preset an agent was spawned with, as the journal
// keeps it (SPEC §8, §10).
type PresetRecord struct {
	Name       string `json:"name"`
	Args       string `json:"args,omitempty"`
	Executable string `json:"executable,omitempty"` // this binary, for the builtin preset
	Approvals  bool   `json:"approvals,omitempty"`  // --approvals (SPEC §12)
}

// AgentRecord is an agent's record as the journal keeps it (SPEC §10): what
// a later host needs to show the agent and continue it. Messages are heads
// of at most 4 KiB; the whole message of each submission is in its
// MessageFile.
type AgentRecord struct {
	AgentID     string        `json:"agent_id"`
	Dir         string        `json:"dir"`
	Status      proto.Status  `json:"status"`
	BeforeClose proto.Status  `json:"before_close,omitempty"`
	CreatedAt   proto.Time    `json:"created_at"`
	UpdatedAt   proto.Time    `json:"updated_at"`
	LastMessage string        `json:"last_message"`
	LastOutput  *string       `json:"last_output,omitempty"`
	LastError   *string       `json:"last_error,omitempty"`
	SessionID   string        `json:"session_id,omitempty"`
	Command     string        `json:"command,omitempty"`
	Preset      *PresetRecord `json:"preset,omitempty"`
	Runner      string        `json:"runner,omitempty"`
	// Builtin: Command is the built-in agent of the binary that spawned
	// it; a restoring host runs its own binary's (as for the builtin
	// preset), since the path of the one that wrote the record may be gone.
	Builtin     bool               `json:"builtin,omitempty"`
	Usage       proto.Usage        `json:"usage"`
	Submissions []SubmissionRecord `json:"submissions"`
}

// SubmissionRecord is one submission of an AgentRecord.
type SubmissionRecord struct {
	ID           string       `json:"id"`
	Seq          int          `json:"seq"`
	Message      string       `json:"message"`
	MessageBytes int          `json:"message_bytes"`
	MessageFile  string       `json:"message_file,omitempty"`
	Command      string       `json:"command,omitempty"`
	Log          string       `json:"log,omitempty"`
	StartedAt    proto.Time   `json:"started_at"`
	EndedAt      proto.Time   `json:"ended_at"`
	Status       proto.Status `json:"status"`
	ExitCode     *int         `json:"exit_code,omitempty"`
	Signal       string       `json:"signal,omitempty"`
	LastError    *string      `json:"last_error,omitempty"`
}

// messageHead returns the head of msg kept in memory: msg itself up to
// maxMessageHead bytes, else its first bytes (whole characters) and a
// marker giving the whole length.
func messageHead(msg string) string {
	return headOf(msg[:min(len(msg), maxMessageHead+1)], len(msg))
}

// headOf returns the head of a message of size bytes that starts with
// prefix (at least maxMessageHead+1 bytes of it, or all of it), as
// messageHead does.
func headOf(prefix string, size int) string {
	if size <= maxMessageHead {
		return prefix[:size]
	}
	cut := maxMessageHead
	for cut > 0 && !utf8.RuneStart(prefix[cut]) {
		cut--
	}
	return prefix[:cut] + fmt.Sprintf("...[truncated: %d bytes in all]", size)
}

// msgPathOf returns the message file beside a submission's log file.
func msgPathOf(logPath string) string {
	return strings.TrimSuffix(logPath, ".log") + ".msg"
}

// recordLocked returns a's record. Call with s.mu held.
func (s *Supervisor) recordLocked(a *agent) *AgentRecord {
	r := &AgentRecord{
		AgentID: a.id, Dir: s.cfg.Dir, Status: a.status, BeforeClose: a.beforeClose,
		CreatedAt: proto.Time{Time: a.createdAt}, UpdatedAt: proto.Time{Time: a.updatedAt}, LastMessage: a.lastMessage,
		LastOutput: copyStr(a.lastOutput), LastError: copyStr(a.lastError), SessionID: a.sessionID,
		Command: a.command, Builtin: a.builtin, Runner: a.runner, Usage: a.usage,
		Submissions: make([]SubmissionRecord, len(a.subs)),
	}
	if p := a.preset; p != nil {
		r.Preset = presetRecord(p)
	}
	for i, sub := range a.subs {
		r.Submissions[i] = SubmissionRecord{
			ID: sub.id, Seq: sub.seq, Message: sub.message, MessageBytes: sub.msgLen, MessageFile: sub.msgPath,
			Command: sub.command, Log: sub.logPath, StartedAt: proto.Time{Time: sub.startedAt}, EndedAt: proto.Time{Time: sub.endedAt},
			Status: sub.status, ExitCode: sub.exitCode, Signal: sub.signal, LastError: copyStr(sub.lastError),
		}
	}
	return r
}

// agentOf turns a restored record into an agent. Its submissions hold no
// display lines: they are read back from the log file when viewed.
func agentOf(r *AgentRecord, fallback Config) *agent {
	a := &agent{
		id: r.AgentID, createdAt: r.CreatedAt.Time, status: r.Status, beforeClose: r.BeforeClose,
		updatedAt: r.UpdatedAt.Time, lastMessage: r.LastMessage, lastOutput: r.LastOutput, lastError: r.LastError,
		sessionID: r.SessionID, usage: r.Usage, command: r.Command, runner: r.Runner, restored: true,
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
			lp.Approvals = p.Approvals && lp.Name == "claude"
			a.preset = lp
		}
	}
	if a.preset == nil && a.command == "" {
		// a record of an older subdash that did not keep the command
		a.command, a.preset = fallback.Command, fallback.Preset
		a.builtin = fallback.CommandSource == SourceBuiltin && a.preset == nil
	}
	a.subs = make([]*submission, len(r.Submissions))
	for i, sr := range r.Submissions {
		a.subs[i] = &submission{
			id: sr.ID, seq: sr.Seq, message: sr.Message, msgLen: sr.MessageBytes, msgPath: sr.MessageFile,
			command: sr.Command, logPath: sr.Log, startedAt: sr.StartedAt.Time, endedAt: sr.EndedAt.Time,
			status: sr.Status, exitCode: sr.ExitCode, signal: sr.Signal, lastError: sr.LastError, restored: true,
		}
	}
	return a
}

// spawnedWith returns how a new agent's submissions run: the host's preset
// or agent command, on the host's runner.
func (s *Supervisor) spawnedWith(a *agent) {
	a.command, a.preset, a.runner = s.cfg.Command, s.cfg.Preset, s.cfg.RunnerName
	a.builtin = s.cfg.CommandSource == SourceBuiltin && a.preset == nil
}

// presetRecord returns p as the journal keeps it, nil for none.
func presetRecord(p *Preset) *PresetRecord {
	if p == nil {
		return nil
	}
	return &PresetRecord{Name: p.Name, Args: p.Args, Executable: p.executable, Approvals: p.Approvals}
}
