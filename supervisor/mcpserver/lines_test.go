package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// Each line a client might send by mistake is answered with one JSON-RPC
// error and dropped; valid messages around it pass unchanged.
func TestLineFilterAnswersBadLinesAndPassesTheRest(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	bad := map[string]int{
		`this is junk`:                  -32700,
		`{"jsonrpc":"2.0","id":2`:       -32700,
		`123`:                           -32600,
		`"x"`:                           -32600,
		`{}`:                            -32600,
		`[]`:                            -32600,
		`[` + good + `]`:                -32600,
		`{"jsonrpc":"1.0","id":7}`:      -32600,
		strings.Repeat("a", maxLine+10): -32600,
	}
	for line, code := range bad {
		var out, log bytes.Buffer
		f := newLineFilter(strings.NewReader(good+"\n"+line+"\n\n  \n"+good+"\n"), &out, &log)
		passed, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		if string(passed) != good+"\n"+good+"\n" {
			t.Errorf("%.40q: passed %q", line, passed)
		}
		var answer struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out.Bytes(), &answer); err != nil || answer.JSONRPC != "2.0" || answer.Error.Code != code {
			t.Errorf("%.40q: answered %q (%v), want code %d", line, out.String(), err, code)
		}
		if line == `{"jsonrpc":"1.0","id":7}` && string(answer.ID) != "7" {
			t.Errorf("the answer does not echo the id: %s", answer.ID)
		}
		if strings.Count(out.String(), "\n") != 1 || log.Len() == 0 {
			t.Errorf("%.40q: want one answer line and a note on stderr; got %q / %q", line, out.String(), log.String())
		}
	}
}

// answerTo runs lines through a lineFilter and returns what it passed on
// and what it answered.
func answerTo(t *testing.T, lines ...string) (passed, answered, logged string) {
	t.Helper()
	var out, log bytes.Buffer
	f := newLineFilter(strings.NewReader(strings.Join(lines, "\n")+"\n"), &out, &log)
	p, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(p), out.String(), log.String()
}

// TestLineFilterNullAndLongIDs: MCP forbids a null id, so such a request
// gets an error instead of silence; a line over the limit is answered
// with its id when the id comes early in it, so the client's call ends.
func TestLineFilterNullAndLongIDs(t *testing.T) {
	passed, answered, _ := answerTo(t, `{"jsonrpc":"2.0","id":null,"method":"ping"}`)
	if passed != "" || !strings.Contains(answered, `"id":null,"error":{"code":-32600`) || !strings.Contains(answered, "null") {
		t.Errorf("null id: passed %q, answered %q", passed, answered)
	}

	long := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"spawn_agent","arguments":{"message":"` +
		strings.Repeat("x", maxLine) + `"}}}`
	passed, answered, _ = answerTo(t, long)
	if passed != "" || !strings.Contains(answered, `"id":3,"error":{"code":-32600,"message":"message longer than 16777216 bytes (16 MiB)`) {
		t.Errorf("long line: passed %q, answered %.200q", passed, answered)
	}
	late := `{"jsonrpc":"2.0","method":"tools/call","params":{"message":"` + strings.Repeat("x", maxLine) + `"},"id":"late"}`
	if _, answered, _ = answerTo(t, late); !strings.Contains(answered, `"id":null`) {
		t.Errorf("long line with its id past the head: answered %.200q, want id null", answered)
	}

	// The client's own error answer without an id asks nothing: it is
	// noted on stderr, not answered and not passed on.
	passed, answered, logged := answerTo(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
	if passed != "" || answered != "" || !strings.Contains(logged, "parse error") {
		t.Errorf("client error answer: passed %q, answered %q, logged %q", passed, answered, logged)
	}
}
