// Package transcript turns the machine-readable output of agent CLIs (claude
// stream-json, codex app-server and exec --json, gemini stream-json, Memo's
// plain mode)
// into transcript entries and an outcome, one output line at a time, and
// reads Memo's session files (ReadMemoSession).
//
// It knows nothing of processes or screens: the supervisor feeds it the lines
// of a submission's stdout, shows the entries, and decides the agent's status
// from Outcome (SPEC §8). The raw lines stay in the log file; nothing here
// needs them again.
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/subdash/subdash/supervisor/appserver"
	"github.com/subdash/subdash/supervisor/termtext"
)

// Format names the output format of one agent CLI. The values are the preset
// names of SPEC §8.
type Format string

// The formats a Parser understands.
const (
	// FormatClaude is `claude -p --output-format stream-json --verbose`
	// (with or without --include-partial-messages).
	FormatClaude Format = "claude"
	// FormatCodex is `codex app-server` (its JSON-RPC lines, codex_app.go)
	// and `codex exec --json` (codex.go), told apart line by line.
	FormatCodex Format = "codex"
	// FormatGemini is `gemini -p "" --output-format stream-json`.
	FormatGemini Format = "gemini"
	// FormatMemo is Memo's plain mode, `memo --dangerous` with stdin not a
	// terminal: text lines with Ink's cursor codes (memo.go).
	FormatMemo Format = "memo"
)

// ParseFormat returns the Format named s, or an error naming the formats it
// knows.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case FormatClaude, FormatCodex, FormatGemini, FormatMemo:
		return f, nil
	}
	return "", fmt.Errorf("unknown transcript format %q; use claude, codex, gemini or memo", s)
}

// Kind says what an Entry is.
type Kind string

// The kinds of entries.
const (
	// KindInit is the start of a session: claude/gemini init, codex
	// thread.started. Text names the session (and model when known).
	KindInit Kind = "init"
	// KindUser is a user message the CLI echoes back (gemini echoes the
	// prompt; claude may replay user text). Text is the message.
	KindUser Kind = "user"
	// KindText is one complete assistant message. Text is its text.
	KindText Kind = "text"
	// KindThinking is the model's reasoning (claude thinking block, codex
	// reasoning item). Text may be empty when the CLI redacts it.
	KindThinking Kind = "thinking"
	// KindToolCall is a tool the agent started. Tool, Summary and ID are
	// set; Text is empty except for codex to-do lists (see Entry.ID).
	KindToolCall Kind = "tool_call"
	// KindToolResult is the outcome of a tool call: Text holds the first
	// lines of its output, IsError whether it failed.
	KindToolResult Kind = "tool_result"
	// KindError is an error or warning the CLI reported (an API error, a
	// codex error item, a gemini error event). Text is the message.
	KindError Kind = "error"
	// KindRetry is the CLI retrying the model after a failure. Text says why
	// and, when reported, which attempt.
	KindRetry Kind = "retry"
	// KindResult is the final event of the run; IsError tells a failed run,
	// Text holds the answer (empty when it is exactly the text entries of the
	// last turn, already in the transcript; Outcome.Answer always has it) or
	// the error message, and the usage fields are set where the CLI reports
	// them.
	KindResult Kind = "result"
	// KindUnknown is a JSON event this package does not know. Text is a
	// compact form such as "system/hook_started".
	KindUnknown Kind = "unknown"
	// KindTask is a step of an inner agent or a shell command the CLI ran
	// as a task (claude's system/task_* frames, SPEC §8). Text says it in
	// words: `inner agent “audit ui” started`.
	KindTask Kind = "task"
	// KindStderr is a line the CLI wrote on stderr (the supervisor adds
	// these; a parser never makes them). Text is the line, escape sequences
	// and all: clean it before display. It is how a CLI that fails before
	// its first event (not installed, bad key, untrusted folder) says why.
	KindStderr Kind = "stderr"
	// KindNote is a line subdash itself writes into the transcript (the
	// supervisor adds these; a parser never makes them): a new session
	// starts, bytes the log cap dropped, logging paused. Text is plain.
	KindNote Kind = "note"
	// KindMalformed is a line that is not a JSON object. Text is the line
	// (cut at MaxMalformedBytes).
	KindMalformed Kind = "malformed"
)

