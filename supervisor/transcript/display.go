package transcript

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/termtext"
)

// Role is the colour role of an entry's lines on screen; the dashboard
// maps each to a style of its theme (package theme's field of the same
// name).
type Role string

// The roles of Display.
const (
	RoleMuted      Role = "muted"
	RoleAssistant  Role = "assistant"
	RoleThinking   Role = "thinking"
	RoleTool       Role = "tool"
	RoleToolOutput Role = "tool_output"
	RoleToolError  Role = "tool_error"
	RoleError      Role = "error"
	RoleRetry      Role = "retry"
	RoleWarning    Role = "warning"
	RoleResult     Role = "result"
	RoleStderr     Role = "stderr"
)

// Display is an entry as the transcript view shows it (SPEC §8), plain:
// the log pane draws Lines in Role's style with Bar before each, and a
// search of a transcript matches the same lines (Lines, Match), so what is
// counted is what is marked.
type Display struct {
	Role Role
	// Bar is "│ " per level of an inner agent (Entry.Depth, at most 8),
	// drawn muted before every line; "" for the agent's own entries.
	Bar string
	// Lines are the entry's lines after the bar: its mark ("⚙ ", "  ↳ ",
	// "✓ result · …") on the first, as many spaces as the mark has cells
	// before each line after it.
	Lines []string
}

// ShowText returns text an agent CLI reported as a line of the transcript
// view shows it: escape sequences and controls removed, tabs expanded
// (termtext.Plain), the code points terminals disagree on the width of
// dropped, and no trailing line ends.
func ShowText(text string) string {
	return termtext.DropAmbiguous(strings.TrimRight(termtext.Plain([]byte(text)), "\n"))
}

// Display returns e as the transcript view shows it: the assistant's text,
// thinking, each tool call with its summary, the head of each tool result,
// errors, retries, the CLI's stderr lines (after "stderr "), subdash's
// notes and the result with tokens and cost.
func (e Entry) Display() Display {
	role, mark, text := e.shown()
	d := Display{Role: role, Lines: strings.Split(text, "\n")}
	indent := strings.Repeat(" ", utf8.RuneCountInString(mark)) // every mark is one cell a rune
	for i, l := range d.Lines {
		switch {
		case i == 0:
			d.Lines[i] = mark + l
		case mark != "":
			d.Lines[i] = indent + l
		}
	}
	if e.Depth > 0 {
		d.Bar = strings.Repeat("│ ", min(e.Depth, 8))
	}
	return d
}

// Text returns d's lines as the log pane shows them, each after the bar,
// joined with "\n".
func (d Display) Text() string {
	if d.Bar == "" {
		return strings.Join(d.Lines, "\n")
	}
	return d.Bar + strings.Join(d.Lines, "\n"+d.Bar)
}

// Match returns the first line of e as the transcript view shows it
// (Display.Text) in which match finds something, and the span it found
// there; false when no line has a match. It is what a search of a
// transcript counts, per entry, and its lines are what the log pane
// marks; match is termtext.Matcher.Index or a regular expression's.
func (e Entry) Match(match func(line string) (termtext.Span, bool)) (line string, sp termtext.Span, ok bool) {
	for _, l := range strings.Split(e.Display().Text(), "\n") {
		if sp, ok := match(l); ok {
			return l, sp, true
		}
	}
	return "", termtext.Span{}, false
}

// FieldText returns the longest run of letters of query that a line of
// the transcript view can hold only inside one of an entry's fields (its
// text, tool, summary or id, which a CLI's raw output holds), never inside
// a word Display adds around them ("result", "tokens", "needs approval",
// a duration's "s"): wherever a line of the view matches query, a raw log
// holds this run. "" when every run of letters of query may be Display's
// own, which only the entries can tell. Case is ignored in the
// comparison; the run is returned as query has it.
func FieldText(query string) string {
	best := ""
	for _, run := range strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(run) > len(best) && !addedWord(strings.ToLower(run)) {
			best = run
		}
	}
	return best
}

// addedWord reports whether lower-cased run of letters is inside a word
// that Display adds: one of the runs of letters of the display of an
// entry of every kind whose fields hold no letter.
func addedWord(run string) bool {
	for _, w := range addedWords {
		if strings.Contains(w, run) {
			return true
		}
	}
	return false
}

// addedWords are the runs of letters, lower-cased, that Display adds
// around an entry's fields: in the displays of entries of every kind,
// failed or not, with usage and lines left out of a tool's output, whose
// fields hold no letter. A field is never next to one of them without a separator,
// which is what lets FieldText split a query at every other rune.
var addedWords = func() []string {
	kinds := []Kind{KindInit, KindUser, KindText, KindThinking, KindToolCall, KindToolResult, KindError, KindRetry,
		KindResult, KindUnknown, KindStderr, KindNote, KindMalformed, KindApproval, KindApprovalAnswer, KindQuestion}
	seen := map[string]bool{}
	var words []string
	for _, k := range kinds {
		for _, failed := range []bool{false, true} {
			for _, n := range []int64{1, 1500, 1_500_000} {
				e := Entry{Kind: k, Tool: "1", Summary: "2", ID: "3", IsError: failed, MoreLines: int(n),
					InputTokens: n, OutputTokens: n, CostUSD: 0.5, DurationMS: n, Depth: 1}
				for _, w := range strings.FieldsFunc(strings.ToLower(e.Display().Text()), func(r rune) bool { return !unicode.IsLetter(r) }) {
					if !seen[w] {
						seen[w] = true
						words = append(words, w)
					}
				}
			}
		}
	}
	return words
}()

