package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testCommand reads its message and sleeps for "sleep…", fails for
// "fail…", and otherwise answers "got: <message>".
const testCommand = `read m; case "$m" in sleep*) exec sleep 30;; fail*) exit 3;; esac; echo "got: $m"`

// connect returns a client session of a server built by NewServer(bs),
// connected in memory and closed when the test ends.
func connect(t *testing.T, bs Backends) *mcp.ClientSession {
	t.Helper()
	return connectTo(t, NewServer(bs, "test"))
}

// connectTo returns a client session of srv, connected in memory and
// closed when the test ends.
func connectTo(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, srv, nil)
}

// connectWith is connectTo with a client of options o (nil: none).
func connectWith(t *testing.T, srv *mcp.Server, o *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, o).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close() //nolint:errcheck // cleanup of the session at the test's end
		ss.Wait()  //nolint:errcheck // the end of a session its client closed
	})
	return cs
}

// newSupervisor returns a supervisor of this process (the MCP server's
// own host, as when none serves the directory) running testCommand, shut
// down when the test ends (hostkit.Supervisor).
func newSupervisor(t *testing.T, maxAgents int) *supervisor.Supervisor {
	t.Helper()
	return hostkit.Supervisor(t, testCommand, hostkit.MaxAgentsOf(maxAgents))
}

// call calls a tool and returns its result's text and whether it is an
// error; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items, want 1", name, len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError {
		// The structured content is the same JSON as the text.
		sc, _ := json.Marshal(res.StructuredContent)
		var a, b any
		_ = json.Unmarshal(sc, &a)
		_ = json.Unmarshal([]byte(text), &b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: structured content %s differs from text %s", name, sc, text)
		}
	}
	return text, res.IsError
}

// callOK calls a tool that must succeed and decodes its JSON into out.
func callOK(t *testing.T, cs *mcp.ClientSession, name string, args, out any) {
	t.Helper()
	text, isErr := call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v: error %q", name, args, text)
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%s: %v in %q", name, err, text)
	}
}

func TestToolsAndTheirSchemas(t *testing.T) {
	cs := connect(t, One(newSupervisor(t, 4)))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{ // tool → required parameters
		ToolSpawn: {"message"}, ToolSend: {"id", "message"}, ToolResume: {"id"},
		ToolWait: {"ids"}, ToolClose: {"id"}, ToolList: nil, ToolAnswer: {"id", "answers"},
	}
	optional := map[string][]string{ToolSend: {"interrupt"}, ToolWait: {"timeout_ms"}, ToolAnswer: {"request_id"}}
	if len(res.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		required, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		if tool.Description == "" || tool.OutputSchema == nil {
			t.Errorf("%s: no description or output schema", tool.Name)
		}
		schema := tool.InputSchema.(map[string]any)
		var gotRequired []string
		list, _ := schema["required"].([]any)
		for _, r := range list {
			gotRequired = append(gotRequired, r.(string))
		}
		if !slices.Equal(gotRequired, required) {
			t.Errorf("%s: required %v, want %v", tool.Name, gotRequired, required)
		}
		props, _ := schema["properties"].(map[string]any)
		if len(props) != len(required)+len(optional[tool.Name]) {
			t.Errorf("%s: properties %v", tool.Name, props)
		}
		for name, p := range props {
			if d, _ := p.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s.%s has no description", tool.Name, name)
			}
		}
	}
}

