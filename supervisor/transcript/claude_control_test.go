package transcript

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestClaudeApprovalRecordings parses the recorded approval rounds of
// claude 2.1.197 (an allowed and a denied `touch`): the request is seen
// with its tool, input and id, the reply to initialize makes no entry, and
// the answers built here are the ones the recording's stdin carried.
func TestClaudeApprovalRecordings(t *testing.T) {
	for _, c := range []struct {
		name, result string
		isError      bool
	}{
		{"allow", "(Bash completed with no output)", false},
		{"deny", "no", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines := fixtureLines(t, "claude-stream-approval-"+c.name+".jsonl")
			p := NewParser(FormatClaude)
			if es := p.Line(lines[0]); len(es) != 0 {
				t.Fatalf("the reply to initialize made entries: %+v", es)
			}
			var req ControlRequest
			var approvals, results []Entry
			for _, l := range lines {
				for _, e := range p.Line(l) {
					switch e.Kind {
					case KindApproval:
						approvals = append(approvals, e)
					case KindToolResult:
						results = append(results, e)
					}
				}
				if r, ok := ParseClaudeControl(l); ok {
					req = r
				}
			}
			if len(approvals) != 1 {
				t.Fatalf("approval entries: %+v", approvals)
			}
			e := approvals[0]
			if e.Tool != "Bash" || e.ID != req.RequestID || e.Summary != "touch /home/user/project/FILE" {
				t.Fatalf("approval entry = %+v", e)
			}
			want := "stub scripted command\ninput: {\n  \"command\": \"touch /home/user/project/FILE\",\n  \"description\": \"stub scripted command\"\n}\npath: /home/user/project/FILE"
			if e.Text != want {
				t.Fatalf("approval text:\n%s\nwant:\n%s", e.Text, want)
			}
			if req.Type != "control_request" || req.Subtype != "can_use_tool" || req.ToolUseID == "" {
				t.Fatalf("request = %+v", req)
			}
			if len(results) != 1 || results[0].Text != c.result || results[0].IsError != c.isError {
				t.Fatalf("tool results = %+v", results)
			}
			if o := p.Outcome(); !o.Final || !o.Success {
				t.Fatalf("outcome = %+v", o)
			}

			// The stdin of the recording: initialize, the user message, the answer.
			sent, err := os.ReadFile(filepath.Join(fixtureDir, "claude-stream-approval-"+c.name+".stdin"))
			if err != nil {
				t.Fatal(err)
			}
			in := bytes.Split(bytes.TrimSpace(sent), []byte("\n"))
			var user struct {
				Message struct{ Content string } `json:"message"`
				Session string                   `json:"session_id"`
			}
			_ = json.Unmarshal(in[1], &user)
			answer := ClaudeAllow(req, false)
			if c.name == "deny" {
				answer = ClaudeDeny(req, "no")
			}
			for _, pair := range [][2][]byte{
				{ClaudeInitialize("init-1"), in[0]},
				{ClaudeUserMessage(user.Message.Content, user.Session), in[1]},
				{answer, in[2]},
			} {
				var got, want any
				if err := json.Unmarshal(pair[0], &got); err != nil {
					t.Fatal(err)
				}
				_ = json.Unmarshal(pair[1], &want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("sent %s\nrecorded %s", pair[0], pair[1])
				}
			}
		})
	}
}

func TestClaudeControlCancel(t *testing.T) {
	p := NewParser(FormatClaude)
	es := p.Line([]byte(`{"type":"control_cancel_request","request_id":"r1"}`))
	if len(es) != 1 || es[0].Kind != KindApprovalAnswer || es[0].ID != "r1" {
		t.Fatalf("entries = %+v", es)
	}
	c, ok := ParseClaudeControl([]byte(`{"type":"control_cancel_request","request_id":"r1"}`))
	if !ok || c.Type != "control_cancel_request" || c.RequestID != "r1" {
		t.Fatalf("control = %+v %v", c, ok)
	}
	if _, ok := ParseClaudeControl([]byte(`{"type":"assistant","message":{"content":"control_request"}}`)); ok {
		t.Fatal("an assistant line parsed as a control request")
	}
}
