package transcript

import (
	"strings"
	"testing"
)

// The events below are written by hand after the CLIs' documented formats,
// for cases the recorded fixtures do not cover.

// feed parses lines with a new parser (without End) and renders the entries.
func feed(t *testing.T, f Format, lines ...string) (*Parser, []string) {
	t.Helper()
	p := NewParser(f)
	var got []string
	for _, l := range lines {
		for _, e := range p.Line([]byte(l)) {
			got = append(got, renderEntry(e))
		}
	}
	return p, got
}

func wantEntries(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLinesThatAreNotEvents(t *testing.T) {
	for _, f := range []Format{FormatClaude, FormatCodex, FormatGemini, Format("other")} {
		t.Run(string(f), func(t *testing.T) {
			p, got := feed(t, f, "", "   ", "\r", "not json", `{"type":"x",`, `[1,2]`, `"str"`, `{"a":1,"b":{"c":2}}`, `{"type":"brand_new","subtype":"thing"}`+"\r")
			want := []string{
				`malformed   text="not json"`,
				`malformed   text="{\"type\":\"x\","`,
				`malformed   text="[1,2]"`,
				`malformed   text="\"str\""`,
				`unknown     text="event without type {a, b}"`,
			}
			switch f {
			case FormatClaude, "other":
				want = append(want, `unknown     text="brand_new/thing"`)
			default: // codex and gemini events have no subtype
				want = append(want, `unknown     text="brand_new"`)
			}
			wantEntries(t, got, want...)
			if o := p.Outcome(); o.Final || p.SessionID() != "" {
				t.Errorf("Outcome = %+v, SessionID = %q after junk", o, p.SessionID())
			}
		})
	}
}

func TestUnknownFormat(t *testing.T) {
	_, got := feed(t, Format("other"), `{"type":"result","is_error":false}`, "x", `{}`)
	wantEntries(t, got,
		`unknown     text="result"`,
		`malformed   text="x"`,
		`unknown     text="event without type {}"`)
}

func TestMalformedLineIsCut(t *testing.T) {
	line := "\xff" + strings.Repeat("x", 2*MaxMalformedBytes)
	e := NewParser(FormatClaude).Line([]byte(line))
	if len(e) != 1 || e[0].Kind != KindMalformed {
		t.Fatalf("entries = %+v", e)
	}
	if !strings.HasPrefix(e[0].Text, "\uFFFDxxx") || !strings.HasSuffix(e[0].Text, "…[8193 bytes]") || len(e[0].Text) > MaxMalformedBytes+20 {
		t.Errorf("Text = %.40q…%q (%d bytes)", e[0].Text, e[0].Text[len(e[0].Text)-20:], len(e[0].Text))
	}
}

func TestClaudeToolsAndThinking(t *testing.T) {
	p, got := feed(t, FormatClaude,
		`{"type":"system","subtype":"init","session_id":"s1","model":"m"}`,
		`{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"let me look","signature":"x"}]},"session_id":"s1"}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/src/main.go","limit":20}},{"type":"tool_use","id":"t2","name":"Grep","input":{"pattern":"func main","path":"/src"}}]}}`,
	)
	if a := p.Activity(); a != "running Grep: func main" {
		t.Errorf("Activity with two tools running = %q", a)
	}
	var rest []string
	for _, l := range []string{
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"a.go:1:func main\nb.go:9:func main"}],"is_error":false}]}}`,
	} {
		for _, e := range p.Line([]byte(l)) {
			rest = append(rest, renderEntry(e))
		}
	}
	if a := p.Activity(); a != "running Read: /src/main.go" {
		t.Errorf("Activity with Read still running = %q", a)
	}
	for _, l := range []string{
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"<tool_use_error>File does not exist.</tool_use_error>","is_error":true}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3","name":"Glob","input":{"pattern":"**/*.go"}},{"type":"tool_use","id":"t4","name":"TodoWrite","input":{"todos":[{"content":"a"},{"content":"b"}],"merge":false}},{"type":"tool_use","id":"t5","name":"Bash","input":{"command":"go test ./...\n  && echo ok","timeout":60000}},{"type":"redacted_thinking","data":"zzz"},{"type":"image","source":{}}]}}`,
		`{"type":"system","subtype":"compact_boundary","session_id":"s1"}`,
		`{"type":"user","message":{"role":"user","content":"a replayed prompt\n"}}`,
		`{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":3,"session_id":"s1","usage":{"input_tokens":10,"cache_read_input_tokens":90,"cache_creation_input_tokens":5,"output_tokens":7},"total_cost_usd":0.5,"duration_ms":1234}`,
	} {
		for _, e := range p.Line([]byte(l)) {
			rest = append(rest, renderEntry(e))
		}
	}
	wantEntries(t, append(got, rest...),
		`init        text="session s1 (model m)"`,
		`thinking    text="let me look"`,
		`tool_call   tool=Read id=t1 summary="/src/main.go"`,
		`tool_call   tool=Grep id=t2 summary="func main"`,
		`tool_result tool=Grep id=t2 summary="func main" text="a.go:1:func main\nb.go:9:func main"`,
		`tool_result tool=Read id=t1 summary="/src/main.go" error=true text="<tool_use_error>File does not exist.</tool_use_error>"`,
		`tool_call   tool=Glob id=t3 summary="**/*.go"`,
		`tool_call   tool=TodoWrite id=t4 summary="todos=[2 items] merge=false"`,
		`tool_call   tool=Bash id=t5 summary="go test ./... && echo ok"`,
		`thinking   `,
		`unknown     text="assistant/image"`,
		`unknown     text="system/compact_boundary"`,
		`user        text="a replayed prompt"`,
		`result      error=true text="error_max_turns" usage=in:105,out:7,cost:0.5,ms:1234`,
	)
	o := p.Outcome()
	if !o.Final || o.Success || o.Error != "error_max_turns" || o.InputTokens != 105 || o.CostUSD != 0.5 {
		t.Errorf("Outcome = %+v", o)
	}
	if p.Activity() != "" {
		t.Errorf("Activity after result = %q", p.Activity())
	}
}