func TestNoToolsWithoutOperations(t *testing.T) {
	cs := connect(t, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 0 {
		t.Fatalf("tools = %v, %v; want none", res, err)
	}
}

// TestOnlyToolsAreOffered: the server declares tools alone, and a request
// for prompts, resources or completions is "method not found" (-32601),
// not an empty list that says it handles them; tools/list works with or
// without tools.
func TestOnlyToolsAreOffered(t *testing.T) {
	for _, f := range []Family{FamilySeed, FamilyMultiAgent} {
		for _, bs := range []Backends{nil, One(newSupervisor(t, 1))} {
			cs := connectTo(t, NewFamilyServer(f, bs, "test", "s"))
			caps := cs.InitializeResult().Capabilities
			if caps.Tools == nil || caps.Prompts != nil || caps.Resources != nil || caps.Completions != nil {
				t.Errorf("%s, tools %v: capabilities %+v, want tools alone", f, bs != nil, caps)
			}
			ctx := context.Background()
			_, errPrompts := cs.ListPrompts(ctx, nil)
			_, errGet := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "x"})
			_, errResources := cs.ListResources(ctx, nil)
			_, errTemplates := cs.ListResourceTemplates(ctx, nil)
			_, errRead := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///x"})
			_, errComplete := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "x"}, Argument: mcp.CompleteParamsArgument{Name: "a"}})
			for i, err := range []error{errPrompts, errGet, errResources, errTemplates, errRead, errComplete} {
				var rpc *jsonrpc.Error
				if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeMethodNotFound {
					t.Errorf("%s, tools %v: request %d gave %v, want method not found (-32601)", f, bs != nil, i, err)
				}
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Errorf("%s: tools/list: %v", f, err)
			}
		}
	}
}

// blockingOps is a Backend whose Wait blocks until its context ends and
// reports that it did; it has no other operation.
type blockingOps struct {
	Backend
	started, ended chan struct{}
}

func (b blockingOps) Wait(ctx context.Context, _ []string, _ *int) (proto.WaitResult, error) {
	close(b.started)
	<-ctx.Done()
	close(b.ended)
	return proto.WaitResult{}, ctx.Err()
}

func TestWaitStopsWhenTheClientCancels(t *testing.T) {
	ops := blockingOps{started: make(chan struct{}), ended: make(chan struct{})}
	cs := connect(t, One(ops))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-ops.started
		cancel() // the client cancels the call: notifications/cancelled
	}()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolWait, Arguments: map[string]any{"ids": []string{"a"}}}); err == nil {
		t.Fatal("cancelled call returned no error")
	}
	select {
	case <-ops.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("wait still running after the client cancelled it")
	}
}

func TestWaitStopsWhenTheConnectionCloses(t *testing.T) {
	ops := blockingOps{started: make(chan struct{}), ended: make(chan struct{})}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ss, err := NewServer(One(ops), "test").Connect(context.Background(), &mcp.IOTransport{Reader: toServer, Writer: fromServer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolWait, Arguments: map[string]any{"ids": []string{"a"}}})
		called <- err
	}()
	<-ops.started
	fromClient.Close() //nolint:errcheck // io.PipeWriter.Close always returns nil; the client closes the server's stdin
	select {
	case <-ops.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("wait still running after the connection closed")
	}
	ss.Wait() //nolint:errcheck // the end of a session whose stdin closed: the call's error is checked
	if err := <-called; err == nil {
		t.Error("call on a closed connection returned no error")
	}
	cs.Close() //nolint:errcheck // cleanup of a session already ended
}

// TestWaitTimeoutForms: a model may write timeout_ms as null (the default)
// or as a huge integral number (clamped, SPEC §3); a fraction is refused
// by the schema, never with Go's type names.
func TestWaitTimeoutForms(t *testing.T) {
	cs := connect(t, One(newSupervisor(t, 4)))
	var sp proto.SpawnResult
	callOK(t, cs, ToolSpawn, map[string]any{"message": "hello"}, &sp)
	var first proto.WaitResult
	callOK(t, cs, ToolWait, map[string]any{"ids": []string{sp.AgentID}, "timeout_ms": 300000}, &first)
	for _, ms := range []any{nil, 1e20, json.RawMessage(`100000000000000000000000`), 15000} {
		var res proto.WaitResult
		callOK(t, cs, ToolWait, map[string]any{"ids": []string{sp.AgentID}, "timeout_ms": ms}, &res)
		if res.Status[sp.AgentID] != proto.StatusCompleted {
			t.Errorf("timeout_ms %v: %+v", ms, res)
		}
	}
	for ms, want := range map[any]string{-1e20: "timeout_ms must be greater than zero", 1.5: "timeout_ms"} {
		text, isErr := call(t, cs, ToolWait, map[string]any{"ids": []string{sp.AgentID}, "timeout_ms": ms})
		if !isErr || !strings.Contains(text, want) || strings.Contains(text, "reflect") || strings.Contains(text, "Go struct") {
			t.Errorf("timeout_ms %v: %q (error %v), want an error about %q", ms, text, isErr, want)
		}
	}
}