// Limits on the text kept in entries. Output lines of many megabytes are
// expected; an entry keeps only what a reader can use.
const (
	// MaxSummaryRunes bounds Entry.Summary, in runes ("…" marks a cut).
	MaxSummaryRunes = 120
	// MaxResultLines bounds the lines of tool output kept in a tool_result
	// entry's Text; Entry.MoreLines counts the rest.
	MaxResultLines = 5
	// MaxResultLineRunes bounds each kept line of tool output, in runes.
	MaxResultLineRunes = 200
	// MaxMalformedBytes bounds the Text of a malformed entry, in bytes.
	MaxMalformedBytes = 4096
)

// Entry is one item of a transcript. The zero value of a field means the CLI
// did not report it. Every string field a parser sets is plain text, as the
// dashboard draws it: escape sequences and control characters other than
// "\n" removed, tabs expanded (see termtext.Plain); a stderr entry's Text is
// as the supervisor made it. Its JSON (a viewer's transcript window, SPEC
// §9) names the fields in snake_case and leaves out the zero ones.
type Entry struct {
	// Kind says what the entry is.
	Kind Kind `json:"kind"`
	// Text is the readable text: assistant text, thinking, tool output (first
	// MaxResultLines lines), error or retry message, result text, the compact
	// form of an unknown event, or the malformed line itself.
	Text string `json:"text,omitempty"`
	// Tool is the tool name on tool_call and tool_result entries.
	Tool string `json:"tool,omitempty"`
	// ID is the CLI's id of a tool call; it pairs a tool_result with its
	// tool_call. (codex to-do lists are tool_call entries of the tool
	// "todo_list" with no result: a later one with the same ID is the same
	// list updated.)
	ID string `json:"id,omitempty"`
	// Summary is a one-line summary of the tool input (the command, file
	// path, pattern...), at most MaxSummaryRunes runes. A tool_result repeats
	// the summary of its call when the call was seen.
	Summary string `json:"summary,omitempty"`
	// MoreLines is the number of tool output lines left out of Text.
	MoreLines int `json:"more_lines,omitempty"`
	// IsError is set on a tool_result or result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
	// InputTokens counts all input tokens of the run, cached ones included
	// (result entries only).
	InputTokens int64 `json:"input_tokens,omitempty"`
	// OutputTokens counts the output tokens of the run (result entries only).
	OutputTokens int64 `json:"output_tokens,omitempty"`
	// CostUSD is the cost the CLI reports, in US dollars; 0 when unknown
	// (only claude reports it).
	CostUSD float64 `json:"cost_usd,omitempty"`
	// DurationMS is the run's duration the CLI reports, in milliseconds.
	DurationMS int64 `json:"duration_ms,omitempty"`
	// Depth is how deep inside inner agents the entry is (SPEC §8 "Inner
	// agents"): 0 for the agent's own, 1 for a frame of an inner agent it
	// started (claude's parent_tool_use_id), 2 for one that inner agent
	// started; omitted when 0.
	Depth int `json:"depth,omitempty"`
}

// Outcome is what the output says about how the run ended. The supervisor
// applies SPEC §8 to it: completed only when Final and Success; errored with
// Error when Final and not Success; errored "ended without a result" when
// the process exited without a final event. Error and Answer are plain text,
// as entries are.
type Outcome struct {
	// Final is set once a final event was seen: claude/gemini "result",
	// codex turn.completed or turn.failed.
	Final bool
	// Success is set when the final event reports success: claude is_error
	// false, codex turn.completed, gemini status "success".
	Success bool
	// Error is the message of a failed final event. Before a final event it
	// holds the last error or retry message seen, so a run cut short can say
	// what it was stuck on; a successful final event clears it.
	Error string
	// Answer is the final answer: claude's result text, codex's last
	// agent_message, gemini's assistant text of the last turn. Until then
	// (and after a failed final event) it holds the text of the latest
	// assistant turn that had text.
	Answer string
	// InputTokens, OutputTokens, CostUSD and DurationMS are copied from the
	// final event (see Entry for their meaning).
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
	DurationMS   int64
}

