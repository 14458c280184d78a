package supervisor

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/subdash/subdash/supervisor/termtext"
)

// AgentInfo is a snapshot of one agent for display: its summary plus what a
// dashboard shows. It holds copies; the caller owns it.
type AgentInfo struct {
	Summary
	LastOutput  *string
	LastError   *string
	Stopping    bool             // a stop was requested and the process group is not gone yet
	Submissions []SubmissionInfo // oldest first
	Activity    string           // what the agent CLI is doing now (presets), "" when unknown
	Usage       Usage            // tokens and cost the agent CLI reported, summed over all its submissions (presets)
	// Preset names the preset the agent was spawned with (SPEC §8; a
	// restored agent keeps its own, whatever its host runs), "" for an
	// agent command. Structured is true when that preset's output is
	// structured: its submissions have transcripts (Transcript).
	Preset     string `json:"preset,omitempty"`
	Structured bool   `json:"structured,omitempty"`
	// Origin names who spawned the agent in this host: "mcp", "ctl",
	// "viewer", another program's name, or "" for the host's own dashboard.
	Origin string `json:"origin,omitempty"`
}

// Usage is what an agent CLI reported about its model use.
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

func (u *Usage) add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CostUSD += v.CostUSD
}

// SubmissionInfo is a snapshot of one submission.
type SubmissionInfo struct {
	ID        string
	Seq       int // 1-based within its agent
	Message   string
	Command   string
	Status    Status // running, completed or errored
	StartedAt time.Time
	EndedAt   time.Time // zero while running
	ExitCode  *int      // nil while running, when killed by a signal, or when it never started
	Signal    string    // e.g. "SIGKILL" when the main process died of a signal
	LastError *string
	Stopping  bool
	LogPath   string
	// Output is how much output the submission has now, so that a
	// dashboard knows from the snapshot alone whether what it shows
	// changed (SPEC §9: events carry what changed).
	Output OutputCounts
}

// OutputCounts says how many display lines and transcript entries a
// submission holds, as absolute numbers (Window's First and Total).
type OutputCounts struct {
	// FirstLine is the oldest display line held in memory, Lines one past
	// the newest; older lines remain in the log file.
	FirstLine int64 `json:"first_line"`
	Lines     int64 `json:"lines"`
	// Evicted is true when the display lines are not in memory (a finished
	// or restored submission whose scrollback was released): the counts
	// are then unknown until a window is read (Window, LoadOutput).
	Evicted bool `json:"evicted,omitempty"`
	// FirstEntry and Entries are the same for the transcript of a
	// structured submission (SPEC §8), text still streaming counting as one
	// more entry; both 0 when it has none or it is not read back yet.
	FirstEntry int64 `json:"first_entry,omitempty"`
	Entries    int64 `json:"entries,omitempty"`
}

// Running reports whether the agent has a submission whose process group
// may be alive.
func (a AgentInfo) Running() bool {
	n := len(a.Submissions)
	return n > 0 && a.Submissions[n-1].EndedAt.IsZero()
}

// Agents returns a snapshot of every agent, oldest first.
func (s *Supervisor) Agents() []AgentInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]AgentInfo, 0, len(s.order))
	for _, a := range s.order {
		out = append(out, s.infoLocked(a))
	}
	return out
}

// Agent returns a snapshot of agent id; ok is false for an unknown id.
func (s *Supervisor) Agent(id string) (info AgentInfo, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.lookup(id)
	if err != nil {
		return AgentInfo{}, false
	}
	return s.infoLocked(a), true
}

func (s *Supervisor) infoLocked(a *agent) AgentInfo {
	info := AgentInfo{
		Summary:    s.summaryLocked(a),
		LastOutput: copyStr(a.lastOutput),
		LastError:  copyStr(a.lastError),
		Origin:     a.origin,
		Structured: a.preset.Structured(),
	}
	if a.preset != nil {
		info.Preset = a.preset.Name
	}
	info.Submissions = make([]SubmissionInfo, len(a.subs))
	for i, sub := range a.subs {
		info.Submissions[i] = SubmissionInfo{
			ID: sub.id, Seq: sub.seq, Message: sub.message, Command: sub.command,
			Status: sub.status, StartedAt: sub.startedAt, EndedAt: sub.endedAt,
			ExitCode: sub.exitCode, Signal: sub.signal, LastError: copyStr(sub.lastError),
			Stopping: sub.reason != "" && sub.endedAt.IsZero(), LogPath: sub.logPath,
			Output: sub.counts(),
		}
	}
	info.Usage = a.usage
	if r := a.running; r != nil {
		info.Stopping = r.reason != ""
		if r.tr != nil {
			act, u := r.tr.activity()
			info.Activity = act
			info.Usage.add(u)
		}
		if p := info.PendingApprovals; len(p) > 0 {
			info.Activity = ApprovalActivity(p[0])
		}
	}
	return info
}

