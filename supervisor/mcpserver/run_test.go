package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/server"
	"github.com/subdash/subdash/supervisor/proto"
)

// startRun runs Run with o on pipes and returns a client session of it and
// a function that closes the session (the server's stdin) and returns what
// Run wrote on stderr and its error.
func startRun(t *testing.T, o supervisor.Options) (*mcp.ClientSession, func() (string, error)) {
	t.Helper()
	return startFamily(t, o, FamilySeed)
}

// startFamily is startRun offering family's tools.
func startFamily(t *testing.T, o supervisor.Options, family Family) (*mcp.ClientSession, func() (string, error)) {
	t.Helper()
	return startFamilyWith(t, o, family, nil)
}

// startFamilyWith is startFamily with a client of options co (nil: none).
func startFamilyWith(t *testing.T, o supervisor.Options, family Family, co *mcp.ClientOptions) (*mcp.ClientSession, func() (string, error)) {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), o, family, toServer, fromServer, &stderr, nil) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, co).Connect(context.Background(),
		&mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := func() (string, error) {
		cs.Close() //nolint:errcheck // ending the session is the point: Run's answer is checked
		select {
		case err := <-done:
			return stderr.String(), err
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return after stdin closed")
			return "", nil
		}
	}
	return cs, stop
}

func options(t *testing.T, command string) supervisor.Options {
	dir := t.TempDir()
	return supervisor.Options{
		Command: command, Dir: dir, StateDir: filepath.Join(dir, ".state"),
		Socket: filepath.Join(dir, "run", "s.sock"), Grace: 200 * time.Millisecond,
	}
}

func TestRunSupervisesAndServesTheSocketWhenNobodyServes(t *testing.T) {
	t.Setenv("MEMO_ENABLE_COLLAB_TOOLS", "")
	o := options(t, `echo $$ > "$SUBDASH_AGENT_ID.pid"; exec sleep 30`)
	cs, stop := startRun(t, o)

	var sp proto.SpawnResult
	callOK(t, cs, ToolSpawn, map[string]any{"message": "work"}, &sp)
	// `subdash ctl` works against it: it serves the control socket.
	c := client.NewClient(o.Socket, o.Dir)
	list, err := c.List(context.Background())
	if err != nil || len(list.Agents) != 1 || list.Agents[0].AgentID != sp.AgentID {
		t.Fatalf("list over the socket = %+v, %v", list, err)
	}
	pidFile := filepath.Join(o.Dir, sp.AgentID+".pid")
	var pid int
	testkit.Eventually(t, 10*time.Second, "agent writes its pid", func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})

	stderr, err := stop()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(stderr, "no subdash is serving "+o.Dir+"; supervising agents here") {
		t.Errorf("stderr = %q", stderr)
	}
	// On exit the running submission's process group is gone and the
	// socket removed.
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still exists after Run returned (kill: %v)", pid, err)
	}
	if _, err := os.Lstat(o.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after Run returned: %v", err)
	}
}

func TestRunDrivesTheSubdashServingTheDirectory(t *testing.T) {
	t.Setenv("MEMO_ENABLE_COLLAB_TOOLS", "1")
	o := options(t, testCommand)
	s, quit := serveDirectory(t, o)
	defer quit()

	cs, stop := startRun(t, o)
	var sp proto.SpawnResult
	callOK(t, cs, ToolSpawn, map[string]any{"message": "remote"}, &sp)
	if ls, _ := s.List(t.Context()); len(ls.Agents) != 1 || ls.Agents[0].AgentID != sp.AgentID {
		t.Fatalf("the serving supervisor has %+v, want the agent spawned through MCP", ls.Agents)
	}
	var w proto.WaitResult
	callOK(t, cs, ToolWait, map[string]any{"ids": []string{sp.AgentID}, "timeout_ms": 300000}, &w)
	if *w.Details[sp.AgentID].LastOutput != "got: remote" {
		t.Fatalf("wait = %+v", w)
	}
	text, isErr := call(t, cs, ToolClose, map[string]any{"id": "nope"})
	if !isErr || text != "agent not found: nope" {
		t.Fatalf("close unknown over the socket: %q %v", text, isErr)
	}
	stderr, err := stop()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(stderr, "driving the subdash (pid "+strconv.Itoa(os.Getpid())+") that serves "+o.Dir) {
		t.Errorf("stderr = %q", stderr)
	}
	// The mcp server leaves the serving supervisor and its socket alone.
	if _, err := os.Lstat(o.Socket); err != nil {
		t.Errorf("socket gone after the MCP client left: %v", err)
	}
}

func TestRunOffersNoToolsWhenCollabToolsAreOff(t *testing.T) {
	t.Setenv("MEMO_ENABLE_COLLAB_TOOLS", "0")
	o := options(t, testCommand)
	cs, stop := startRun(t, o)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 0 {
		t.Fatalf("tools = %+v, %v; want none", res, err)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Dir(o.Socket)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a control socket folder was created with collab tools off: %v", err)
	}
}