// Parser turns the output lines of one run of one CLI into entries. Feed it
// every stdout line with Line, then call End at end of file. A Parser is not
// safe for concurrent use; use one per submission.
type Parser struct {
	format    Format
	sessionID string
	cwd       string // claude's working directory, from its init line
	activity  string
	outcome   Outcome

	// pending is assistant text streamed as deltas and not yet emitted.
	pending strings.Builder
	// turnText is the assistant text since the last tool call, tool result
	// or user message; it becomes Outcome.Answer.
	turnText strings.Builder
	// calls are the tool calls without a result yet, by id, and running
	// their ids in start order (the last one names the activity).
	calls   map[string]toolCall
	running []string
	// idless is the call running without an id (memo's tool lines), nil
	// when none: the activity names it until the model speaks again.
	idless *toolCall
	// retries counts retry events since the last other event.
	retries int
	// memo is the state of FormatMemo's text parse.
	memo  memoState
	inner innerState // claude's inner agents (claude_inner.go)
	app   appState   // codex app-server's turns and tokens (codex_app.go)
}

type toolCall struct {
	name, summary string
}

// NewParser returns a Parser for output in format f. For a Format it does not
// know, every JSON line becomes an unknown entry.
func NewParser(f Format) *Parser {
	return &Parser{format: f, calls: make(map[string]toolCall)}
}

// Line parses one output line (without its newline) and returns the entries
// it produces, possibly none: an empty line, a line that is not JSON and
// holds only escape sequences, or a delta that only extends text still in
// progress (see Pending). The returned slice is the caller's.
// line is not retained.
func (p *Parser) Line(line []byte) []Entry {
	if p.format == FormatMemo {
		return p.memoLine(line)
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] != '{' {
		return malformed(line)
	}
	switch p.format {
	case FormatClaude:
		return p.claudeLine(line)
	case FormatCodex:
		if m, ok := appserver.Decode(line); ok {
			return p.codexAppLine(line, m)
		}
		return p.codexLine(line)
	case FormatGemini:
		return p.geminiLine(line)
	}
	var ev struct{ Type, Subtype string }
	if !decode(line, &ev) {
		return malformed(line)
	}
	return []Entry{unknown(line, ev.Type, ev.Subtype)}
}

// End tells the parser the output ended. It returns the assistant text still
// in progress, if any, as a text entry, and clears the activity.
func (p *Parser) End() []Entry {
	var out []Entry
	if p.format == FormatMemo {
		out = p.memoEnd(out)
	}
	out = p.inner.release(out, p.callMade, true)
	out = p.flush(out)
	p.activity = ""
	p.running, p.idless = nil, nil
	p.inner.endInner()
	return out
}

// SessionID returns the session to resume: the claude/gemini session_id of
// the init event (for claude, of any event when the init line was lost), the
// codex thread_id of thread.started; "" until seen.
func (p *Parser) SessionID() string { return p.sessionID }

// Activity returns what the agent is doing now, in a few words: "thinking",
// "writing", "running Bash: ls -la", "retrying model (attempt 2/10)"; ""
// before the first event and after the final one.
func (p *Parser) Activity() string { return p.activity }

// Pending returns the assistant text streamed so far that is not yet part of
// an entry (claude partial messages, gemini deltas); "" when none.
func (p *Parser) Pending() string { return p.pending.String() }

// Outcome returns what the output has said so far about how the run ended.
func (p *Parser) Outcome() Outcome { return p.outcome }

// decode unmarshals one event line into v and reports whether the line was
// JSON. A value of an unexpected type leaves its field zero and the rest
// decoded, so an odd field never costs the whole event.
func decode(line []byte, v any) bool {
	err := json.Unmarshal(line, v)
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}

// text records a complete assistant message and returns its entry.
func (p *Parser) text(s string) Entry {
	s = plain(s)
	if p.turnText.Len() > 0 {
		p.turnText.WriteByte('\n')
	}
	p.turnText.WriteString(s)
	p.outcome.Answer = p.turnText.String()
	return Entry{Kind: KindText, Text: s}
}

// flush appends the pending streamed text to out as a text entry.
func (p *Parser) flush(out []Entry) []Entry {
	if p.pending.Len() == 0 {
		return out
	}
	s := p.pending.String()
	p.pending.Reset()
	return append(out, p.text(s))
}

// boundary ends the current assistant turn: the next text starts a new
// answer.
func (p *Parser) boundary() {
	p.turnText.Reset()
}

// thinking notes that the model is working, after a tool result or at the
// start of a turn.
func (p *Parser) thinking() {
	p.retries = 0
	p.idless = nil
	if len(p.running) == 0 {
		p.activity = "thinking"
	}
}

