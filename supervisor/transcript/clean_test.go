package transcript

import (
	"encoding/json"
	"strings"
	"testing"
)

// escapeSequences are put into every string field of the events below. Each
// must vanish whole: the text around it reads as if it were not there.
var escapeSequences = []struct{ name, seq string }{
	{"CSI mouse mode", "\x1b[?1000h"},
	{"CSI erase and home", "\x1b[2J\x1b[H"},
	{"SGR", "\x1b[1;38;2;255;0;0m"},
	{"OSC title BEL", "\x1b]0;owned\x07"},
	{"OSC 8 link ST", "\x1b]8;;https://example.com\x1b\\"},
	{"OSC 52 clipboard", "\x1b]52;c;aGk=\x1b\\"},
	{"DCS", "\x1bP1$qm\x1b\\"},
	{"SOS", "\x1bXsos\x1b\\"},
	{"PM", "\x1b^pm\x1b\\"},
	{"APC", "\x1b_Gf=100;AAAA\x1b\\"},
	{"ESC charset", "\x1b(0"},
	{"RIS", "\x1bc"},
	{"C0 and C1 controls", "\x00\x07\x08\x7f\u0085\u009b"},
}

// TestEscapeSequencesInEveryField puts each of escapeSequences in every
// string field of the events of each format (in place of <E>; in place of
// <R> unescaped, for lines that are not JSON) and checks that every entry,
// the activity and the outcome after each line are those of the same events
// without it, and that no entry holds an escape or control byte. A fake
// claude whose Bash command held "\x1b[?1000h" showed "ls [?1000h -la".
func TestEscapeSequencesInEveryField(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		lines  []string
		want   []string // the entries without the sequence
	}{
		{"claude tools", FormatClaude, []string{
			`{"type":"system","subtype":"init","session_id":"s<E>1","model":"son<E>net"}`,
			`{"type":"system","subtype":"status","status":"compact<E>ing"}`,
			`{"type":"stream_event","event":{"type":"content_block_start","content_block":{"type":"tool_use","id":"t1","name":"Ba<E>sh","input":{}}}}`,
			`{"type":"assistant","message":{"content":[` +
				`{"type":"thinking","thinking":"let <E>me look"},` +
				`{"type":"tool_use","id":"t<E>1","name":"Ba<E>sh","input":{"command":"ls <E>-la"}},` +
				`{"type":"tool_use","id":"t2","name":"Task","input":{"descr<E>iption":"ex<E>plore","prompt":"find\n<E>it"}},` +
				`{"type":"tool_use","id":"t3","name":"Read","input":{"file_path":"/a/<E>b.go"}},` +
				`{"type":"ima<E>ge"}]}}`,
			`{"type":"user","message":{"content":[` +
				`{"type":"tool_result","tool_use_id":"t<E>1","content":"total 0\n<E>a.go<E>\n\tb.go","is_error":false},` +
				`{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"fo<E>und"},{"type":"ima<E>ge"}]},` +
				`{"type":"tool_result","tool_use_id":"t9","content":"orphan<E>","is_error":true},` +
				`{"type":"text","text":"a <E>prompt\n"},` +
				`{"type":"vid<E>eo"}]}}`,
			`{"type":"sys<E>tem","subtype":"ho<E>ok"}`,
			`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"error":"over<E>loaded"}`,
			`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"Do<E>ne"}}}`,
			`{"type":"assistant","message":{"content":[{"type":"text","text":"Do<E>ne"}]}}`,
			`{"type":"result","subtype":"success","is_error":false,"result":"Do<E>ne"}`,
			`not json <R>at all`,
			`<R>`,
		}, []string{
			`init        text="session s1 (model sonnet)"`,
			`thinking    text="let me look"`,
			`tool_call   tool=Bash id=t1 summary="ls -la"`,
			`tool_call   tool=Task id=t2 summary="description=explore prompt=find it"`,
			`tool_call   tool=Read id=t3 summary="/a/b.go"`,
			`unknown     text="assistant/image"`,
			`tool_result tool=Bash id=t1 summary="ls -la" text="total 0\na.go\n        b.go"`,
			`tool_result tool=Task id=t2 summary="description=explore prompt=find it" text="found\n[image]"`,
			`tool_result id=t9 error=true text="orphan"`,
			`user        text="a prompt"`,
			`unknown     text="user/video"`,
			`unknown     text="system/hook"`,
			`retry       text="API request failed (overloaded); retry 1/2"`,
			`text        text="Done"`,
			`result     `,
			`malformed   text="not json at all"`,
		}},
		{"claude errors", FormatClaude, []string{
			`{"type":"assistant","error":"server_error","message":{"content":[{"type":"text","text":"API Error: <E>500"}]}}`,
			`{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["bro<E>ken","ag<E>ain"]}`,
		}, []string{
			`error       text="API Error: 500"`,
			`result      error=true text="broken; again"`,
		}},
		{"codex", FormatCodex, []string{
			`{"type":"thread.started","thread_id":"th<E>1"}`,
			`{"type":"item.completed","item":{"id":"r<E>1","type":"reasoning","text":"**Plan<E>ning**"}}`,
			`{"type":"item.started","item":{"id":"l<E>1","type":"todo_list","items":[{"text":"re<E>ad","completed":true},{"text":"fix\n<E>it","completed":false}]}}`,
			`{"type":"item.started","item":{"id":"c<E>1","type":"command_execution","command":"bash -lc 'ls <E>-la'","status":"in_progress"}}`,
			`{"type":"item.completed","item":{"id":"c<E>1","type":"command_execution","command":"bash -lc 'ls <E>-la'","aggregated_output":"a<E>.go\n","exit_code":0,"status":"completed"}}`,
			`{"type":"item.completed","item":{"id":"f1","type":"file_change","changes":[{"path":"a<E>.go","kind":"up<E>date"}],"status":"failed"}}`,
			`{"type":"item.started","item":{"id":"m1","type":"mcp_tool_call","server":"f<E>s","tool":"re<E>ad","arguments":{"path":"/x<E>","dep<E>th":1},"status":"in_progress"}}`,
			`{"type":"item.completed","item":{"id":"m1","type":"mcp_tool_call","server":"f<E>s","tool":"re<E>ad","error":{"message":"no such <E>file"},"status":"failed"}}`,
			`{"type":"item.completed","item":{"id":"m2","type":"mcp_tool_call","server":"fs","tool":"ls","arguments":{},"result":{"content":[{"type":"text","text":"x<E>y"}]},"status":"completed"}}`,
			`{"type":"item.completed","item":{"id":"w1","type":"web_search","query":"go<E>lang"}}`,
			`{"type":"item.completed","item":{"id":"e1","type":"error","message":"bad <E>config"}}`,
			`{"type":"item.completed","item":{"id":"u1","type":"col<E>lab"}}`,
			`{"type":"error","message":"Reconnecting... 2/5 (dis<E>connected)"}`,
			`{"type":"error","message":"stream <E>error"}`,
			`{"type":"item.completed","item":{"id":"a1","type":"agent_message","text":"an<E>swer"}}`,
			`{"type":"turn.fin<E>ished"}`,
			`{"type":"turn.failed","error":{"message":"quota <E>exceeded"}}`,
		}, []string{
			`init        text="thread th1"`,
			`thinking    text="**Planning**"`,
			`tool_call   tool=todo_list id=l1 summary="1/2 done" text="[x] read\n[ ] fix it"`,
			`tool_call   tool=shell id=c1 summary="ls -la"`,
			`tool_result tool=shell id=c1 summary="ls -la" text="a.go"`,
			`tool_call   tool=apply_patch id=f1 summary="update a.go"`,
			`tool_result tool=apply_patch id=f1 summary="update a.go" error=true text="patch failed\nupdate a.go"`,
			`tool_call   tool=fs.read id=m1 summary="/x"`,
			`tool_result tool=fs.read id=m1 summary="/x" error=true text="no such file"`,
			`tool_call   tool=fs.ls id=m2`,
			`tool_result tool=fs.ls id=m2 text="xy"`,
			`tool_call   tool=web_search id=w1 summary="golang"`,
			`tool_result tool=web_search id=w1 summary="golang"`,
			`error       text="bad config"`,
			`unknown     text="item.completed/collab"`,
			`retry       text="Reconnecting... 2/5 (disconnected)"`,
			`error       text="stream error"`,
			`text        text="answer"`,
			`unknown     text="turn.finished"`,
			`result      error=true text="quota exceeded"`,
		}},
		{"gemini", FormatGemini, []string{
			`{"type":"init","session_id":"g<E>1","model":"gem<E>ini"}`,
			`{"type":"message","role":"user","content":"hel<E>lo\n"}`,
			`{"type":"message","role":"assistant","content":"Let <E>me ","delta":true}`,
			`{"type":"message","role":"assistant","content":"look.","delta":true}`,
			`{"type":"tool_use","tool_name":"run_<E>shell","tool_id":"r<E>1","parameters":{"command":"ls <E>-la"}}`,
			`{"type":"tool_result","tool_id":"r<E>1","status":"success","output":"a<E>.go\n\tb.go"}`,
			`{"type":"tool_use","tool_name":"read_file","tool_id":"r2","parameters":{"absolute_path":"/a/<E>b"}}`,
			`{"type":"tool_result","tool_id":"r2","status":"error","error":{"type":"NOT_FOUND","message":"no <E>file"}}`,
			`{"type":"error","severity":"warning","message":"Loop <E>detected"}`,
			`{"type":"error","severity":"error","message":"Too <E>many turns"}`,
			`{"type":"message","role":"sys<E>tem","content":"?"}`,
			`{"type":"mys<E>tery"}`,
			`{"type":"message","role":"assistant","content":"Sor<E>ry."}`,
			`{"type":"result","status":"error","error":{"type":"API_<E>ERROR","message":"fetch <E>failed"}}`,
		}, []string{
			`init        text="session g1 (model gemini)"`,
			`user        text="hello"`,
			`text        text="Let me look."`,
			`tool_call   tool=run_shell id=r1 summary="ls -la"`,
			`tool_result tool=run_shell id=r1 summary="ls -la" text="a.go\n        b.go"`,
			`tool_call   tool=read_file id=r2 summary="/a/b"`,
			`tool_result tool=read_file id=r2 summary="/a/b" error=true text="no file"`,
			`error       text="warning: Loop detected"`,
			`error       text="Too many turns"`,
			`unknown     text="message/system"`,
			`unknown     text="mystery"`,
			`text        text="Sorry."`,
			`result      error=true text="fetch failed"`,
		}},
		{"gemini error type only", FormatGemini, []string{
			`{"type":"result","status":"error","error":{"type":"API_<E>ERROR"}}`,
		}, []string{
			`result      error=true text="API_ERROR"`,
		}},
	}
	// step is what the parser made of one line: its entries, then its state.
	type step struct {
		entries               []string
		activity, err, answer string
	}
	runAll := func(t *testing.T, f Format, lines []string, seq string) ([]step, []string) {
		t.Helper()
		quoted, _ := json.Marshal(seq)
		esc := strings.Trim(string(quoted), `"`)
		p := NewParser(f)
		var steps []step
		var all []string
		for _, l := range lines {
			l = strings.ReplaceAll(strings.ReplaceAll(l, "<E>", esc), "<R>", seq)
			var s step
			for _, e := range p.Line([]byte(l)) {
				for _, v := range []string{e.Text, e.Tool, e.ID, e.Summary} {
					if strings.ContainsFunc(v, isControl) {
						t.Errorf("%q: entry field %q holds a control character", l, v)
					}
				}
				s.entries = append(s.entries, renderEntry(e))
			}
			o := p.Outcome()
			s.activity, s.err, s.answer = p.Activity(), o.Error, o.Answer
			steps = append(steps, s)
			all = append(all, s.entries...)
		}
		return steps, all
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clean, got := runAll(t, tt.format, tt.lines, "")
			wantEntries(t, got, tt.want...)
			for _, es := range escapeSequences {
				steps, _ := runAll(t, tt.format, tt.lines, es.seq)
				for i, s := range steps {
					c := clean[i]
					if strings.Join(s.entries, "\n") != strings.Join(c.entries, "\n") || s.activity != c.activity || s.err != c.err || s.answer != c.answer {
						t.Errorf("%s, line %d: got\n%s\nactivity=%q error=%q answer=%q\nwant\n%s\nactivity=%q error=%q answer=%q",
							es.name, i+1, strings.Join(s.entries, "\n"), s.activity, s.err, s.answer,
							strings.Join(c.entries, "\n"), c.activity, c.err, c.answer)
					}
				}
			}
		})
	}
}

// TestLongLinesFullOfSequences: only a bounded prefix of a long line is
// read for a summary or a line of tool output (termtext.Plain takes time
// quadratic in the length of a line dense with escape sequences; the
// summary's own bound is termtext.OneLine's, tested there).
func TestLongLinesFullOfSequences(t *testing.T) {
	red := strings.Repeat("\x1b[31mx\x1b[m", 1<<20/9) // 1 MiB
	if got, more := headLines(red + "\nnext\n"); got != strings.Repeat("x", MaxResultLineRunes-1)+"…\nnext" || more != 0 {
		t.Errorf("headLines = %.30q… (%d bytes), %d", got, len(got), more)
	}
	quoted, _ := json.Marshal(red)
	e := NewParser(FormatClaude).Line([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":` + string(quoted) + `}}]}}`))
	if len(e) != 1 || e[0].Summary != strings.Repeat("x", MaxSummaryRunes-1)+"…" {
		t.Errorf("entries %+v", e)
	}
}