// When the subdash that mcp drives goes away (its dashboard quit), the next
// call finds nobody serving the socket: mcp then supervises agents itself
// and serves the socket, and the call succeeds.
func TestRunTakesOverWhenTheDrivenSubdashGoesAway(t *testing.T) {
	t.Setenv("MEMO_ENABLE_COLLAB_TOOLS", "1")
	o := options(t, testCommand)
	_, quit := serveDirectory(t, o)

	cs, stop := startRun(t, o)
	var first proto.SpawnResult
	callOK(t, cs, ToolSpawn, map[string]any{"message": "first"}, &first)
	quit() // the dashboard quits
	var second proto.SpawnResult
	callOK(t, cs, ToolSpawn, map[string]any{"message": "second"}, &second)
	var w proto.WaitResult
	callOK(t, cs, ToolWait, map[string]any{"ids": []string{second.AgentID}, "timeout_ms": 300000}, &w)
	if *w.Details[second.AgentID].LastOutput != "got: second" {
		t.Fatalf("after the takeover: %+v", w)
	}
	// the mcp server now serves the socket: a client reaches it
	info, err := client.NewClient(o.Socket, o.Dir).Info(context.Background())
	if err != nil || info.PID != os.Getpid() {
		t.Fatalf("the socket after the takeover: %+v, %v", info, err)
	}
	stderr, err := stop()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(stderr, "stopped serving; attaching again") || !strings.Contains(stderr, "supervising agents here") {
		t.Errorf("stderr = %q", stderr)
	}
}

// serveDirectory runs a supervisor for o that serves its control socket, as
// a dashboard would, until quit is called (which also shuts it down).
func serveDirectory(t *testing.T, o supervisor.Options) (s *supervisor.Supervisor, quit func()) {
	t.Helper()
	cfg, err := supervisor.Resolve(o, supervisor.SystemEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	s, err = supervisor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Listen(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	return s, func() {
		cancel()
		<-served //nolint:errcheck // ctx's error: the test ends the server
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

// TestRunSendsNoAnswerToACancelledCall speaks the protocol line by line: a
// wait cancelled with notifications/cancelled gets no answer at all (MCP
// cancellation), while the session goes on answering.
func TestRunSendsNoAnswerToACancelledCall(t *testing.T) {
	t.Setenv("MEMO_ENABLE_COLLAB_TOOLS", "")
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), options(t, "exec sleep 30"), FamilySeed, toServer, fromServer, io.Discard, nil)
		fromServer.Close() //nolint:errcheck // io.PipeWriter.Close always returns nil
	}()
	lines := bufio.NewScanner(toClient)
	lines.Buffer(nil, 1<<20)
	send := func(line string) {
		if _, err := io.WriteString(fromClient, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string // every line the server wrote
	// answer reads lines until the answer to id, and returns its result.
	answer := func(id string) json.RawMessage {
		for lines.Scan() {
			seen = append(seen, lines.Text())
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(lines.Bytes(), &m) == nil && string(m.ID) == id {
				return m.Result
			}
		}
		t.Fatalf("no answer to %s", id)
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	answer("1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spawn_agent","arguments":{"message":"x"}}}`)
	var spawned struct {
		Structured struct {
			AgentID string `json:"agent_id"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(answer("2"), &spawned); err != nil || spawned.Structured.AgentID == "" {
		t.Fatalf("spawn_agent: %v %+v", err, spawned)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wait","arguments":{"ids":["` + spawned.Structured.AgentID + `"],"timeout_ms":300000}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"the user pressed escape"}}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	answer("4")
	fromClient.Close() //nolint:errcheck // io.PipeWriter.Close always returns nil; the end of the session: everything the server wrote is read below
	for lines.Scan() {
		seen = append(seen, lines.Text())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, l := range seen {
		if strings.Contains(l, `"id":3`) {
			t.Fatalf("the cancelled wait was answered: %s", l)
		}
	}
}

// TestRunAnswersEveryRequestBeforeTheEndOfStdin gives Run its requests and
// the end of its stdin at once: every request is answered, the
// notification is not, and Run returns nil.
func TestRunAnswersEveryRequestBeforeTheEndOfStdin(t *testing.T) {
	t.Setenv("MEMO_ENABLE_COLLAB_TOOLS", "")
	stdin := strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
	}, "\n") + "\n")
	var stdout bytes.Buffer
	if err := Run(context.Background(), options(t, "cat"), FamilySeed, stdin, &stdout, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || len(m.Result) == 0 {
			t.Fatalf("not a result: %q", line)
		}
		ids = append(ids, string(m.ID))
	}
	slices.Sort(ids)
	if want := []string{"1", "2", "3", "4"}; !slices.Equal(ids, want) {
		t.Fatalf("answered %v, want %v:\n%s", ids, want, &stdout)
	}
}
