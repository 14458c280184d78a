package transcript

import (
	"encoding/json"
	"strings"
)

// geminiEvent is one line of `gemini -p "" --output-format stream-json`.
type geminiEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	// message
	Role    string `json:"role"`
	Content string `json:"content"`
	Delta   bool   `json:"delta"`
	// tool_use
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	// tool_result and result
	Status string       `json:"status"`
	Output string       `json:"output"`
	Error  *geminiError `json:"error"`
	// error
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// result
	Stats *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		DurationMS   int64 `json:"duration_ms"`
	} `json:"stats"`
}

type geminiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// geminiLine handles one gemini event. Assistant text arrives as deltas
// ("delta":true); they collect in Pending and become one text entry at the
// next event of any other kind (or at End).
func (p *Parser) geminiLine(line []byte) []Entry {
	var ev geminiEvent
	if !decode(line, &ev) {
		return malformed(line)
	}
	if ev.Type == "message" && ev.Role == "assistant" {
		return p.geminiAssistant(&ev)
	}
	out := p.flush(nil)
	switch ev.Type {
	case "init":
		return append(out, p.initEntry("session", ev.SessionID, ev.Model))
	case "message":
		if ev.Role != "user" {
			return append(out, unknown(line, "message", ev.Role))
		}
		p.boundary()
		p.thinking()
		return append(out, Entry{Kind: KindUser, Text: strings.TrimRight(plain(ev.Content), "\n")})
	case "tool_use":
		return append(out, p.toolCall(ev.ToolID, ev.ToolName, toolSummary(ev.Parameters)))
	case "tool_result":
		output, failed := ev.Output, ev.Status == "error"
		if ev.Error != nil && ev.Error.Message != "" {
			output, failed = ev.Error.Message, true
		}
		return append(out, p.toolResult(ev.ToolID, "", "", output, failed))
	case "error":
		if ev.Severity == "warning" {
			return append(out, Entry{Kind: KindError, Text: "warning: " + plain(ev.Message)})
		}
		return append(out, p.errorEntry(ev.Message))
	case "result":
		var e Entry
		if s := ev.Stats; s != nil {
			e.InputTokens, e.OutputTokens, e.DurationMS = s.InputTokens, s.OutputTokens, s.DurationMS
		}
		msg := ""
		if ev.Error != nil {
			msg = ev.Error.Message
			if msg == "" {
				msg = ev.Error.Type
			}
		}
		return append(out, p.final(e, ev.Status == "success", "", msg))
	}
	return append(out, unknown(line, ev.Type, ""))
}

func (p *Parser) geminiAssistant(ev *geminiEvent) []Entry {
	p.retries = 0
	if ev.Delta {
		p.pending.WriteString(ev.Content)
		p.activity = "writing"
		return nil
	}
	// A whole message: it either repeats the deltas before it or follows
	// them.
	if p.pending.String() == ev.Content {
		p.pending.Reset()
	}
	out := p.flush(nil)
	if ev.Content != "" {
		out = append(out, p.text(ev.Content))
	}
	p.thinking()
	return out
}
