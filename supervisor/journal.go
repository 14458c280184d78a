package supervisor

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/proto"
)

// JournalEvent is one line of a run's journal.jsonl (SPEC §5): a lifecycle
// event of an agent or submission. Fields that do not apply are omitted.
type JournalEvent struct {
	Time         proto.Time `json:"time"`
	Event        string     `json:"event"` // spawned, submission_started, submission_ended, sent, interrupted, closed, resumed, shutdown, ...
	AgentID      string     `json:"agent_id,omitempty"`
	SubmissionID string     `json:"submission_id,omitempty"`
	Seq          int        `json:"seq,omitempty"`
	Message      string     `json:"message,omitempty"` // the message's head (messageHead) with MessageBytes; else cut at maxJournalMessage bytes; the whole message is in the .msg file
	// MessageBytes is the whole message's length, when Message is its head.
	MessageBytes int          `json:"message_bytes,omitempty"`
	Command      string       `json:"command,omitempty"`
	PID          int          `json:"pid,omitempty"`
	ExitCode     *int         `json:"exit_code,omitempty"`
	Signal       string       `json:"signal,omitempty"`
	Status       proto.Status `json:"status,omitempty"`
	LastError    string       `json:"last_error,omitempty"`
	SessionID    string       `json:"session_id,omitempty"`
	Log          string       `json:"log,omitempty"`
	RequestID    string       `json:"request_id,omitempty"` // approval events (SPEC §12)
	Tool         string       `json:"tool,omitempty"`       // approval events
	Decision     string       `json:"decision,omitempty"`   // approval_answered: allow, allow_always, deny
	Note         string       `json:"note,omitempty"`
	// Dir is the working directory of the run (run_started) (SPEC §10).
	Dir string `json:"dir,omitempty"`
	// LastOutput is the agent's last_output after the submission ended
	// (submission_ended), at most 2000 characters (SPEC §4).
	LastOutput *string `json:"last_output,omitempty"`
	// Usage is what the agent CLI reported for the submission
	// (submission_ended, presets).
	Usage *proto.Usage `json:"usage,omitempty"`
	// Preset and Runner say how the agent was spawned (spawned): a preset
	// (then Command is its description) or a plain agent command, run by
	// the runner named ("local").
	Preset *PresetRecord `json:"preset,omitempty"`
	Runner string        `json:"runner,omitempty"`
	// Builtin: Command is the built-in agent (spawned; AgentRecord.Builtin).
	Builtin bool `json:"builtin,omitempty"`
	// Record is an agent's whole record (event "record"), written at the
	// start of a run for every record it carries on (see records.go).
	Record *AgentRecord `json:"record,omitempty"`
}

// journal appends JSON lines to a file, one write per event.
type journal struct {
	mu  sync.Mutex
	f   *os.File
	err error // first write error, reported once by the supervisor
	// failed holds the first write error in words with the path (SPEC
	// §5); readable without mu.
	failed atomic.Pointer[string]
	// onFail is told of the first write error (see watch).
	onFail func(msg string)
}

// fail records the first write error. Call with mu held.
func (j *journal) fail(err error) {
	if j.err != nil {
		return
	}
	j.err = err
	why := err
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		why = pe.Err
	}
	msg := fmt.Sprintf("journal could not be written (%v): %s; this run's records may not be restored", why, j.f.Name())
	j.failed.Store(&msg)
	if j.onFail != nil {
		// In a goroutine: a write may come with the supervisor's lock held.
		go j.onFail(msg)
	}
}

// watch has fn told of the journal's first write failure, in words with
// the path: returned at once when the journal failed already (fn is then
// never called), else given to fn in a goroutine of its own when it fails.
func (j *journal) watch(fn func(msg string)) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.failure()
	}
	j.onFail = fn
	return ""
}

// failure returns the journal's first write failure in words, or "".
func (j *journal) failure() string {
	if p := j.failed.Load(); p != nil {
		return *p
	}
	return ""
}

func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &journal{f: f}, nil
}

// maxJournalMessage bounds a message recorded in the journal, in bytes: a
// message may be many megabytes (a diff sent with `ctl send ID -`), and the
// journal is read line by line.
const maxJournalMessage = 64 << 10

func (j *journal) write(ev JournalEvent) { j.writeAll([]JournalEvent{ev}) }

// writeAll appends events in one write (a checkpoint of many records).
func (j *journal) writeAll(evs []JournalEvent) {
	if len(evs) == 1 {
		b := encodeEvent(evs[0])
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.f != nil && len(b) > 0 {
			if _, err := j.f.Write(b); err != nil {
				j.fail(err)
			}
		}
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return
	}
	w := bufio.NewWriterSize(j.f, 256<<10)
	for _, ev := range evs {
		_, _ = w.Write(encodeEvent(ev))
	}
	if err := w.Flush(); err != nil {
		j.fail(err)
	}
}

// encodeEvent returns ev as one JSON line, its message cut at
// maxJournalMessage, or nothing when it cannot be encoded.
func encodeEvent(ev JournalEvent) []byte {
	if ev.Time.IsZero() {
		ev.Time = proto.Time{Time: time.Now()}
	}
	if len(ev.Message) > maxJournalMessage {
		cut := maxJournalMessage
		for cut > 0 && !utf8.RuneStart(ev.Message[cut]) {
			cut--
		}
		ev.Message = ev.Message[:cut] + fmt.Sprintf("...[truncated: %d bytes in all]", len(ev.Message))
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil
	}
	return append(b, '\n')
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// ok reports whether every write so far succeeded.
func (j *journal) ok() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f != nil && j.err == nil
}
