package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// runLines runs Run on lines (then the end of stdin) and returns what it
// wrote on stdout, one message a line; it fails the test when Run does not
// return within 30 s of the end of its input, or returns an error.
func runLines(t *testing.T, lines ...string) []string {
	t.Helper()
	t.Setenv("MEMO_ENABLE_COLLAB_TOOLS", "")
	stdin := strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stdout bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), options(t, "cat"), FamilySeed, stdin, &stdout, io.Discard, nil)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return 30 s after the end of its input")
	}
	return strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
}

// rawID returns the id member of line exactly as it was written.
func rawID(t *testing.T, line string) string {
	t.Helper()
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not JSON: %q", line)
	}
	return string(m.ID)
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestEveryRequestIsAnsweredWithItsOwnID: requests with the same
// id in flight, ids the SDK cannot hold (beyond int64, written with escapes
// or spaces) are each answered with a result carrying the id byte for byte;
// ids MCP does not allow (a fraction, an exponent) get an error carrying the
// raw id and saying why; a message with an id and neither method, result
// nor error is an invalid request; and Run returns at the end of input. The
// SDK answered one of two duplicates and never returned, and answered 23.5
// as 23, 12345678901234567890 as -9223372036854775808 and 1e2 as 100.
func TestEveryRequestIsAnsweredWithItsOwnID(t *testing.T) {
	results := []string{
		`7`, `7`, // a duplicate in flight
		`12345678901234567890`, `-9223372036854775809`, `"s"`, `"s"`, `"\u0041\/"`, `""`, `-0`,
	}
	errs := map[string]string{
		`23.5`: "integer", `1e2`: "integer", `true`: "string or an integer", `{"a":1}`: "string or an integer",
	}
	lines := []string{initLine, `{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	for _, id := range results {
		lines = append(lines, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
	}
	lines = append(lines, `{"jsonrpc":"2.0","id": 8 ,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}`,
		`{"jsonrpc":"2.0","id": 8 ,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}`)
	for id := range errs {
		lines = append(lines, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
	}
	lines = append(lines, `{"jsonrpc":"2.0","id":"lost"}`)
	out := runLines(t, lines...)

	var gotResults, wantResults []string
	for _, l := range out {
		id := rawID(t, l)
		var m struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(l), &m)
		switch {
		case id == "0":
		case len(m.Result) > 0:
			gotResults = append(gotResults, id)
		case id == `"lost"`:
			if m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "invalid request") {
				t.Errorf("an id with no method, result or error: %s", l)
			}
			delete(errs, "lost")
		default:
			why, ok := errs[id]
			if !ok || m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, why) {
				t.Errorf("answer %s: want an error of code -32600 saying %q", l, why)
			}
			delete(errs, id)
		}
	}
	wantResults = append(append(wantResults, results...), "8", "8")
	slices.Sort(gotResults)
	slices.Sort(wantResults)
	if !slices.Equal(gotResults, wantResults) {
		t.Errorf("results for ids %v, want %v:\n%s", gotResults, wantResults, strings.Join(out, "\n"))
	}
	if len(errs) > 0 {
		t.Errorf("no error answer for ids %v:\n%s", errs, strings.Join(out, "\n"))
	}
}

// TestCancelledRequestsGetNoAnswer: notifications/cancelled names a raw
// id; every request in flight with that id is cancelled inside (the SDK
// sees one notification each) and its answer is not written (MCP
// cancellation: the receiver should not respond), while the answer to a
// later request with that id, and to others, go out with their ids.
func TestCancelledRequestsGetNoAnswer(t *testing.T) {
	var stdout bytes.Buffer
	in := newLineFilter(strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"wait"}}`,
		`{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"wait"}}`,
		`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"wait"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345678901234567890,"reason":"user"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nobody"}}`,
		`{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`,
	}, "\n")+"\n"), &stdout, io.Discard)
	c := newLineConn(in, &lockedWriter{w: &stdout})
	defer c.Close() //nolint:errcheck // cleanup of the connection at the test's end
	ctx := context.Background()
	var calls []*jsonrpc.Request
	var cancels []string
	for range 6 {
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		req := msg.(*jsonrpc.Request)
		if req.IsCall() {
			calls = append(calls, req)
		} else {
			cancels = append(cancels, string(req.Params))
		}
	}
	if len(calls) != 4 || len(cancels) != 2 {
		t.Fatalf("read %d calls and cancellations %q; want 4 and 2", len(calls), cancels)
	}
	seen := map[any]bool{}
	for _, r := range calls {
		if seen[r.ID.Raw()] {
			t.Fatalf("two requests have the id %v inside", r.ID.Raw())
		}
		seen[r.ID.Raw()] = true
	}
	for i, p := range cancels {
		if want := string(cancelledParams(calls[i].ID.Raw().(int64))); p != want {
			t.Errorf("cancellation %d: %s, want %s", i, p, want)
		}
	}
	for _, r := range calls {
		resp := &jsonrpc.Response{ID: r.ID, Result: json.RawMessage(`{"method":"` + r.Method + `"}`)}
		if err := c.Write(ctx, resp); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"jsonrpc":"2.0","id":"s","result":{"method":"tools/call"}}` + "\n" +
		`{"jsonrpc":"2.0","id":12345678901234567890,"result":{"method":"ping"}}` + "\n"
	if stdout.String() != want {
		t.Fatalf("written:\n%s\nwant:\n%s", stdout.String(), want)
	}
}

// TestABadRequestIsAnsweredWithItsID: a request whose members have the
// wrong types (params a string, a numeric method), or that lacks
// "jsonrpc", is answered with an error that carries the request's id, so
// the client's call ends; the SDK's own answer to bad params does too.
func TestABadRequestIsAnsweredWithItsID(t *testing.T) {
	out := runLines(t, initLine, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"id":9,"method":"tools/call","params":"x"}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"x"}`,
		`{"jsonrpc":"2.0","id":"eleven","method":5}`,
		`{"jsonrpc":"2.0","id":12,"method":"ping"}`)
	errs := map[string]bool{"9": true, "10": true, `"eleven"`: true}
	for _, l := range out {
		id := rawID(t, l)
		var m struct {
			Error *struct{ Code int } `json:"error"`
		}
		_ = json.Unmarshal([]byte(l), &m)
		switch {
		case id == "0" || id == "12":
			if m.Error != nil {
				t.Errorf("answer %s: want a result", l)
			}
		case errs[id] && m.Error != nil:
			delete(errs, id)
		default:
			t.Errorf("answer %s: not one of an error to ids 9, 10, \"eleven\"", l)
		}
	}
	if len(errs) > 0 {
		t.Errorf("no error answer with ids %v:\n%s", errs, strings.Join(out, "\n"))
	}
}
