package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/termtext"
)

// claudeEvent is one line of `claude -p --output-format stream-json
// --verbose`: the union of the members this package reads, per type.
type claudeEvent struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// ParentToolUseID is set on the frames of an inner agent: its Agent
	// call's id (claude_inner.go).
	ParentToolUseID string `json:"parent_tool_use_id"`
	// UUID and IsReplay: a user message claude echoes back as it takes it
	// (--replay-user-messages), with the uuid it was written with.
	UUID     string `json:"uuid"`
	IsReplay bool   `json:"isReplay"`

	// system/init and system/status
	Model  string `json:"model"`
	Status string `json:"status"`
	Cwd    string `json:"cwd"` // init: the session's working directory

	// system/api_retry
	Attempt      int     `json:"attempt"`
	MaxRetries   int     `json:"max_retries"`
	RetryDelayMS float64 `json:"retry_delay_ms"`
	ErrorStatus  int     `json:"error_status"`
	// Error is the api_retry error class, or on an assistant message the
	// API error that made Claude Code write the message itself.
	Error string `json:"error"`

	// assistant and user
	Message json.RawMessage `json:"message"`
	// stream_event (--include-partial-messages)
	Event json.RawMessage `json:"event"`

	// result
	IsError      bool         `json:"is_error"`
	Result       string       `json:"result"`
	Errors       []string     `json:"errors"`
	DurationMS   float64      `json:"duration_ms"`
	TotalCostUSD float64      `json:"total_cost_usd"`
	Usage        *claudeUsage `json:"usage"`
}

type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

type claudeMessage struct {
	Content json.RawMessage `json:"content"` // a string or a list of blocks
}

type claudeBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	// tool_result
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type claudeStreamEvent struct {
	Type         string      `json:"type"`
	ContentBlock claudeBlock `json:"content_block"`
	Delta        struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
}

func (p *Parser) claudeLine(line []byte) []Entry {
	out := p.claudeFrame(line)
	if len(p.inner.held) > 0 {
		out = p.inner.release(out, p.callMade, false)
	}
	return out
}

// callMade reports whether the frame of tool call id came (its result
// may not have).
func (p *Parser) callMade(id string) bool {
	_, ok := p.calls[id]
	return ok
}

func (p *Parser) claudeFrame(line []byte) []Entry {
	var ev claudeEvent
	if !decode(line, &ev) {
		return malformed(line)
	}
	if p.sessionID == "" {
		// Every event names the session; init comes first, but a lost init
		// line (or --output-format json, which prints only the result)
		// should not lose the id to resume.
		p.sessionID = ev.SessionID
	}
	switch ev.Type {
	case "system":
		return p.claudeSystem(line, &ev)
	case "assistant":
		return p.inner.indent(ev.ParentToolUseID, p.claudeAssistant(&ev))
	case "user":
		return p.inner.indent(ev.ParentToolUseID, p.claudeUser(&ev))
	case "stream_event":
		p.claudeStream(ev.Event)
		return nil
	case "result":
		return p.claudeResult(&ev)
	case "control_request", "control_cancel_request", "control_response":
		return p.claudeControlLine(line, ev.Type)
	}
	return []Entry{unknown(line, ev.Type, ev.Subtype)}
}

func (p *Parser) claudeSystem(line []byte, ev *claudeEvent) []Entry {
	switch ev.Subtype {
	case "init":
		p.cwd = ev.Cwd
		return []Entry{p.initEntry("session", ev.SessionID, ev.Model)}
	case "api_retry":
		return []Entry{p.retry(claudeRetryText(ev), ev.Attempt, ev.MaxRetries)}
	case "status":
		// "requesting" while a model call is under way; other states
		// (such as "compacting") name themselves.
		switch ev.Status {
		case "", "requesting":
			p.thinking()
		default:
			p.activity = termtext.OneLine(ev.Status, MaxSummaryRunes)
		}
		return nil
	case "task_started", "task_progress", "task_updated", "task_notification":
		// inner agents and shell commands (claude_inner.go), in words, at
		// the inner agent's depth
		text := p.claudeTask(line)
		e := Entry{Kind: KindTask, Text: text}
		var call string
		e.Depth, call = p.inner.taskDepth(line)
		if text == "" {
			return nil // it says nothing new
		}
		if ev.Subtype == "task_started" && p.inner.hold(e, call, p.callMade(call)) {
			return nil // until its call's frame (claude_indent.go)
		}
		return []Entry{e}
	}
	return []Entry{unknown(line, ev.Type, ev.Subtype)}
}

// claudeRetryText says why and when claude retries:
// "API request failed (HTTP 500 server_error); retry 1/2 in 0.6s".
func claudeRetryText(ev *claudeEvent) string {
	var why []string
	if ev.ErrorStatus != 0 {
		why = append(why, "HTTP "+strconv.Itoa(ev.ErrorStatus))
	}
	if ev.Error != "" {
		why = append(why, ev.Error)
	}
	if len(why) == 0 {
		why = append(why, "no reason given")
	}
	s := "API request failed (" + strings.Join(why, " ") + "); retry"
	if ev.Attempt > 0 {
		s += " " + strconv.Itoa(ev.Attempt)
		if ev.MaxRetries > 0 {
			s += "/" + strconv.Itoa(ev.MaxRetries)
		}
	}
	if ev.RetryDelayMS > 0 {
		s += fmt.Sprintf(" in %.1fs", ev.RetryDelayMS/1000)
	}
	return s
}