func TestClaudePartialMessages(t *testing.T) {
	p := NewParser(FormatClaude)
	step := func(line, activity, pending string) {
		t.Helper()
		if e := p.Line([]byte(line)); len(e) != 0 {
			t.Errorf("%s: entries %+v, want none", line, e)
		}
		if p.Activity() != activity || p.Pending() != pending {
			t.Errorf("after %s: Activity, Pending = %q, %q; want %q, %q", line, p.Activity(), p.Pending(), activity, pending)
		}
	}
	step(`{"type":"stream_event","event":{"type":"message_start","message":{}}}`, "thinking", "")
	step(`{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}}`, "thinking", "")
	step(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}}`, "thinking", "")
	step(`{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}}`, "writing", "")
	step(`{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hel"}}}`, "writing", "Hel")
	step(`{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"lo"}}}`, "writing", "Hello")
	step(`{"type":"stream_event","event":{"type":"ping"}}`, "writing", "Hello")
	e := p.Line([]byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"Hello"}]}}`))
	if len(e) != 1 || e[0].Kind != KindText || e[0].Text != "Hello" || p.Pending() != "" {
		t.Errorf("complete message: %+v, Pending %q", e, p.Pending())
	}
	step(`{"type":"stream_event","event":{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}}`, "calling Bash", "")
	step(`{"type":"stream_event","event":{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"comm"}}}`, "calling Bash", "")
	step(`{"type":"stream_event","event":{"type":"content_block_start","index":3,"content_block":{"type":"text","text":"Bye"}}}`, "writing", "Bye")
	// The stream ends before the complete message: End keeps the text.
	e = p.End()
	if len(e) != 1 || e[0].Text != "Bye" || p.Pending() != "" || p.Activity() != "" || p.Outcome().Answer != "Hello\nBye" {
		t.Errorf("End: %+v, Pending %q, Activity %q, Answer %q", e, p.Pending(), p.Activity(), p.Outcome().Answer)
	}
}

func TestClaudeRetryThenSuccessClearsError(t *testing.T) {
	p, got := feed(t, FormatClaude,
		`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":3,"retry_delay_ms":500,"error_status":529,"error":"overloaded"}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"done"}]}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"done"}`,
	)
	wantEntries(t, got,
		`retry       text="API request failed (HTTP 529 overloaded); retry 1/3 in 0.5s"`,
		`text        text="done"`,
		`result     `)
	if o := p.Outcome(); !o.Success || o.Error != "" || o.Answer != "done" {
		t.Errorf("Outcome = %+v", o)
	}
}

