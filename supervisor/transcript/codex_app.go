package transcript

import (
	"encoding/json"
	"strings"

	"github.com/subdash/subdash/supervisor/appserver"
	"github.com/subdash/subdash/supervisor/termtext"
)

// The stream of `codex app-server` (the codex preset, SPEC §8): JSON-RPC
// lines, the answers to subdash's requests, the app-server's
// notifications and its approval requests (package appserver has the
// shapes and the order). FormatCodex reads them beside `codex exec --json`
// lines: a line with a top-level "id" or "method" is the app-server's.

// appState is what the parser keeps of an app-server stream.
type appState struct {
	// turns are the turns of this process (turn/start answers,
	// turn/started): a token count of another turn is the thread's total
	// restored on resume, which this submission did not spend.
	turns map[string]bool
	// base is the thread's tokens before this process's first model call;
	// total the latest count.
	base, total appserver.TokenBreakdown
}

// codexAppLine makes the entries of one app-server line.
func (p *Parser) codexAppLine(line []byte, m appserver.Message) []Entry {
	switch {
	case m.IsResponse():
		return p.codexAppResponse(m)
	case m.IsRequest():
		return p.codexAppRequest(line, m)
	}
	return p.codexAppNotification(line, m)
}

// codexAppResponse reads the answer to a request of subdash's: the thread
// (the session id), a turn's id, or why the start was refused.
func (p *Parser) codexAppResponse(m appserver.Message) []Entry {
	method, tag := m.Request()
	if m.Error != nil {
		msg := plain(m.Error.Message)
		switch {
		case method == appserver.MethodThreadResume:
			return []Entry{p.errorEntry("codex could not resume the thread (" + msg + "); this submission starts a new thread")}
		case tag == appserver.TagMessage:
			return []Entry{p.final(p.appUsage(), false, "", "codex refused "+method+": "+msg)}
		}
		return nil // a steer's: its receipt says what became of it
	}
	var r struct {
		appserver.ThreadResult
		Turn appserver.Turn `json:"turn"`
	}
	m.Body(&r)
	if r.Turn.ID != "" {
		p.appTurn(r.Turn.ID)
	}
	if id := r.Thread.ID; id != "" {
		return []Entry{p.initEntry("thread", id, r.Model)}
	}
	return nil
}

// appTurn records id as a turn of this process.
func (p *Parser) appTurn(id string) {
	if p.app.turns == nil {
		p.app.turns = map[string]bool{}
	}
	p.app.turns[id] = true
}

// appUsage is the entry carrying this process's tokens so far.
func (p *Parser) appUsage() Entry {
	return Entry{InputTokens: p.app.total.InputTokens - p.app.base.InputTokens,
		OutputTokens: p.app.total.OutputTokens - p.app.base.OutputTokens}
}

// codexAppRequest makes the entry of a request of the app-server's own:
// an approval request, or one subdash refuses (appserver.Driver).
func (p *Parser) codexAppRequest(line []byte, m appserver.Message) []Entry {
	if !appserver.IsApproval(m.Method) {
		return []Entry{{Kind: KindUnknown, Text: termtext.OneLine("request "+m.Method+" (subdash answers no such request)", MaxSummaryRunes)}}
	}
	files := ""
	var r appserver.ApprovalRequest
	if m.Body(&r) {
		files = p.calls[r.ItemID].summary
	}
	c, ok := ParseCodexApproval(line, files)
	if !ok {
		return malformed(line)
	}
	return []Entry{{Kind: KindApproval, Tool: c.Tool, ID: plain(c.RequestID), Summary: c.Summary, Text: ApprovalText(c)}}
}

// ParseCodexApproval decodes an approval request line of the app-server
// (SPEC §12) into the request subdash shows: Tool "shell" (a command),
// "apply_patch" (a file change, whose request names only its item: files
// is that item's summary, appserver.FileChangeSummary) or "permissions";
// RequestID the request's key (appserver.RequestKey); Description codex's
// reason; Input what it asks for. ok is false for any other line.
func ParseCodexApproval(line []byte, files string) (c ControlRequest, ok bool) {
	m, ok := appserver.Decode(line)
	if !ok || !m.IsRequest() || !appserver.IsApproval(m.Method) {
		return c, false
	}
	var r appserver.ApprovalRequest
	m.Body(&r)
	c = ControlRequest{Type: "control_request", RequestID: appserver.RequestKey(m.ID), Subtype: m.Method,
		Description: plain(r.Reason), ToolUseID: r.ItemID}
	var input map[string]any
	switch m.Method {
	case appserver.MethodCommandApproval:
		c.Tool, c.Summary = "shell", termtext.OneLine(unwrapShell(r.Command), MaxSummaryRunes)
		input = map[string]any{"command": r.Command, "cwd": r.Cwd}
	case appserver.MethodFileChangeApproval:
		c.Tool, c.Summary, c.BlockedPath = "apply_patch", termtext.OneLine(files, MaxSummaryRunes), plain(r.GrantRoot)
		input = map[string]any{"changes": files}
	default:
		c.Tool, c.Summary = "permissions", toolSummary(r.Permissions)
		input = map[string]any{"permissions": r.Permissions}
	}
	c.Input, _ = json.Marshal(input) // strings and JSON codex wrote: always encode
	return c, true
}

