package transcript

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/subdash/subdash/supervisor/termtext"
)

// codexEvent is one line of `codex exec --json`.
type codexEvent struct {
	Type     string     `json:"type"`
	ThreadID string     `json:"thread_id"`
	Message  string     `json:"message"` // top-level error
	Error    codexError `json:"error"`   // turn.failed
	Item     codexItem  `json:"item"`    // item.started/updated/completed
	Usage    struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

type codexError struct {
	Message string `json:"message"`
}

// codexItem is the union of the thread item types this package reads.
type codexItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
	// agent_message, reasoning
	Text string `json:"text"`
	// error
	Message string `json:"message"`
	// command_execution
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	// file_change
	Changes []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	// mcp_tool_call
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    *struct {
		Content json.RawMessage `json:"content"`
	} `json:"result"`
	Err *codexError `json:"error"`
	// web_search
	Query string `json:"query"`
	// todo_list
	Items []struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	} `json:"items"`
}

// codexReconnect matches the stream errors codex prints while it retries
// the model: "Reconnecting... 2/5 (stream disconnected ...)" or
// "Reconnecting... waiting for network (...)".
var codexReconnect = regexp.MustCompile(`^Re-?connecting\.*\s*(?:(\d+)/(\d+))?`)

func (p *Parser) codexLine(line []byte) []Entry {
	var ev codexEvent
	if !decode(line, &ev) {
		return malformed(line)
	}
	switch ev.Type {
	case "thread.started":
		return []Entry{p.initEntry("thread", ev.ThreadID, "")}
	case "turn.started":
		p.thinking()
		return nil
	case "turn.completed":
		e := Entry{InputTokens: ev.Usage.InputTokens, OutputTokens: ev.Usage.OutputTokens}
		return []Entry{p.final(e, true, "", "")}
	case "turn.failed":
		return []Entry{p.final(Entry{}, false, "", ev.Error.Message)}
	case "error":
		if m := codexReconnect.FindStringSubmatch(ev.Message); m != nil {
			attempt, _ := strconv.Atoi(m[1])
			most, _ := strconv.Atoi(m[2])
			return []Entry{p.retry(ev.Message, attempt, most)}
		}
		return []Entry{p.errorEntry(ev.Message)}
	case "item.started", "item.updated", "item.completed":
		if ev.Item.Type == "" {
			break
		}
		return p.codexItem(strings.TrimPrefix(ev.Type, "item."), &ev.Item)
	}
	return []Entry{unknown(line, ev.Type, ev.Item.Type)}
}

// codexItem handles one item event; phase is "started", "updated" or
// "completed". Tool-like items make a tool_call when they start and a
// tool_result when they complete (both at once for an item that only
// completes, such as file_change).
func (p *Parser) codexItem(phase string, it *codexItem) []Entry {
	done := phase == "completed"
	switch it.Type {
	case "agent_message":
		if !done {
			p.activity = "writing"
			return nil
		}
		p.boundary() // the answer is the last agent message
		e := p.text(it.Text)
		p.thinking()
		return []Entry{e}
	case "reasoning":
		p.activity = "thinking"
		if !done {
			return nil
		}
		return []Entry{{Kind: KindThinking, Text: plain(it.Text)}}
	case "error":
		return []Entry{p.errorEntry(it.Message)}
	case "todo_list":
		if done {
			return nil // the last update already showed the list
		}
		return []Entry{codexTodo(it)}
	}
	name, summary, ok := codexTool(it)
	if !ok {
		return []Entry{{Kind: KindUnknown, Text: termtext.OneLine("item."+phase+"/"+it.Type, MaxSummaryRunes)}}
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
		output, failed := codexToolOutput(it)
		return append(out, p.toolResult(it.ID, name, summary, output, failed))
	}
	return nil // updates of a running tool
}

// codexTool names a tool-like item and summarizes its input.
func codexTool(it *codexItem) (name, summary string, ok bool) {
	switch it.Type {
	case "command_execution":
		return "shell", termtext.OneLine(unwrapShell(it.Command), MaxSummaryRunes), true
	case "file_change":
		var parts []string
		for _, c := range it.Changes {
			parts = append(parts, c.Kind+" "+c.Path)
		}
		return "apply_patch", termtext.OneLine(strings.Join(parts, ", "), MaxSummaryRunes), true
	case "mcp_tool_call":
		return it.Server + "." + it.Tool, toolSummary(it.Arguments), true
	case "web_search":
		return "web_search", termtext.OneLine(it.Query, MaxSummaryRunes), true
	}
	return "", "", false
}

// codexToolOutput returns the output of a completed tool-like item and
// whether it failed.
func codexToolOutput(it *codexItem) (string, bool) {
	failed := it.Status == "failed" || it.Status == "declined"
	switch it.Type {
	case "command_execution":
		if it.ExitCode != nil && *it.ExitCode != 0 {
			failed = true
		}
		out := it.AggregatedOutput
		if strings.TrimSpace(out) == "" && failed {
			out = "command " + it.Status
			if it.ExitCode != nil {
				out = "exit code " + strconv.Itoa(*it.ExitCode)
			}
		}
		return out, failed
	case "file_change":
		var lines []string
		for _, c := range it.Changes {
			lines = append(lines, c.Kind+" "+c.Path)
		}
		if failed {
			lines = append([]string{"patch " + it.Status}, lines...)
		}
		return strings.Join(lines, "\n"), failed
	case "mcp_tool_call":
		if it.Err != nil && it.Err.Message != "" {
			return it.Err.Message, true
		}
		if it.Result != nil {
			return claudeResultText(it.Result.Content), failed
		}
	}
	return "", failed
}

// codexTodo renders the agent's to-do list as a tool_call entry of the
// pseudo tool "todo_list": Summary counts the steps, Text lists them.
func codexTodo(it *codexItem) Entry {
	var lines []string
	done := 0
	for _, t := range it.Items {
		mark := "[ ] "
		if t.Completed {
			mark = "[x] "
			done++
		}
		lines = append(lines, mark+termtext.OneLine(t.Text, MaxResultLineRunes))
	}
	return Entry{Kind: KindToolCall, Tool: "todo_list", ID: plain(it.ID),
		Summary: strconv.Itoa(done) + "/" + strconv.Itoa(len(it.Items)) + " done",
		Text:    strings.Join(lines, "\n")}
}