// shown returns e's role, the mark before its first line and its text.
func (e Entry) shown() (role Role, mark, text string) {
	text = ShowText(e.Text)
	switch e.Kind {
	case KindInit:
		return RoleMuted, "● ", text
	case KindUser:
		return RoleMuted, "› ", text
	case KindText:
		return RoleAssistant, "", text
	case KindThinking:
		if text == "" {
			text = "thinking…"
		}
		return RoleThinking, "∴ ", text
	case KindToolCall:
		return RoleTool, "", joinHead("⚙ "+ShowText(e.Tool), e.Summary, text)
	case KindToolResult:
		role = RoleToolOutput
		if e.IsError {
			role = RoleToolError
		}
		if text == "" {
			text = "(no output)"
		}
		if e.MoreLines > 0 {
			text += fmt.Sprintf("\n… %d more lines", e.MoreLines)
		}
		return role, "  ↳ ", text
	case KindError:
		return RoleError, "✗ ", text
	case KindRetry:
		return RoleRetry, "↻ ", text
	case KindApproval:
		head := "⚠ needs approval: " + ShowText(e.Tool)
		if e.Summary != "" {
			head += "  " + ShowText(e.Summary)
		}
		head += "  (request " + ShowText(e.ID) + ")"
		return RoleWarning, "", joinHead(head, "", text)
	case KindQuestion:
		return RoleWarning, "", joinHead("? asks  (request "+ShowText(e.ID)+")", "", text)
	case KindApprovalAnswer:
		role = RoleResult
		if e.IsError {
			role = RoleError
		}
		head := "↳ " + text
		if e.Tool != "" {
			head = "↳ " + strings.TrimSpace(ShowText(e.Tool)+" "+ShowText(e.Summary)) + ": " + text
		}
		return role, "  ", head
	case KindStderr:
		return RoleStderr, "stderr ", text
	case KindNote:
		return RoleMuted, "subdash: ", text
	case KindResult:
		role, head := RoleResult, "✓ result"
		if e.IsError {
			role, head = RoleError, "✗ result"
		}
		if u := e.usage(); u != "" {
			head += " · " + u
		}
		return role, "", joinHead(head, "", text)
	}
	return RoleMuted, "· ", text
}

// Mark is a glyph or word the transcript view leads an entry's lines
// with, and what it means: the dashboard's help explains each (SPEC §7).
type Mark struct {
	Glyph, Words string
}

// Marks returns every mark Display leads a line with (an assistant's text
// has none), the inner agent's bar last. The caller owns the slice.
func Marks() []Mark {
	return []Mark{
		{"●", "the session started: its id and model"},
		{"›", "a message to the agent, as its CLI echoes it"},
		{"∴", "the model's thinking"},
		{"⚙", "a tool call and its argument"},
		{"↳", "the tool's output, its first lines (… N more lines: the whole log in $PAGER); the answer to an approval"},
		{"✗", "an error the CLI reported (✗ result: the run failed)"},
		{"↻", "the CLI retries the model after a failure"},
		{"⚠", "a tool request that waits for your approval"},
		{"✓ result", "the run's end, with its tokens, cost and time"},
		{"stderr", "a line the CLI wrote to stderr"},
		{"subdash:", "a note of subdash's own, not the agent's"},
		{"·", "an event shown as it came: an inner agent's step, an unknown event, a line that is not JSON"},
		{"│", "an inner agent's entries, under the Agent call that started it"},
	}
}

// joinHead is head, then "  " and summary when there is one, then text on
// the lines below when there is any.
func joinHead(head, summary, text string) string {
	if summary != "" {
		head += "  " + ShowText(summary)
	}
	if text != "" {
		head += "\n" + text
	}
	return head
}

// usage formats the tokens, cost and duration a result reports.
func (e Entry) usage() string {
	var parts []string
	if e.InputTokens > 0 || e.OutputTokens > 0 {
		parts = append(parts, fmt.Sprintf("%s in / %s out tokens", Tokens(e.InputTokens), Tokens(e.OutputTokens)))
	}
	if e.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", e.CostUSD))
	}
	if e.DurationMS > 0 {
		parts = append(parts, fmt.Sprintf("%.1fs", float64(e.DurationMS)/1000))
	}
	return strings.Join(parts, " · ")
}

// Tokens formats a token count in at most six cells: 950, 12.3k, 4.5M.
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
