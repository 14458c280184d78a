package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// bigToolResult is a claude tool_result line whose output has n lines of
// width bytes each.
func bigToolResult(n, width int) []byte {
	out := strings.Repeat(strings.Repeat("x", width-1)+"\n", n)
	content, _ := json.Marshal(out)
	return []byte(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":` +
		string(content) + `,"is_error":false}]},"tool_use_result":{"stdout":` + string(content) + `}}`)
}

func TestLargeToolOutput(t *testing.T) {
	tests := []struct {
		name     string
		n, width int
		more     int
	}{
		{"many lines", 400_000, 20, 400_000 - MaxResultLines}, // 8 MB
		{"one long line", 1, 8 << 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewParser(FormatClaude)
			p.Line([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cat big"}}]}}`))
			e := p.Line(bigToolResult(tt.n, tt.width))
			if len(e) != 1 || e[0].Kind != KindToolResult || e[0].Tool != "Bash" {
				t.Fatalf("entries = %d, first %+v", len(e), e[0].Kind)
			}
			lines := strings.Split(e[0].Text, "\n")
			if len(lines) > MaxResultLines || e[0].MoreLines != tt.more {
				t.Errorf("Text has %d lines, MoreLines = %d; want ≤ %d and %d", len(lines), e[0].MoreLines, MaxResultLines, tt.more)
			}
			for _, l := range lines {
				if utf8.RuneCountInString(l) > MaxResultLineRunes {
					t.Errorf("a kept line has %d runes", utf8.RuneCountInString(l))
				}
			}
		})
	}
}

// TestManyDeltas checks that text streamed in many small deltas is kept
// whole and in order.
func TestManyDeltas(t *testing.T) {
	p := NewParser(FormatGemini)
	var want strings.Builder
	for i := range 100_000 {
		piece := fmt.Sprintf("w%d ", i)
		want.WriteString(piece)
		if e := p.Line([]byte(`{"type":"message","role":"assistant","content":"` + piece + `","delta":true}`)); e != nil {
			t.Fatalf("delta %d made entries %+v", i, e)
		}
	}
	e := p.Line([]byte(`{"type":"result","status":"success"}`))
	if len(e) != 2 || e[0].Text != want.String() || p.Outcome().Answer != want.String() {
		t.Errorf("got %d entries; text matches: %v", len(e), len(e) > 0 && e[0].Text == want.String())
	}
}

func BenchmarkLargeToolResult(b *testing.B) {
	line := bigToolResult(400_000, 20)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		p := NewParser(FormatClaude)
		p.Line(line)
	}
}

func BenchmarkGeminiDeltas(b *testing.B) {
	line := []byte(`{"type":"message","timestamp":"2026-11-30T12:41:08.065Z","role":"assistant","content":"some words of text ","delta":true}`)
	b.SetBytes(int64(len(line)))
	p := NewParser(FormatGemini)
	for b.Loop() {
		p.Line(line)
	}
}