// toolCall records the start of a tool call and returns its entry.
func (p *Parser) toolCall(id, name, summary string) Entry {
	p.boundary()
	p.retries = 0
	name, summary = termtext.OneLine(name, MaxSummaryRunes), termtext.OneLine(summary, MaxSummaryRunes)
	if id != "" {
		p.calls[id] = toolCall{name: name, summary: summary}
		p.running = append(p.running, id)
	} else {
		p.idless = &toolCall{name: name, summary: summary}
	}
	p.activity = runningActivity(name, summary)
	return Entry{Kind: KindToolCall, Tool: name, ID: plain(id), Summary: summary}
}

// toolResult records the end of a tool call and returns its entry. name and
// summary are used when the call was not seen.
func (p *Parser) toolResult(id, name, summary, output string, isError bool) Entry {
	p.boundary()
	name, summary = termtext.OneLine(name, MaxSummaryRunes), termtext.OneLine(summary, MaxSummaryRunes)
	if c, ok := p.calls[id]; ok && id != "" {
		name, summary = c.name, c.summary
		delete(p.calls, id)
		for i, r := range p.running {
			if r == id {
				p.running = append(p.running[:i], p.running[i+1:]...)
				break
			}
		}
	}
	if n := len(p.running); n > 0 {
		c := p.calls[p.running[n-1]]
		p.activity = runningActivity(c.name, c.summary)
	} else {
		p.activity = "thinking"
	}
	head, more := headLines(output)
	return Entry{Kind: KindToolResult, Tool: name, ID: plain(id), Summary: summary,
		Text: head, MoreLines: more, IsError: isError}
}

// errorEntry records an error the CLI reported and returns its entry.
func (p *Parser) errorEntry(msg string) Entry {
	msg = plain(msg)
	p.noteError(msg)
	return Entry{Kind: KindError, Text: msg}
}

// retry records a retry of the model and returns its entry. attempt and most
// are 0 when not reported; attempts are then counted here.
func (p *Parser) retry(msg string, attempt, most int) Entry {
	msg = plain(msg)
	p.retries++
	p.idless = nil
	if attempt <= 0 {
		attempt = p.retries
	}
	if most > 0 {
		p.activity = fmt.Sprintf("retrying model (attempt %d/%d)", attempt, most)
	} else {
		p.activity = fmt.Sprintf("retrying model (attempt %d)", attempt)
	}
	p.noteError(msg)
	return Entry{Kind: KindRetry, Text: msg}
}

// noteError keeps msg as the reason the run may fail, unless a final event
// has already said how it ended.
func (p *Parser) noteError(msg string) {
	if !p.outcome.Final {
		p.outcome.Error = msg
	}
}

// final records the final event of the run. e carries the usage fields;
// answer replaces Outcome.Answer when non-empty; errMsg is the failure
// message (ignored on success).
func (p *Parser) final(e Entry, success bool, answer, errMsg string) Entry {
	o := &p.outcome
	o.Final, o.Success = true, success
	if answer != "" {
		o.Answer = plain(answer)
	}
	if success {
		o.Error = ""
		e.Text = o.Answer
		if p.turnText.Len() > 0 && o.Answer == p.turnText.String() {
			e.Text = "" // already shown as this turn's text entries
		}
	} else {
		errMsg = plain(errMsg)
		if errMsg == "" {
			errMsg = o.Error
		}
		if errMsg == "" {
			errMsg = "the run failed without a message"
		}
		o.Error = errMsg
		e.Text = errMsg
	}
	o.InputTokens, o.OutputTokens = e.InputTokens, e.OutputTokens
	o.CostUSD, o.DurationMS = e.CostUSD, e.DurationMS
	p.activity, p.running, p.retries, p.idless = "", nil, 0, nil
	e.Kind, e.IsError = KindResult, !success
	return e
}

// initEntry records the session id and returns the init entry.
func (p *Parser) initEntry(word, id, model string) Entry {
	if id != "" {
		p.sessionID = id
	}
	p.thinking()
	text := word + " " + id
	if model != "" {
		text += " (model " + model + ")"
	}
	return Entry{Kind: KindInit, Text: plain(text)}
}

func runningActivity(name, summary string) string {
	if name == "" {
		name = "tool"
	}
	if summary == "" {
		return "running " + name
	}
	return "running " + name + ": " + termtext.OneLine(summary, 60)
}
