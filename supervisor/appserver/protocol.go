package appserver

import (
	"bytes"
	"encoding/json"
	"errors"
)

// The message shapes below are those of `codex app-server
// generate-json-schema` of codex 0.171.0 (its v2 protocol), cut to the
// fields subdash reads or writes. Unknown fields are ignored, so a later
// codex that adds some decodes the same.

// Message is one line the app-server writes on stdout: a response to a
// request of ours (ID and Result or Error), a request of its own (ID and
// Method: an approval), or a notification (Method alone).
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
}

// RPCError is the error of a JSON-RPC response.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Decode reads one stdout line; ok is false for a line that is not a JSON
// object of the protocol (neither an id nor a method).
func Decode(line []byte) (m Message, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return m, false
	}
	err := json.Unmarshal(line, &m)
	var typeErr *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typeErr) {
		return Message{}, false
	}
	return m, len(m.ID) > 0 || m.Method != ""
}

// IsResponse reports whether m answers a request of ours.
func (m Message) IsResponse() bool { return len(m.ID) > 0 && m.Method == "" }

// IsRequest reports whether m is a request of the app-server's own, which
// waits for an answer (an approval).
func (m Message) IsRequest() bool { return len(m.ID) > 0 && m.Method != "" }

// IsNotification reports whether m is a notification.
func (m Message) IsNotification() bool { return len(m.ID) == 0 && m.Method != "" }

// Request names the request of subdash's that the response m answers: its
// method and tag (RequestID); both "" for another id.
func (m Message) Request() (method, tag string) { return ParseRequestID(m.ID) }

// Body decodes m's params (or, for a response, its result) into v,
// ignoring fields of unexpected types; it reports whether m held JSON
// there.
func (m Message) Body(v any) bool {
	raw := m.Params
	if m.IsResponse() {
		raw = m.Result
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return false
	}
	err := json.Unmarshal(raw, v)
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}

// Thread is a conversation (thread/start, thread/resume results).
type Thread struct {
	ID string `json:"id"`
}

// ThreadResult is the result of thread/start and thread/resume.
type ThreadResult struct {
	Thread Thread `json:"thread"`
	Model  string `json:"model"`
}

// The statuses of a turn.
const (
	TurnCompleted   = "completed"
	TurnInterrupted = "interrupted"
	TurnFailed      = "failed"
	TurnInProgress  = "inProgress"
)

// Turn is one turn of a thread.
type Turn struct {
	ID     string     `json:"id"`
	Status string     `json:"status"`
	Error  *TurnError `json:"error"`
}

// TurnError says why a turn failed, or what a model call met.
type TurnError struct {
	Message string `json:"message"`
	// Info is codex's class of the error: a word ("internalServerError",
	// "unauthorized") or an object naming one ({"httpConnectionFailed":
	// {"httpStatusCode": 502}}).
	Info              json.RawMessage `json:"codexErrorInfo"`
	AdditionalDetails string          `json:"additionalDetails"`
}

// TurnResult is the result of turn/start.
type TurnResult struct {
	Turn Turn `json:"turn"`
}

// SteerResult is the result of turn/steer: the turn that took the input.
type SteerResult struct {
	TurnID string `json:"turnId"`
}

// TurnNotification is the params of turn/started and turn/completed.
type TurnNotification struct {
	ThreadID string `json:"threadId"`
	Turn     Turn   `json:"turn"`
}

// ItemNotification is the params of item/started and item/completed.
type ItemNotification struct {
	Item     Item   `json:"item"`
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
}

// The item types subdash reads (ThreadItem's "type").
const (
	ItemUserMessage      = "userMessage"
	ItemAgentMessage     = "agentMessage"
	ItemReasoning        = "reasoning"
	ItemCommandExecution = "commandExecution"
	ItemFileChange       = "fileChange"
	ItemMcpToolCall      = "mcpToolCall"
	ItemDynamicToolCall  = "dynamicToolCall"
	ItemWebSearch        = "webSearch"
	ItemPlan             = "plan"
	ItemCollabAgent      = "collabAgentToolCall"
)

// Item is the union of the thread items subdash reads; each type sets its
// own fields (ThreadItem in the schema).
type Item struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	// userMessage: the id the client gave (clientUserMessageId), and the
	// input; reasoning: its content (strings).
	ClientID string          `json:"clientId"`
	Content  json.RawMessage `json:"content"`
	// agentMessage, plan
	Text string `json:"text"`
	// reasoning
	Summary []string `json:"summary"`
	// commandExecution
	Command          string  `json:"command"`
	Cwd              string  `json:"cwd"`
	AggregatedOutput *string `json:"aggregatedOutput"`
	ExitCode         *int    `json:"exitCode"`
	// commandExecution, fileChange, mcpToolCall, dynamicToolCall,
	// collabAgentToolCall: "inProgress", "completed", "failed",
	// "declined", "interrupted"
	Status string `json:"status"`
	// fileChange
	Changes []FileChange `json:"changes"`
	// mcpToolCall, dynamicToolCall, collabAgentToolCall
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    *struct {
		Content json.RawMessage `json:"content"`
	} `json:"result"`
	Err *struct {
		Message string `json:"message"`
	} `json:"error"`
	// webSearch
	Query string `json:"query"`
	// collabAgentToolCall
	Prompt string `json:"prompt"`
}

