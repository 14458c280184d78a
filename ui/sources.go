package ui

import (
	"context"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/logview"
)

// fetchPage reads the items req asks for of the log key names: a
// submission's display lines (SPEC §5: already safe to draw, printable text
// and SGR, each styled line ending reset), or its transcript entries (SPEC
// §8), each drawn as one or more styled lines, with text that is still
// streaming as one more item after the last entry. It may block (for a
// viewer it is a call on the socket): the dashboard calls it in a command.
func fetchPage(ctx context.Context, sup Supervisor, key logKey, req logview.Request, st theme.Styles) (logview.Page, error) {
	if key.transcript {
		w, ok, err := sup.Transcript(ctx, key.agent, key.seq, req.From, req.N)
		if err != nil || !ok {
			return logview.Page{}, err
		}
		return entriesPage(w, req, st), nil
	}
	w, err := sup.Window(ctx, key.agent, key.seq, req.From, req.N)
	if err != nil {
		return logview.Page{}, err
	}
	return windowPage(w, req), nil
}

// entriesPage is the page of the transcript window w that answers req.
func entriesPage(w proto.TranscriptWindow, req logview.Request, st theme.Styles) logview.Page {
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
			pg.Items = append(pg.Items, logview.Item{Text: styleLines(st.Assistant, transcript.ShowText(w.Pending)) + "▍"})
		}
	}
	return pg
}

// windowPage is the page of the window of display lines w that answers
// req.
func windowPage(w proto.Window, req logview.Request) logview.Page {
	pg := logview.Page{First: w.First, Total: w.Total, From: max(req.From, w.First)}
	if req.From < 0 {
		pg.From = w.Total - int64(len(w.Lines))
	}
	pg.Items = make([]logview.Item, len(w.Lines))
	for i, l := range w.Lines {
		pg.Items[i] = logview.Item{Text: l.Text, Stderr: l.Stderr}
	}
	return pg
}

// styleLines draws every line of text in st, one Render per line, so no
// line is padded to the widest.
func styleLines(st lipgloss.Style, text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = st.Render(l)
		}
	}
	return strings.Join(lines, "\n")
}

// RenderEntry draws one transcript entry as styled lines: its Display
// (the lines a search of the transcript matches, SPEC §8) in the style of
// its role, an inner agent's (Depth > 0) after its muted bar, "│ " per
// level.
func RenderEntry(e transcript.Entry, st theme.Styles) string {
	d := e.Display()
	text := styleLines(roleStyle(d.Role, st), strings.Join(d.Lines, "\n"))
	if d.Bar == "" {
		return text
	}
	bar := st.Muted.Render(d.Bar)
	return bar + strings.ReplaceAll(text, "\n", "\n"+bar)
}

// roleStyle is the style of a transcript entry's role.
func roleStyle(r transcript.Role, st theme.Styles) lipgloss.Style {
	switch r {
	case transcript.RoleAssistant:
		return st.Assistant
	case transcript.RoleThinking:
		return st.Thinking
	case transcript.RoleTool:
		return st.Tool
	case transcript.RoleToolOutput:
		return st.ToolOutput
	case transcript.RoleToolError:
		return st.ToolError
	case transcript.RoleError:
		return st.Error
	case transcript.RoleRetry:
		return st.Retry
	case transcript.RoleWarning:
		return st.Warning
	case transcript.RoleResult:
		return st.Result
	case transcript.RoleStderr:
		return st.Stderr
	}
	return st.Muted
}