func TestCodexItems(t *testing.T) {
	p, got := feed(t, FormatCodex,
		`{"type":"thread.started","thread_id":"th"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"i0","type":"reasoning","text":"**Planning**"}}`,
		`{"type":"item.started","item":{"id":"i1","type":"todo_list","items":[{"text":"read","completed":false},{"text":"fix","completed":false}]}}`,
		`{"type":"item.started","item":{"id":"i2","type":"command_execution","command":"bash -lc \"go test ./...\"","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
		`{"type":"item.updated","item":{"id":"i2","type":"command_execution","command":"bash -lc \"go test ./...\"","aggregated_output":"ok","exit_code":null,"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"i2","type":"command_execution","command":"bash -lc \"go test ./...\"","aggregated_output":"1\n2\n3\n4\n5\n6\n7\n","exit_code":1,"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"i3","type":"command_execution","command":"/bin/zsh -lc 'it'\\''s'","aggregated_output":"","exit_code":127,"status":"failed"}}`,
		`{"type":"item.updated","item":{"id":"i1","type":"todo_list","items":[{"text":"read","completed":true},{"text":"fix","completed":false}]}}`,
		`{"type":"item.completed","item":{"id":"i4","type":"file_change","changes":[{"path":"a.go","kind":"update"},{"path":"b.go","kind":"add"}],"status":"completed"}}`,
		`{"type":"item.started","item":{"id":"i5","type":"mcp_tool_call","server":"fs","tool":"read","arguments":{"path":"/x"},"result":null,"error":null,"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"i5","type":"mcp_tool_call","server":"fs","tool":"read","arguments":{"path":"/x"},"result":null,"error":{"message":"no such file"},"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"i6","type":"web_search","query":"golang json"}}`,
		`{"type":"item.completed","item":{"id":"i7","type":"agent_message","text":"first"}}`,
		`{"type":"item.completed","item":{"id":"i8","type":"agent_message","text":"second"}}`,
		`{"type":"item.completed","item":{"id":"i1","type":"todo_list","items":[]}}`,
		`{"type":"item.completed","item":{"id":"i9","type":"collab_call"}}`,
		`{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion)"}`,
	)
	if a := p.Activity(); a != "retrying model (attempt 2/5)" {
		t.Errorf("Activity = %q", a)
	}
	for _, e := range p.Line([]byte(`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":50,"output_tokens":9}}`)) {
		got = append(got, renderEntry(e))
	}
	wantEntries(t, got,
		`init        text="thread th"`,
		`thinking    text="**Planning**"`,
		`tool_call   tool=todo_list id=i1 summary="0/2 done" text="[ ] read\n[ ] fix"`,
		`tool_call   tool=shell id=i2 summary="go test ./..."`,
		`tool_result tool=shell id=i2 summary="go test ./..." error=true text="1\n2\n3\n4\n5" more=2`,
		`tool_call   tool=shell id=i3 summary="it's"`,
		`tool_result tool=shell id=i3 summary="it's" error=true text="exit code 127"`,
		`tool_call   tool=todo_list id=i1 summary="1/2 done" text="[x] read\n[ ] fix"`,
		`tool_call   tool=apply_patch id=i4 summary="update a.go, add b.go"`,
		`tool_result tool=apply_patch id=i4 summary="update a.go, add b.go" text="update a.go\nadd b.go"`,
		`tool_call   tool=fs.read id=i5 summary="/x"`,
		`tool_result tool=fs.read id=i5 summary="/x" error=true text="no such file"`,
		`tool_call   tool=web_search id=i6 summary="golang json"`,
		`tool_result tool=web_search id=i6 summary="golang json"`,
		`text        text="first"`,
		`text        text="second"`,
		`unknown     text="item.completed/collab_call"`,
		`retry       text="Reconnecting... 2/5 (stream disconnected before completion)"`,
		`result      usage=in:100,out:9,cost:0,ms:0`,
	)
	if o := p.Outcome(); !o.Final || !o.Success || o.Answer != "second" || o.Error != "" {
		t.Errorf("Outcome = %+v", o)
	}
}

func TestCodexTurnFailedWithoutMessage(t *testing.T) {
	p, _ := feed(t, FormatCodex,
		`{"type":"turn.started"}`,
		`{"type":"error","message":"stream error: unexpected status 401"}`,
		`{"type":"turn.failed","error":{}}`)
	if o := p.Outcome(); !o.Final || o.Success || o.Error != "stream error: unexpected status 401" {
		t.Errorf("Outcome = %+v", o)
	}
}

func TestGeminiToolsAndErrors(t *testing.T) {
	p, got := feed(t, FormatGemini,
		`{"type":"init","session_id":"g1","model":"gemini-x"}`,
		`{"type":"message","role":"assistant","content":"Let me ","delta":true}`,
		`{"type":"message","role":"assistant","content":"look.","delta":true}`,
		`{"type":"tool_use","tool_name":"read_file","tool_id":"r1","parameters":{"absolute_path":"/a/b.txt"}}`,
		`{"type":"tool_result","tool_id":"r1","status":"error","output":"","error":{"type":"FILE_NOT_FOUND","message":"File not found: /a/b.txt"}}`,
		`{"type":"error","severity":"warning","message":"Loop detected"}`,
		`{"type":"message","role":"assistant","content":"Sorry."}`,
		`{"type":"message","role":"system","content":"?"}`,
		`{"type":"error","severity":"error","message":"Maximum session turns exceeded"}`,
		`{"type":"result","status":"error","stats":{"input_tokens":5,"output_tokens":6,"duration_ms":7}}`,
	)
	wantEntries(t, got,
		`init        text="session g1 (model gemini-x)"`,
		`text        text="Let me look."`,
		`tool_call   tool=read_file id=r1 summary="/a/b.txt"`,
		`tool_result tool=read_file id=r1 summary="/a/b.txt" error=true text="File not found: /a/b.txt"`,
		`error       text="warning: Loop detected"`,
		`text        text="Sorry."`,
		`unknown     text="message/system"`,
		`error       text="Maximum session turns exceeded"`,
		`result      error=true text="Maximum session turns exceeded" usage=in:5,out:6,cost:0,ms:7`,
	)
	if o := p.Outcome(); !o.Final || o.Success || o.Error != "Maximum session turns exceeded" || o.Answer != "Sorry." {
		t.Errorf("Outcome = %+v", o)
	}
}

func TestGeminiWholeMessageAfterDeltas(t *testing.T) {
	_, got := feed(t, FormatGemini,
		`{"type":"message","role":"assistant","content":"ab","delta":true}`,
		`{"type":"message","role":"assistant","content":"ab"}`,
		`{"type":"message","role":"assistant","content":"c","delta":true}`,
		`{"type":"message","role":"assistant","content":"d"}`)
	wantEntries(t, got, `text        text="ab"`, `text        text="c"`, `text        text="d"`)
}

func TestToolSummary(t *testing.T) {
	tests := []struct{ input, want string }{
		{`{"command":"ls -la","description":"list"}`, "ls -la"},
		{`{"command":["bash","-lc","echo 'hi'"]}`, "echo 'hi'"},
		{`{"file_path":"/a/b.go","old_string":"x","new_string":"y"}`, "/a/b.go"},
		{`{"pattern":"TODO","path":"src","glob":"*.go"}`, "TODO"},
		{`{"url":"https://go.dev","prompt":"summarize"}`, "https://go.dev"},
		{`{"description":"Explore","prompt":"find the\nparser","subagent_type":"Explore"}`, "description=Explore prompt=find the parser subagent_type=Explore"},
		{`{"n":3,"deep":{"a":1},"on":true,"none":null}`, "n=3 deep={…} on=true none=null"},
		{`{"command":""}`, "command="},
		{`{}`, ""},
		{`null`, ""},
		{`"str"`, ""},
		{`{"command":"` + strings.Repeat("é", 300) + `"}`, strings.Repeat("é", MaxSummaryRunes-1) + "…"},
	}
	for _, tt := range tests {
		if got := toolSummary([]byte(tt.input)); got != tt.want {
			t.Errorf("toolSummary(%s) = %q, want %q", tt.input, got, tt.want)
		}
	}
}

func TestUnwrapShell(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{`/bin/bash -lc 'echo hello > f; uname -s'`, `echo hello > f; uname -s`},
		{`bash -lc 'it'\''s'`, `it's`},
		{`sh -c "echo \"q\""`, `echo "q"`},
		{`zsh -lc ls`, `ls`},
		{`bash -lc 'a' 'b'`, `bash -lc 'a' 'b'`},
		{`python3 -c 'print(1)'`, `python3 -c 'print(1)'`},
		{`bash script.sh`, `bash script.sh`},
		{`ls`, `ls`},
	}
	for _, tt := range tests {
		if got := unwrapShell(tt.cmd); got != tt.want {
			t.Errorf("unwrapShell(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

func TestHeadLines(t *testing.T) {
	tests := []struct {
		in, want string
		more     int
	}{
		{"", "", 0},
		{"\n\n", "", 0},
		{"one", "one", 0},
		{"a\r\nb\r\n", "a\nb", 0},
		{"1\n2\n3\n4\n5\n", "1\n2\n3\n4\n5", 0},
		{"1\n2\n3\n4\n5\n6", "1\n2\n3\n4\n5", 1},
		{"1\n2\n3\n4\n5\n6\n7\n", "1\n2\n3\n4\n5", 2},
		{strings.Repeat("x", 500), strings.Repeat("x", MaxResultLineRunes-1) + "…", 0},
		{strings.Repeat("é", MaxResultLineRunes), strings.Repeat("é", MaxResultLineRunes), 0},
		{strings.Repeat("é", MaxResultLineRunes+1), strings.Repeat("é", MaxResultLineRunes-1) + "…", 0},
		{"\x1b[1mbold\x1b[m\tx\r\nb\x1b]0;t\x07", "bold    x\nb", 0},
	}
	for _, tt := range tests {
		got, more := headLines(tt.in)
		if got != tt.want || more != tt.more {
			t.Errorf("headLines(%.20q) = %q, %d; want %q, %d", tt.in, got, more, tt.want, tt.more)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"claude", " Codex ", "GEMINI", "memo"} {
		if _, err := ParseFormat(s); err != nil {
			t.Errorf("ParseFormat(%q): %v", s, err)
		}
	}
	if _, err := ParseFormat("builtin"); err == nil || !strings.Contains(err.Error(), "claude, codex, gemini or memo") {
		t.Errorf("ParseFormat(builtin) error = %v", err)
	}
}

func TestCodexUpdateBeforeStart(t *testing.T) {
	p, got := feed(t, FormatCodex,
		`{"type":"item.updated","item":{"id":"c","type":"command_execution","command":"sleep 9","status":"in_progress"}}`)
	wantEntries(t, got, `tool_call   tool=shell id=c summary="sleep 9"`)
	if a := p.Activity(); a != "running shell: sleep 9" {
		t.Errorf("Activity = %q", a)
	}
}

func TestOutcomeKeptAfterFinal(t *testing.T) {
	p, _ := feed(t, FormatCodex,
		`{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"ok"}}`,
		`{"type":"turn.completed","usage":{}}`,
		`{"type":"error","message":"late noise"}`,
		`{"type":"error","message":"Reconnecting... 1/5"}`)
	if o := p.Outcome(); !o.Final || !o.Success || o.Error != "" || o.Answer != "ok" {
		t.Errorf("Outcome = %+v", o)
	}
}