// codexAppNotification makes the entries of a notification.
func (p *Parser) codexAppNotification(line []byte, m appserver.Message) []Entry {
	switch m.Method {
	case appserver.MethodTurnStarted:
		var n appserver.TurnNotification
		m.Body(&n)
		p.appTurn(n.Turn.ID)
		p.thinking()
	case appserver.MethodTurnCompleted:
		var n appserver.TurnNotification
		m.Body(&n)
		return append(p.flush(nil), p.codexAppTurnEnd(n.Turn))
	case appserver.MethodItemStarted, appserver.MethodItemCompleted:
		var n appserver.ItemNotification
		if !m.Body(&n) || n.Item.Type == "" {
			return malformed(line)
		}
		return p.codexAppItem(m.Method == appserver.MethodItemCompleted, &n.Item)
	case appserver.MethodAgentDelta:
		var n appserver.DeltaNotification
		m.Body(&n)
		p.pending.WriteString(n.Delta)
		p.activity = "writing"
	case appserver.MethodError:
		var n appserver.ErrorNotification
		m.Body(&n)
		if n.WillRetry {
			return []Entry{p.retry(turnErrorText(n.Error), 0, 0)}
		}
		return []Entry{p.errorEntry(turnErrorText(n.Error))}
	case appserver.MethodTokenUsage:
		var n appserver.TokenUsageNotification
		m.Body(&n)
		if !p.app.turns[n.TurnID] {
			p.app.base = n.TokenUsage.Total // the thread's before this process
		}
		p.app.total = n.TokenUsage.Total
		u := p.appUsage()
		p.outcome.InputTokens, p.outcome.OutputTokens = u.InputTokens, u.OutputTokens
	case appserver.MethodWarning:
		var n appserver.WarningNotification
		m.Body(&n)
		return []Entry{{Kind: KindError, Text: plain(n.Message)}}
	case "turn/plan/updated":
		return []Entry{codexAppPlan(m)}
	}
	return nil // the app-server's other news: thread state, rate limits, resolved requests
}

// codexAppTurnEnd is the result entry of a turn's end.
func (p *Parser) codexAppTurnEnd(t appserver.Turn) Entry {
	e := p.appUsage()
	switch t.Status {
	case appserver.TurnCompleted:
		return p.final(e, true, "", "")
	case appserver.TurnInterrupted:
		return p.final(e, false, "", "the turn was interrupted")
	}
	msg := ""
	if t.Error != nil {
		msg = turnErrorText(*t.Error)
	}
	return p.final(e, false, "", msg)
}

// turnErrorText says a turn error in words: its message, its details and
// codex's class of it: `unexpected status 500 (internalServerError)`.
func turnErrorText(e appserver.TurnError) string {
	s := e.Message
	if d := strings.TrimSpace(e.AdditionalDetails); d != "" && !strings.Contains(s, d) {
		s += ": " + d
	}
	if info := errorInfo(e.Info); info != "" {
		s += " (" + info + ")"
	}
	return plain(s)
}