// FileChange is one file of a fileChange item.
type FileChange struct {
	Path string `json:"path"`
	Kind struct {
		Type string `json:"type"` // "add", "delete", "update"
	} `json:"kind"`
}

// UserInput is one part of a user message (text; images and mentions are
// shown by type).
type UserInput struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// UserText returns the text of a userMessage item's content, its parts
// joined by newlines (a part other than text shown as [type]).
func (it *Item) UserText() string {
	var parts []UserInput
	if json.Unmarshal(it.Content, &parts) != nil {
		return ""
	}
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		if p.Type == "text" {
			b.WriteString(p.Text)
		} else {
			b.WriteString("[" + p.Type + "]")
		}
	}
	return b.String()
}

// ReasoningText returns the text of a reasoning item: its summary, else
// its content.
func (it *Item) ReasoningText() string {
	parts := it.Summary
	if len(parts) == 0 {
		_ = json.Unmarshal(it.Content, &parts) // not strings: no text
	}
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	return b.String()
}

// ErrorNotification is the params of the "error" notification: what a
// model call met, and whether codex retries it.
type ErrorNotification struct {
	Error     TurnError `json:"error"`
	WillRetry bool      `json:"willRetry"`
	ThreadID  string    `json:"threadId"`
	TurnID    string    `json:"turnId"`
}

// TokenUsageNotification is the params of thread/tokenUsage/updated: the
// thread's tokens so far (Total, restored from its record on resume) and
// those of the latest model call (Last).
type TokenUsageNotification struct {
	ThreadID   string `json:"threadId"`
	TurnID     string `json:"turnId"`
	TokenUsage struct {
		Total TokenBreakdown `json:"total"`
		Last  TokenBreakdown `json:"last"`
	} `json:"tokenUsage"`
}

// TokenBreakdown counts tokens; InputTokens includes the cached ones.
type TokenBreakdown struct {
	InputTokens       int64 `json:"inputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	TotalTokens       int64 `json:"totalTokens"`
}

// DeltaNotification is the params of item/agentMessage/delta.
type DeltaNotification struct {
	ItemID string `json:"itemId"`
	Delta  string `json:"delta"`
}

// WarningNotification is the params of "warning" and "configWarning".
type WarningNotification struct {
	Message string `json:"message"`
	Summary string `json:"summary"`
}

// ResolvedNotification is the params of serverRequest/resolved: a request
// of the app-server's own that needs no answer any more (answered, or
// withdrawn as its turn ended).
type ResolvedNotification struct {
	ThreadID  string          `json:"threadId"`
	RequestID json.RawMessage `json:"requestId"`
}

// The notifications subdash reads.
const (
	MethodTurnStarted     = "turn/started"
	MethodTurnCompleted   = "turn/completed"
	MethodItemStarted     = "item/started"
	MethodItemCompleted   = "item/completed"
	MethodAgentDelta      = "item/agentMessage/delta"
	MethodError           = "error"
	MethodTokenUsage      = "thread/tokenUsage/updated"
	MethodWarning         = "warning"
	MethodRequestResolved = "serverRequest/resolved"
)

// The requests subdash sends.
const (
	MethodInitialize    = "initialize"
	MethodInitialized   = "initialized"
	MethodThreadStart   = "thread/start"
	MethodThreadResume  = "thread/resume"
	MethodTurnStart     = "turn/start"
	MethodTurnSteer     = "turn/steer"
	MethodTurnInterrupt = "turn/interrupt"
)

// quietNotifications are the notifications subdash opts out of at
// initialize: what it does not read and would only fill the log file
// (per-token deltas of reasoning and command output, whose whole text the
// completed item carries, account and connection state).
var quietNotifications = []string{
	"item/reasoning/summaryTextDelta", "item/reasoning/textDelta", "item/reasoning/summaryPartAdded",
	"item/commandExecution/outputDelta", "item/fileChange/outputDelta",
	"account/rateLimits/updated", "remoteControl/status/changed", "thread/status/changed",
	"mcpServer/startupStatus/updated",
}

// initializeParams are those of initialize.
type initializeParams struct {
	ClientInfo   clientInfo   `json:"clientInfo"`
	Capabilities capabilities `json:"capabilities"`
}

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type capabilities struct {
	OptOut []string `json:"optOutNotificationMethods"`
}

// threadParams are those of thread/start and thread/resume (ThreadID set).
type threadParams struct {
	ThreadID       string `json:"threadId,omitempty"`
	ApprovalPolicy string `json:"approvalPolicy"`
	ExcludeTurns   bool   `json:"excludeTurns,omitempty"`
}

// turnParams are those of turn/start and turn/steer (ExpectedTurnID set).
type turnParams struct {
	ThreadID            string      `json:"threadId"`
	ExpectedTurnID      string      `json:"expectedTurnId,omitempty"`
	Input               []UserInput `json:"input"`
	ClientUserMessageID string      `json:"clientUserMessageId,omitempty"`
}

// interruptParams are those of turn/interrupt.
type interruptParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
}
