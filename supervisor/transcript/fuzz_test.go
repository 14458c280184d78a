package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var allKinds = map[Kind]bool{KindInit: true, KindUser: true, KindText: true, KindThinking: true,
	KindToolCall: true, KindToolResult: true, KindError: true, KindRetry: true, KindResult: true,
	KindUnknown: true, KindMalformed: true, KindNote: true, KindApproval: true, KindApprovalAnswer: true, KindQuestion: true}

// FuzzLine feeds arbitrary input, split into lines, to a parser of each
// format: it must never panic, and every entry must keep the documented
// limits.
func FuzzLine(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(fixtureDir, "*.json*"))
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
		f.Add(data)
	}
	memo, _ := filepath.Glob(filepath.Join(memoFixtures, "memo-*.out"))
	for _, path := range memo {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{"type":"assistant","message":{"content":"plain"}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":["sh","-c","ls"]}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"x"},{"type":"image"}]}]}}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}}`,
		`{"type":"item.completed","item":{"type":"mcp_tool_call","result":{"content":"odd"},"error":{"message":5}}}`,
		`{"type":"tool_result","tool_id":"x","error":"not an object"}`,
		`{"type":"result","stats":[],"error":{"message":null}}`,
		`{"type":1,"subtype":{}}`,
		"{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"\xff\",\"delta\":true}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{FormatClaude, FormatCodex, FormatGemini, FormatMemo} {
			p := NewParser(format)
			var entries []Entry
			for _, l := range bytes.Split(data, []byte("\n")) {
				entries = append(entries, p.Line(l)...)
			}
			entries = append(entries, p.End()...)
			for _, e := range entries {
				checkEntry(t, e)
			}
			if p.Activity() != "" || p.Pending() != "" {
				t.Errorf("%s: after End, Activity %q, Pending %q", format, p.Activity(), p.Pending())
			}
			if o := p.Outcome(); o.Success && !o.Final {
				t.Errorf("%s: Success without Final", format)
			}
		}
	})
}

func checkEntry(t *testing.T, e Entry) {
	t.Helper()
	if !allKinds[e.Kind] {
		t.Errorf("entry of unknown kind %q", e.Kind)
	}
	for _, v := range []string{e.Text, e.Tool, e.ID, e.Summary} {
		if strings.ContainsFunc(v, isControl) {
			t.Errorf("%s entry field holds an escape or control character: %q", e.Kind, v)
		}
	}
	if n := utf8.RuneCountInString(e.Summary); n > MaxSummaryRunes || strings.ContainsAny(e.Summary, "\n\r\t") {
		t.Errorf("Summary of %d runes or on several lines: %q", n, e.Summary)
	}
	switch e.Kind {
	case KindToolResult:
		if n := strings.Count(e.Text, "\n") + 1; n > MaxResultLines {
			t.Errorf("tool_result Text of %d lines", n)
		}
	case KindMalformed:
		if !utf8.ValidString(e.Text) || len(e.Text) > MaxMalformedBytes+32 || e.Text == "" {
			t.Errorf("malformed Text invalid, empty or too long (%d bytes)", len(e.Text))
		}
	case KindUnknown:
		if e.Text == "" {
			t.Errorf("unknown entry without text")
		}
	}
}

// isControl reports the characters no entry may hold: C0 controls but "\n",
// DEL and C1 controls.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\n') || (r >= 0x7f && r < 0xa0)
}