// claudeBlocks decodes message content: a list of blocks, or a plain string
// (returned as one text block).
func claudeBlocks(raw json.RawMessage) []claudeBlock {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return []claudeBlock{{Type: "text", Text: s}}
	}
	var blocks []claudeBlock
	if !decode(raw, &blocks) {
		return nil
	}
	return blocks
}

func (p *Parser) claudeAssistant(ev *claudeEvent) []Entry {
	var msg claudeMessage
	decode(ev.Message, &msg)
	blocks := claudeBlocks(msg.Content)
	var out []Entry
	for _, b := range blocks {
		switch b.Type {
		case "text":
			// The complete message replaces the deltas streamed for it.
			p.pending.Reset()
			if ev.Error != "" {
				// Claude Code writes an API failure as an assistant
				// message of its own ("API Error: 500 ..."): an error, not
				// the model's words.
				out = append(out, p.errorEntry(b.Text))
				continue
			}
			if b.Text != "" {
				out = append(out, p.text(b.Text))
			}
			p.thinking()
		case "thinking", "redacted_thinking":
			p.thinking()
			out = append(out, Entry{Kind: KindThinking, Text: plain(b.Thinking)})
		case "tool_use", "server_tool_use", "mcp_tool_use":
			p.claudeToolParent(b.ID, ev.ParentToolUseID)
			out = append(out, p.toolCall(b.ID, b.Name, toolSummary(b.Input)))
		default:
			if strings.HasSuffix(b.Type, "_tool_result") {
				out = append(out, p.toolResult(b.ToolUseID, "", "", claudeResultText(b.Content), b.IsError))
				continue
			}
			out = append(out, Entry{Kind: KindUnknown, Text: termtext.OneLine("assistant/"+b.Type, MaxSummaryRunes)})
		}
	}
	return out
}

func (p *Parser) claudeUser(ev *claudeEvent) []Entry {
	var msg claudeMessage
	decode(ev.Message, &msg)
	var out []Entry
	for _, b := range claudeBlocks(msg.Content) {
		switch b.Type {
		case "tool_result":
			out = append(out, p.toolResult(b.ToolUseID, "", "", claudeResultText(b.Content), b.IsError))
		case "text":
			p.boundary()
			e := Entry{Kind: KindUser, Text: strings.TrimRight(plain(b.Text), "\n")}
			if ev.IsReplay {
				e.ID = ev.UUID // the receipt of a steered message
			}
			out = append(out, e)
		default:
			out = append(out, Entry{Kind: KindUnknown, Text: termtext.OneLine("user/"+b.Type, MaxSummaryRunes)})
		}
	}
	return out
}

// claudeResultText returns the text of tool_result content: a string, or the
// text of its blocks (other blocks shown as [type]).
func claudeResultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return string(raw) // not a JSON string after all: shown as it came
		}
		return s
	}
	var parts []string
	for _, b := range claudeBlocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}

// claudeStream follows partial messages: text deltas go to Pending, the rest
// only moves the activity. The complete assistant message that follows makes
// the entries, so nothing here does.
func (p *Parser) claudeStream(raw json.RawMessage) {
	var se claudeStreamEvent
	if !decode(raw, &se) {
		return
	}
	switch se.Type {
	case "message_start":
		p.pending.Reset()
		p.thinking()
	case "content_block_start":
		switch se.ContentBlock.Type {
		case "text":
			p.pending.Reset()
			p.pending.WriteString(se.ContentBlock.Text)
			p.activity = "writing"
		case "thinking", "redacted_thinking":
			p.activity = "thinking"
		case "tool_use", "server_tool_use", "mcp_tool_use":
			p.activity = "calling " + termtext.OneLine(se.ContentBlock.Name, MaxSummaryRunes)
		}
	case "content_block_delta":
		switch se.Delta.Type {
		case "text_delta":
			p.pending.WriteString(se.Delta.Text)
			p.activity = "writing"
		case "thinking_delta":
			p.activity = "thinking"
		}
	}
}

func (p *Parser) claudeResult(ev *claudeEvent) []Entry {
	out := p.flush(nil)
	e := Entry{CostUSD: ev.TotalCostUSD, DurationMS: int64(ev.DurationMS)}
	if u := ev.Usage; u != nil {
		e.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
		e.OutputTokens = u.OutputTokens
	}
	if p.outcome.Final {
		// a further turn in the same process (stream-json input): usage
		// is that turn's own, total_cost_usd already the process's
		e.InputTokens += p.outcome.InputTokens
		e.OutputTokens += p.outcome.OutputTokens
	}
	// An error result still says "subtype":"success"; is_error decides, and
	// the error_* subtypes (error_max_turns, error_during_execution...) fail.
	success := !ev.IsError && !strings.HasPrefix(ev.Subtype, "error")
	if success {
		return append(out, p.final(e, true, ev.Result, ""))
	}
	msg := ev.Result
	if msg == "" && len(ev.Errors) > 0 {
		msg = strings.Join(ev.Errors, "; ")
	}
	if msg == "" && ev.Subtype != "" && ev.Subtype != "success" {
		msg = ev.Subtype
	}
	return append(out, p.final(e, false, "", msg))
}