// errorInfo names codex's class of an error: the word, or the key of the
// object with its HTTP status when it has one.
func errorInfo(raw json.RawMessage) string {
	var word string
	if json.Unmarshal(raw, &word) == nil {
		return word
	}
	var obj map[string]struct {
		Status *int `json:"httpStatusCode"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	for k, v := range obj {
		if v.Status != nil {
			return k + ", HTTP " + itoa(*v.Status)
		}
		return k
	}
	return ""
}

// codexAppItem handles an item's start or completion.
func (p *Parser) codexAppItem(done bool, it *appserver.Item) []Entry {
	switch it.Type {
	case appserver.ItemUserMessage:
		if done {
			return nil
		}
		p.boundary()
		return []Entry{{Kind: KindUser, Text: strings.TrimRight(plain(it.UserText()), "\n"), ID: plain(it.ClientID)}}
	case appserver.ItemAgentMessage:
		if !done {
			p.activity = "writing"
			return nil
		}
		p.pending.Reset() // the deltas, now whole
		p.boundary()
		e := p.text(it.Text)
		p.thinking()
		return []Entry{e}
	case appserver.ItemReasoning:
		p.activity = "thinking"
		if !done {
			return nil
		}
		return []Entry{{Kind: KindThinking, Text: plain(it.ReasoningText())}}
	case appserver.ItemPlan:
		if !done {
			return nil
		}
		return []Entry{{Kind: KindThinking, Text: plain(it.Text)}}
	}
	name, summary, ok := codexAppTool(it)
	if !ok {
		return []Entry{{Kind: KindUnknown, Text: termtext.OneLine("item/"+it.Type, MaxSummaryRunes)}}
	}
	_, started := p.calls[it.ID]
	switch {
	case !done && !started:
		return []Entry{p.toolCall(it.ID, name, summary)}
	case done:
		var out []Entry
		if !started {
			out = append(out, p.toolCall(it.ID, name, summary))
		}
		output, failed := codexAppToolOutput(it)
		return append(out, p.toolResult(it.ID, name, summary, output, failed))
	}
	return nil
}

// codexAppTool names a tool-like item and summarizes its input.
func codexAppTool(it *appserver.Item) (name, summary string, ok bool) {
	switch it.Type {
	case appserver.ItemCommandExecution:
		return "shell", termtext.OneLine(unwrapShell(it.Command), MaxSummaryRunes), true
	case appserver.ItemFileChange:
		return "apply_patch", termtext.OneLine(appserver.FileChangeSummary(it.Changes), MaxSummaryRunes), true
	case appserver.ItemMcpToolCall:
		return it.Server + "." + it.Tool, toolSummary(it.Arguments), true
	case appserver.ItemDynamicToolCall:
		return it.Tool, toolSummary(it.Arguments), true
	case appserver.ItemWebSearch:
		return "web_search", termtext.OneLine(it.Query, MaxSummaryRunes), true
	case appserver.ItemCollabAgent:
		return "agents." + it.Tool, termtext.OneLine(it.Prompt, MaxSummaryRunes), true
	}
	return "", "", false
}

// codexAppToolOutput returns the output of a completed tool-like item and
// whether it failed.
func codexAppToolOutput(it *appserver.Item) (string, bool) {
	failed := it.Status == "failed" || it.Status == "declined" || it.Status == "interrupted"
	switch it.Type {
	case appserver.ItemCommandExecution:
		if it.ExitCode != nil && *it.ExitCode != 0 {
			failed = true
		}
		out := ""
		if it.AggregatedOutput != nil {
			out = *it.AggregatedOutput
		}
		if strings.TrimSpace(out) == "" && failed {
			out = "command " + it.Status
			if it.ExitCode != nil {
				out = "exit code " + itoa(*it.ExitCode)
			}
		}
		return out, failed
	case appserver.ItemFileChange:
		out := strings.ReplaceAll(appserver.FileChangeSummary(it.Changes), ", ", "\n")
		if failed {
			out = "patch " + it.Status + "\n" + out
		}
		return out, failed
	case appserver.ItemMcpToolCall, appserver.ItemDynamicToolCall:
		if it.Err != nil && it.Err.Message != "" {
			return it.Err.Message, true
		}
		if it.Result != nil {
			return claudeResultText(it.Result.Content), failed
		}
	}
	if failed {
		return it.Status, true
	}
	return "", false
}

// codexAppPlan renders turn/plan/updated as the agent's to-do list: a
// tool_call entry of the pseudo tool "todo_list", one per turn (its ID the
// turn's), Summary counting the steps done.
func codexAppPlan(m appserver.Message) Entry {
	var n struct {
		TurnID string `json:"turnId"`
		Plan   []struct {
			Step   string `json:"step"`
			Status string `json:"status"`
		} `json:"plan"`
	}
	m.Body(&n)
	var lines []string
	done := 0
	for _, s := range n.Plan {
		mark := "[ ] "
		if s.Status == "completed" {
			mark = "[x] "
			done++
		}
		lines = append(lines, mark+termtext.OneLine(s.Step, MaxResultLineRunes))
	}
	return Entry{Kind: KindToolCall, Tool: "todo_list", ID: plain(n.TurnID),
		Summary: itoa(done) + "/" + itoa(len(n.Plan)) + " done", Text: strings.Join(lines, "\n")}
}
