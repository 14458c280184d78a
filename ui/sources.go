package ui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/agenttable"
	"github.com/subdash/subdash/ui/logview"
)

// fetchPage reads the items req asks for of the log key names: a
// submission's display lines (SPEC §5: already safe to draw, printable text
// and SGR, each styled line ending reset), or its transcript entries (SPEC
// §8), each drawn as one or more styled lines, with text that is still
// streaming as one more item after the last entry. It may block (for a
// viewer it is a call on the socket): the dashboard calls it in a command.
func fetchPage(sup Supervisor, key logKey, req logview.Request, st theme.Styles) (logview.Page, error) {
	if key.transcript {
		w, ok, err := sup.Transcript(context.Background(), key.agent, key.seq, req.From, req.N)
		if err != nil || !ok {
			return logview.Page{}, err
		}
		pg := logview.Page{First: w.First, Total: w.Total, From: max(req.From, w.First)}
		if req.From < 0 {
			pg.From = w.Total - int64(len(w.Entries))
		}
		for _, e := range w.Entries {
			pg.Items = append(pg.Items, logview.Item{Text: RenderEntry(e, st)})
		}
		if w.Pending != "" {
			pg.Total++
			if req.From < 0 || pg.From+int64(len(w.Entries)) == w.Total && len(w.Entries) < req.N {
				pg.Items = append(pg.Items, logview.Item{Text: styleLines(st.Assistant, "", clean(w.Pending)) + "▍"})
			}
		}
		return pg, nil
	}
	w, err := sup.Window(context.Background(), key.agent, key.seq, req.From, req.N)
	if err != nil {
		return logview.Page{}, err
	}
	pg := logview.Page{First: w.First, Total: w.Total, From: max(req.From, w.First)}
	if req.From < 0 {
		pg.From = w.Total - int64(len(w.Lines))
	}
	pg.Items = make([]logview.Item, len(w.Lines))
	for i, l := range w.Lines {
		pg.Items[i] = logview.Item{Text: l.Text, Stderr: l.Stderr}
	}
	return pg, nil
}

// clean turns text an agent CLI reported (not cleaned by the supervisor)
// into plain lines: escape sequences and controls removed, tabs expanded,
// and the code points terminals disagree on the width of dropped.
func clean(text string) string {
	return termtext.DropAmbiguous(strings.TrimRight(termtext.Plain([]byte(text)), "\n"))
}

// styleLines draws every line of text in st (one Render per line, so no
// line is padded to the widest), the first one after prefix.
func styleLines(st lipgloss.Style, prefix, text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if i == 0 {
			l = prefix + l
		} else if prefix != "" {
			l = strings.Repeat(" ", lipgloss.Width(prefix)) + l
		}
		if l != "" {
			l = st.Render(l)
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// RenderEntry draws one transcript entry as styled lines: the assistant's
// text, thinking, each tool call with its summary, the head of each tool
// result, errors, retries, the CLI's stderr lines (in the raw view's stderr
// style, after "stderr ") and the result with tokens and cost. An inner
// agent's entry (Depth > 0, SPEC §8) has "│ " per level before each line,
// under the Agent call that started it.
func RenderEntry(e transcript.Entry, st theme.Styles) string {
	s := renderEntry(e, st)
	if e.Depth <= 0 {
		return s
	}
	bar := st.Muted.Render(strings.Repeat("│ ", min(e.Depth, 8)))
	return bar + strings.ReplaceAll(s, "\n", "\n"+bar)
}

func renderEntry(e transcript.Entry, st theme.Styles) string {
	text := clean(e.Text)
	switch e.Kind {
	case transcript.KindInit:
		return styleLines(st.Muted, "● ", text)
	case transcript.KindUser:
		return styleLines(st.Muted, "› ", text)
	case transcript.KindText:
		return styleLines(st.Assistant, "", text)
	case transcript.KindThinking:
		if text == "" {
			text = "thinking…"
		}
		return styleLines(st.Thinking, "∴ ", text)
	case transcript.KindToolCall:
		head := "⚙ " + clean(e.Tool)
		if e.Summary != "" {
			head += "  " + clean(e.Summary)
		}
		if text != "" {
			head += "\n" + text
		}
		return styleLines(st.Tool, "", head)
	case transcript.KindToolResult:
		style := st.ToolOutput
		if e.IsError {
			style = st.ToolError
		}
		if text == "" {
			text = "(no output)"
		}
		if e.MoreLines > 0 {
			text += fmt.Sprintf("\n… %d more lines", e.MoreLines)
		}
		return styleLines(style, "  ↳ ", text)
	case transcript.KindError:
		return styleLines(st.Error, "✗ ", text)
	case transcript.KindRetry:
		return styleLines(st.Retry, "↻ ", text)
	case transcript.KindApproval:
		head := "⚠ needs approval: " + clean(e.Tool)
		if e.Summary != "" {
			head += "  " + clean(e.Summary)
		}
		head += "  (request " + clean(e.ID) + ")"
		if text != "" {
			head += "\n" + text
		}
		return styleLines(st.Warning, "", head)
	case transcript.KindApprovalAnswer:
		style := st.Result
		if e.IsError {
			style = st.Error
		}
		head := "↳ " + text
		if e.Tool != "" {
			head = "↳ " + clean(e.Tool) + " " + clean(e.Summary) + ": " + text
		}
		return styleLines(style, "  ", head)
	case transcript.KindStderr:
		return styleLines(st.Stderr, "stderr ", text)
	case transcript.KindNote:
		return styleLines(st.Muted, "subdash: ", text)
	case transcript.KindResult:
		style, head := st.Result, "✓ result"
		if e.IsError {
			style, head = st.Error, "✗ result"
		}
		if u := usage(e); u != "" {
			head += " · " + u
		}
		if text != "" {
			head += "\n" + text
		}
		return styleLines(style, "", head)
	}
	return styleLines(st.Muted, "· ", text)
}

// usage formats the tokens, cost and duration a result reports.
func usage(e transcript.Entry) string {
	var parts []string
	if e.InputTokens > 0 || e.OutputTokens > 0 {
		parts = append(parts, fmt.Sprintf("%s in / %s out tokens", agenttable.Tokens(e.InputTokens), agenttable.Tokens(e.OutputTokens)))
	}
	if e.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", e.CostUSD))
	}
	if e.DurationMS > 0 {
		parts = append(parts, fmt.Sprintf("%.1fs", float64(e.DurationMS)/1000))
	}
	return strings.Join(parts, " · ")
}
