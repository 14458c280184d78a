package transcript

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/subdash/subdash/supervisor/termtext"
)

// The control protocol of `claude -p --input-format stream-json
// --permission-prompt-tool stdio` (SPEC §12), as Claude Code 2.1.197 speaks
// it (recorded in testdata/agent-streams/claude-stream-approval-*.jsonl):
//
//	stdin  {"type":"control_request","request_id":"init-1","request":{"subtype":"initialize"}}
//	stdin  {"type":"user","message":{"role":"user","content":"…"},"parent_tool_use_id":null,"session_id":"…"}
//	stdout {"type":"control_response","response":{"subtype":"success","request_id":"init-1","response":{…}}}
//	stdout {"type":"control_request","request_id":"<uuid>","request":{"subtype":"can_use_tool",
//	        "tool_name":"Bash","input":{…},"description":"…","permission_suggestions":[…],
//	        "blocked_path":"…","tool_use_id":"toolu_…"}}
//	stdin  {"type":"control_response","response":{"subtype":"success","request_id":"<uuid>",
//	        "response":{"behavior":"allow","updatedInput":{…}}}}
//	   or  … "response":{"behavior":"deny","message":"…"}}}
//	stdout {"type":"control_cancel_request","request_id":"<uuid>"}   (the CLI withdrew a request)
//	stdin  {"type":"control_request","request_id":"subdash-stop-…","request":{"subtype":"interrupt"}}   (a stop, SPEC §4)
//	stdout {"type":"control_response","response":{"subtype":"success","request_id":"subdash-stop-…"}}
//	stdout the running tool's result "The user doesn't want to proceed with this tool use…",
//	       then {"type":"result","subtype":"error_during_execution","is_error":true,…}
//
// The CLI keeps running until its stdin closes; a request still unanswered
// when stdin closes fails its tool with "Tool permission stream closed
// before response received".

// KindApproval is a tool permission request of the CLI (claude
// can_use_tool): Tool is the tool, ID the request id to answer, Summary the
// one-line input, and Text the request whole (description, input, path).
const KindApproval Kind = "approval"

// KindApprovalAnswer is the answer subdash sent to an approval request (the
// supervisor adds these; a parser never makes them), or the CLI withdrawing
// the request. Tool and ID name the request; Text says what was answered;
// IsError is set for a denial.
const KindApprovalAnswer Kind = "approval_answer"

// maxApprovalInputLines bounds the lines of a tool input shown in an
// approval entry; the rest is counted.
const maxApprovalInputLines = 60

// ControlRequest is a control message the CLI wrote on stdout: a
// can_use_tool request to answer, or the cancellation of one.
type ControlRequest struct {
	// Type is "control_request" or "control_cancel_request".
	Type string
	// RequestID is the id an answer must carry.
	RequestID string
	// Subtype is the request's subtype, "can_use_tool" for approvals.
	Subtype string
	// Tool is the tool the agent wants to use (tool_name).
	Tool string
	// Input is the tool input as the CLI sent it (a JSON object); an allow
	// answer sends it back as updatedInput.
	Input json.RawMessage
	// Summary is the one-line summary of Input, at most MaxSummaryRunes.
	Summary string
	// Description is what the CLI says the tool call does, plain text.
	Description string
	// BlockedPath is the path that needs permission, when the CLI names one.
	BlockedPath string
	// DecisionReason and DecisionReasonType are why the CLI asks, when it
	// says (decision_reason, decision_reason_type: "other", "workingDir",
	// …); ClaudeDenial words a denial from them.
	DecisionReason, DecisionReasonType string
	// ToolUseID is the id of the tool_use block the request is about.
	ToolUseID string
}

type claudeControl struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Request   struct {
		Subtype     string          `json:"subtype"`
		ToolName    string          `json:"tool_name"`
		Input       json.RawMessage `json:"input"`
		Description string          `json:"description"`
		BlockedPath string          `json:"blocked_path"`
		ToolUseID   string          `json:"tool_use_id"`
		Reason      string          `json:"decision_reason"`
		ReasonType  string          `json:"decision_reason_type"`
	} `json:"request"`
}

// ParseClaudeControl decodes a control_request or control_cancel_request
// line of claude's stdout; ok is false for any other line.
func ParseClaudeControl(line []byte) (c ControlRequest, ok bool) {
	line = bytes.TrimSpace(line)
	if !bytes.Contains(line, []byte(`"control_`)) {
		return c, false
	}
	var ev claudeControl
	if !decode(line, &ev) || (ev.Type != "control_request" && ev.Type != "control_cancel_request") {
		return c, false
	}
	r := ev.Request
	input := bytes.TrimSpace(r.Input)
	if len(input) == 0 || input[0] != '{' {
		input = []byte("{}")
	}
	return ControlRequest{
		Type: ev.Type, RequestID: ev.RequestID, Subtype: r.Subtype,
		Tool: termtext.OneLine(r.ToolName, MaxSummaryRunes), Input: append(json.RawMessage(nil), input...),
		Summary: toolSummary(input), Description: plain(r.Description),
		BlockedPath: plain(r.BlockedPath), ToolUseID: r.ToolUseID,
		DecisionReason: plain(r.Reason), DecisionReasonType: r.ReasonType,
	}, true
}