// counts returns how much output sub holds now. Called with s.mu held
// (the output's and the transcript's locks come after it, as in eviction).
func (sub *submission) counts() OutputCounts {
	var c OutputCounts
	if sub.out == nil {
		return OutputCounts{Evicted: true}
	}
	c.FirstLine, c.Lines, _, c.Evicted = sub.out.window(0, 0)
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
func (s *Supervisor) Counts(id string, seq int) (OutputCounts, int, error) {
	sub, err := s.submission(id, seq)
	if err != nil {
		return OutputCounts{}, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return sub.counts(), sub.seq, nil
}

// Window is a range of a submission's display lines.
type Window struct {
	// First is the absolute number of the oldest line still held; lines
	// before it were trimmed from memory and remain in the log file.
	First int64
	// Total is one past the absolute number of the newest line.
	Total int64
	// Lines are the requested lines that are held, starting at
	// max(from, First). The caller owns the slice; the strings are immutable.
	Lines []Line
	// Evicted is true when the submission's lines were released from memory;
	// call LoadOutput to read them back from the log file.
	Evicted bool
}

// Window returns up to n display lines of submission seq (1-based; 0 means
// the latest) of agent id, starting at absolute line from; from < 0 asks
// for the last n lines (the bottom of the log, follow mode). It copies only
// the n lines asked for, so its cost does not depend on the scrollback size.
// Errors: unknown agent or submission.
func (s *Supervisor) Window(id string, seq int, from int64, n int) (Window, error) {
	sub, err := s.submission(id, seq)
	if err != nil {
		return Window{}, err
	}
	if from < 0 {
		first, total, _, _ := sub.out.window(0, 0)
		from = max(first, total-int64(n))
	}
	first, total, lines, evicted := sub.out.window(from, n)
	return Window{First: first, Total: total, Lines: lines, Evicted: evicted}, nil
}

// LoadOutput reads the display lines of a submission whose scrollback was
// released (Window reports Evicted) back from its log file, keeping the
// newest Scrollback lines. It does file I/O; call it off the UI goroutine.
// It counts as a use of the submission for the memory limit of finished
// submissions (see defaultResident).
func (s *Supervisor) LoadOutput(id string, seq int) error {
	sub, err := s.submission(id, seq)
	if err != nil {
		return err
	}
	if err := sub.out.reload(sub.logPath, s.cfg.Scrollback); err != nil {
		return err
	}
	s.loadTranscript(id, sub)
	s.mu.Lock()
	if !sub.endedAt.IsZero() {
		s.keepResidentLocked(sub.out)
	}
	s.mu.Unlock()
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
		return nil, &Error{CodeNotFound, fmt.Sprintf("agent %s has no submission %d; it has %d", a.id, seq, len(a.subs))}
	}
	sub := a.subs[seq-1]
	if sub.out == nil && sub.restored {
		sub.out = restoredOutput()
		sub.out.mem = s.lineMem
	}
	if sub.out == nil {
		return nil, &Error{CodeNotFound, fmt.Sprintf("submission %d of agent %s has not started", seq, a.id)}
	}
	return sub, nil
}

// Logs returns the output of submission seq (1-based; 0 means the latest)
// of agent id as plain text (SPEC §3 logs): the log file's bytes, stdout and
// stderr in arrival order, turned into lines with every escape sequence and
// control character removed. Errors: "agent not found: <id>", an unknown
// submission, an unreadable log file. For large logs prefer WriteLogs,
// which streams.
func (s *Supervisor) Logs(id string, seq int) (string, error) {
	var b strings.Builder
	err := s.WriteLogs(&b, id, seq, false)
	return b.String(), err
}

// WriteLogs writes the output of submission seq (0 = latest) of agent id to
// w as it reads the log file: as plain text like Logs, or, with raw, the
// file's bytes unchanged (escape sequences, NUL bytes and all). Errors are
// those of Logs, found before anything is written, or w's.
func (s *Supervisor) WriteLogs(w io.Writer, id string, seq int, raw bool) error {
	sub, err := s.submission(id, seq)
	if err != nil {
		return err
	}
	f, err := os.Open(sub.logPath)
	if os.IsNotExist(err) {
		return &Error{CodeNotFound, fmt.Sprintf("the log file %s of submission %d of agent %s is gone (removed by --log-retention or by hand); its output cannot be shown", sub.logPath, sub.seq, id)}
	}
	if err != nil {
		return &Error{CodeInternal, fmt.Sprintf("cannot read log file %s: %v", sub.logPath, err)}
	}
	defer f.Close()
	if raw {
		_, err = io.Copy(w, f)
	} else {
		err = termtext.WritePlain(w, f)
	}
	if err != nil {
		return &Error{CodeInternal, fmt.Sprintf("cannot read log file %s: %v", sub.logPath, err)}
	}
	return nil
}

// LogPath returns the log file of submission seq (0 = latest) of agent id.
func (s *Supervisor) LogPath(id string, seq int) (string, error) {
	sub, err := s.submission(id, seq)
	if err != nil {
		return "", err
	}
	return sub.logPath, nil
}
