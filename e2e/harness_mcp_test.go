package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"reflect"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// startMCP starts `subdash mcp args…` with env and connects the go-sdk's
// MCP client to it over stdio. Closing the session (at the end of the test
// at the latest) closes its stdin, upon which it exits.
func startMCP(t *testing.T, env []string, args ...string) (*mcpsdk.ClientSession, *exec.Cmd, *testkit.SyncBuffer) {
	t.Helper()
	return startMCPWith(t, nil, env, args...)
}

// startMCPWith is startMCP with a client of options o (nil: none).
func startMCPWith(t *testing.T, o *mcpsdk.ClientOptions, env []string, args ...string) (*mcpsdk.ClientSession, *exec.Cmd, *testkit.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"mcp"}, args...)...)
	cmd.Env = append(testEnv(), env...)
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "subdash-e2e"}, o).Connect(context.Background(),
		&mcpsdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to subdash mcp: %v; stderr %s", err, stderr)
	}
	t.Cleanup(func() { cs.Close() }) //nolint:errcheck // cleanup of the session at the test's end
	return cs, cmd, stderr
}

// callTool calls a tool and returns its text content and isError; a
// protocol error fails the test.
func callTool(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items", name, len(res.Content))
	}
	text := res.Content[0].(*mcpsdk.TextContent).Text
	if !res.IsError && res.StructuredContent == nil {
		t.Errorf("%s: no structured content", name)
	}
	return text, res.IsError
}

// toolOK calls a tool that must succeed and decodes its JSON text into out.
func toolOK(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	text, isErr := callTool(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v: error %q", name, args, text)
	}
	reflect.ValueOf(out).Elem().SetZero() // decode into a fresh value, not merged maps
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%s: %v in %q", name, err, text)
	}
}

// toolFails calls a tool that must fail with exactly message.
func toolFails(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any, message string) {
	t.Helper()
	if text, isErr := callTool(t, cs, name, args); !isErr || text != message {
		t.Errorf("%s %v: %q (isError %v), want error %q", name, args, text, isErr, message)
	}
}

// initializeLine and initializedLine open an MCP session by hand.
const (
	initializeLine  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"one-shot","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// toolCallLine is a tools/call request with id.
func toolCallLine(id int, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// rpcAnswer is one answer subdash mcp wrote.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// readAnswers reads stdout to its end and returns the answers by id; a
// line that is not a JSON-RPC answer, or a second answer to an id, fails
// the test.
func readAnswers(t *testing.T, stdout io.Reader) map[string]rpcAnswer {
	t.Helper()
	answers := map[string]rpcAnswer{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a rpcAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil || a.JSONRPC != "2.0" || len(a.ID) == 0 {
			t.Fatalf("stdout line is not a JSON-RPC answer: %q", sc.Text())
		}
		if _, dup := answers[string(a.ID)]; dup {
			t.Fatalf("a second answer to id %s: %q", a.ID, sc.Text())
		}
		answers[string(a.ID)] = a
	}
	return answers
}

// requireResults fails the test unless ids 1…n each got a result (not an
// error) and nothing else was answered.
func requireResults(t *testing.T, answers map[string]rpcAnswer, n int, stderr string) {
	t.Helper()
	for id := 1; id <= n; id++ {
		a, ok := answers[fmt.Sprint(id)]
		switch {
		case !ok:
			t.Errorf("no answer to request %d", id)
		case len(a.Result) == 0 || len(a.Error) != 0:
			t.Errorf("request %d: error %s, want a result", id, a.Error)
		}
	}
	if len(answers) != n || t.Failed() {
		t.Fatalf("%d answers, want %d (ids 1…%d); stderr:\n%s", len(answers), n, n, stderr)
	}
}

// spawnedAgent is the agent_id in the structured content of a
// spawn_agent answer.
// answeredSpawn reads answers from sc until the one to request id, a
// spawn_agent, and returns the agent it spawned; stderr is the server's,
// shown when no such answer comes.
func answeredSpawn(t *testing.T, sc *bufio.Scanner, id string, stderr fmt.Stringer) proto.SpawnResult {
	t.Helper()
	for sc.Scan() {
		var a rpcAnswer
		if json.Unmarshal(sc.Bytes(), &a) == nil && string(a.ID) == id {
			return spawnedAgent(t, a)
		}
	}
	t.Fatalf("no answer to spawn_agent; stderr:\n%s", stderr)
	return proto.SpawnResult{}
}

func spawnedAgent(t *testing.T, a rpcAnswer) proto.SpawnResult {
	t.Helper()
	var res struct {
		IsError    bool              `json:"isError"`
		Structured proto.SpawnResult `json:"structuredContent"`
	}
	if err := json.Unmarshal(a.Result, &res); err != nil || res.IsError || res.Structured.AgentID == "" {
		t.Fatalf("spawn_agent answered %s (%v)", a.Result, err)
	}
	return res.Structured
}

// startMCPPipe starts `subdash mcp args…` with pipes for stdin and stdout
// and its stderr kept; it is killed at the end of the test if still running.
func startMCPPipe(t *testing.T, args []string) (*exec.Cmd, io.WriteCloser, io.Reader, *testkit.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"mcp"}, args...)...)
	cmd.Env = testEnv()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, stdin, stdout, stderr
}
