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
