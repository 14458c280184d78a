package transcript

import (
	"slices"
	"strings"
	"testing"
)

func TestDisplay(t *testing.T) {
	for _, c := range []struct {
		e    Entry
		want string
	}{
		{Entry{Kind: KindToolCall, Tool: "Bash", Summary: "ls -l"}, "⚙ Bash  ls -l"},
		{Entry{Kind: KindToolResult, Tool: "Bash", Summary: "ls -l", Text: "a\n\nb", MoreLines: 2}, "  ↳ a\n    \n    b\n    … 2 more lines"},
		{Entry{Kind: KindResult, InputTokens: 38287, OutputTokens: 89, CostUSD: 0.19366, DurationMS: 392, Text: "done"}, "✓ result · 38.3k in / 89 out tokens · $0.1937 · 0.4s\ndone"},
		{Entry{Kind: KindUnknown, Text: "system/hook_started", Depth: 2}, "│ │ · system/hook_started"},
		{Entry{Kind: KindStderr, Text: "\x1b[31mboom\x1b[0m\n"}, "stderr boom"},
	} {
		if got := c.e.Display().Text(); got != c.want {
			t.Errorf("%s entry shows\n%q\nwant\n%q", c.e.Kind, got, c.want)
		}
	}
}

// FieldText is the longest run of letters of a query that is not inside
// a word the view adds: a raw log holds it wherever the view matches.
func TestFieldText(t *testing.T) {
	for query, want := range map[string]string{
		"uname":             "uname",
		"✓ result · 38.3k":  "",
		"thinking…":         "",
		"(no output)":       "",
		"hello-from-tool":   "hello",
		"⚙ Bash  uname -s":  "uname",
		"Resulting":         "Resulting",
		"needs approval: B": "",
	} {
		if got := FieldText(query); got != want {
			t.Errorf("FieldText(%q) = %q, want %q", query, got, want)
		}
	}
	for _, w := range strings.Fields("result tokens in out needs approval request stderr subdash thinking no output more lines k m s") {
		if !slices.Contains(addedWords, w) {
			t.Errorf("%q is not among the words the view adds: %q", w, addedWords)
		}
	}
}

// TestMarksExplainEveryMark: every line the transcript view leads with a
// mark (an entry of any kind, failed or not, an inner agent's) starts
// with one of Marks, and every one of Marks is shown by some entry: the
// help explains what the log pane can show, and nothing it cannot.
func TestMarksExplainEveryMark(t *testing.T) {
	kinds := []Kind{KindInit, KindUser, KindText, KindThinking, KindToolCall, KindToolResult, KindError, KindRetry,
		KindResult, KindUnknown, KindTask, KindStderr, KindNote, KindMalformed, KindApproval, KindApprovalAnswer}
	used := map[string]bool{}
	for _, k := range kinds {
		for _, failed := range []bool{false, true} {
			d := Entry{Kind: k, Text: "words", Tool: "Bash", Summary: "ls", IsError: failed, MoreLines: 2, Depth: 1}.Display()
			first := strings.TrimLeft(d.Lines[0], " ")
			if k == KindText {
				if first != "words" {
					t.Errorf("an assistant's text shows %q: a mark no help explains", first)
				}
				continue
			}
			found := ""
			for _, m := range Marks() {
				if strings.HasPrefix(first, m.Glyph) && len(m.Glyph) > len(found) {
					found = m.Glyph
				}
			}
			if found == "" {
				t.Errorf("a %s entry (failed %v) shows %q: its mark is not in Marks", k, failed, first)
			}
			used[found] = true
			if strings.HasPrefix(d.Bar, "│") {
				used["│"] = true
			}
		}
	}
	for _, m := range Marks() {
		if !used[m.Glyph] {
			t.Errorf("Marks explains %q, which no entry shows", m.Glyph)
		}
	}
}