// claudeControlLine makes the entries of a control line: an approval entry
// for can_use_tool, an answer entry for a cancellation, none for the CLI's
// reply to initialize; other requests show as unknown events.
func (p *Parser) claudeControlLine(line []byte, typ string) []Entry {
	if typ == "control_response" {
		return nil
	}
	c, ok := ParseClaudeControl(line)
	if !ok {
		return malformed(line)
	}
	if c.Type == "control_cancel_request" {
		return []Entry{{Kind: KindApprovalAnswer, ID: plain(c.RequestID), Text: "request withdrawn by the CLI"}}
	}
	if qs, ok := ParseQuestions(c); ok {
		return []Entry{{Kind: KindQuestion, Tool: c.Tool, ID: plain(c.RequestID), Text: QuestionsText(qs)}}
	}
	if c.Subtype != "can_use_tool" {
		return []Entry{{Kind: KindUnknown, Text: termtext.OneLine("control_request/"+c.Subtype, MaxSummaryRunes)}}
	}
	return []Entry{{Kind: KindApproval, Tool: c.Tool, ID: plain(c.RequestID), Summary: c.Summary, Text: ApprovalText(c)}}
}

// ApprovalText is the whole request as the transcript shows it: the
// description, the tool input as indented JSON (at most
// maxApprovalInputLines lines, the rest counted) and the blocked path.
func ApprovalText(c ControlRequest) string {
	var b strings.Builder
	if c.Description != "" {
		b.WriteString(c.Description)
		b.WriteByte('\n')
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, c.Input, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(c.Input)
	}
	lines := strings.Split(plain(pretty.String()), "\n")
	if len(lines) > maxApprovalInputLines {
		more := len(lines) - maxApprovalInputLines
		lines = append(lines[:maxApprovalInputLines], "… "+itoa(more)+" more lines")
	}
	b.WriteString("input: ")
	b.WriteString(strings.Join(lines, "\n"))
	if c.BlockedPath != "" {
		b.WriteString("\npath: ")
		b.WriteString(c.BlockedPath)
	}
	return b.String()
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// ClaudeInitialize is the initialize control request subdash writes first
// on claude's stdin, with its newline.
func ClaudeInitialize(requestID string) []byte {
	return controlLine(map[string]any{"type": "control_request", "request_id": requestID,
		"request": map[string]any{"subtype": "initialize"}})
}

// ClaudeInterrupt is the interrupt control request, with its newline: the
// CLI's own interrupt over stream-json stdin (what the Agent SDK sends), on
// which it stops its turn (a running tool is stopped, its result not sent
// to the model), writes a result of subtype error_during_execution, and
// waits for more input. Seen with claude 2.1.197 and 2.1.328.
func ClaudeInterrupt(requestID string) []byte {
	return controlLine(map[string]any{"type": "control_request", "request_id": requestID,
		"request": map[string]any{"subtype": "interrupt"}})
}

// ClaudeUserMessage is message as a stream-json user message, with its
// newline. sessionID may be "".
func ClaudeUserMessage(message, sessionID string) []byte {
	return controlLine(map[string]any{"type": "user",
		"message":            map[string]any{"role": "user", "content": message},
		"parent_tool_use_id": nil, "session_id": sessionID})
}

// ClaudeAllow is the answer that allows request c, with its newline: the
// input goes back unchanged as updatedInput. With always, it also adds a
// rule allowing c.Tool for the rest of the CLI's session (a permission
// update of destination "session", as permission_suggestions offer them).
func ClaudeAllow(c ControlRequest, always bool) []byte {
	resp := map[string]any{"behavior": "allow", "updatedInput": c.Input}
	if always {
		resp["updatedPermissions"] = []any{map[string]any{"type": "addRules",
			"rules":    []any{map[string]any{"toolName": c.Tool}},
			"behavior": "allow", "destination": "session"}}
	}
	return controlResponse(c.RequestID, resp)
}

// ClaudeDeny is the answer that denies request c with message (which the
// CLI hands the model as the tool's result), with its newline.
func ClaudeDeny(c ControlRequest, message string) []byte {
	return controlResponse(c.RequestID, map[string]any{"behavior": "deny", "message": message})
}

func controlResponse(requestID string, resp map[string]any) []byte {
	return controlLine(map[string]any{"type": "control_response",
		"response": map[string]any{"subtype": "success", "request_id": requestID, "response": resp}})
}

func controlLine(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // maps of strings and raw JSON objects always encode
	return b.Bytes()
}
