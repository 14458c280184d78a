package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// gateCommand reads its message; "until PATH" runs until the file PATH
// exists; then it answers "got: <message>". A test ends each agent when
// it chooses, in the order it chooses.
const gateCommand = `read m; case "$m" in until*) f="${m#until }"; while [ ! -e "$f" ]; do sleep 0.02; done;; esac; echo "got: $m"`

// gates is a folder of gate files for gateCommand's agents.
type gates string

// until is the message of an agent that runs until open(name).
func (g gates) until(name string) string { return "until " + filepath.Join(string(g), name) }

// open ends the agents waiting for name.
func (g gates) open(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(string(g), name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// shortInterval makes the heartbeats of waiting calls come every d for
// the test.
func shortInterval(t *testing.T, d time.Duration) {
	old := progressInterval
	progressInterval = d
	t.Cleanup(func() { progressInterval = old })
}

// heard is a progress notification as a client handled it, and when.
type heard struct {
	mcp.ProgressNotificationParams
	at time.Time
}

// hearing keeps the progress notifications a client handled, in order.
type hearing struct {
	mu    sync.Mutex
	notes []heard
}

// options is a client's options that keep its progress notifications.
func (h *hearing) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.notes = append(h.notes, heard{*req.Params, time.Now()})
	}}
}

// all returns every notification handled so far.
func (h *hearing) all() []heard {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]heard(nil), h.notes...)
}

// of returns the notifications for token handled so far.
func (h *hearing) of(token any) []heard {
	var out []heard
	for _, n := range h.all() {
		if n.ProgressToken == token {
			out = append(out, n)
		}
	}
	return out
}

// await waits until a notification for token has a message that starts
// with prefix and returns the notifications for token up to then.
func (h *hearing) await(t *testing.T, token any, prefix string) []heard {
	t.Helper()
	return testkit.Poll(t, 20*time.Second, fmt.Sprintf("a progress notification for %v saying %q", token, prefix), func() ([]heard, bool) {
		notes := h.of(token)
		for i, n := range notes {
			if strings.HasPrefix(n.Message, prefix) {
				return notes[:i+1], true
			}
		}
		return notes, false
	})
}

// callWith calls a tool with a progress token (nil: none) in a goroutine
// of its own; the channel gets its result.
func callWith(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, token any) <-chan *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	out := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), p)
		if err != nil {
			t.Errorf("%s: protocol error %v", name, err)
		}
		out <- res
	}()
	return out
}

// result waits for the result of callWith and returns its text contents.
func result(t *testing.T, done <-chan *mcp.CallToolResult) []string {
	t.Helper()
	select {
	case res := <-done:
		if res == nil {
			t.FailNow()
		}
		var out []string
		for _, c := range res.Content {
			out = append(out, c.(*mcp.TextContent).Text)
		}
		return out
	case <-time.After(30 * time.Second):
		t.Fatal("no result 30 s after the agent ended")
		return nil
	}
}

// checkProgress fails the test unless every notification of notes carries
// total and a progress above the one before, and no two are further
// apart (or the first from start) than interval and a margin for a busy
// machine.
func checkProgress(t *testing.T, notes []heard, total float64, start time.Time, interval time.Duration) {
	t.Helper()
	last, at := -1.0, start
	for _, n := range notes {
		if n.Total != total {
			t.Errorf("%q: total %v, want %v", n.Message, n.Total, total)
		}
		if n.Progress <= last {
			t.Errorf("%q: progress %v after %v; it must increase", n.Message, n.Progress, last)
		}
		if gap := n.at.Sub(at); gap > interval+2*time.Second {
			t.Errorf("%q came %v after the one before; one is due every %v", n.Message, gap, interval)
		}
		last, at = n.Progress, n.at
	}
}

// heartbeat reports whether n is a heartbeat of a call that saw ended of
// total agents end: its message says so and its progress lies between
// ended and the next whole number.
func heartbeat(n heard, ended, total int) bool {
	return strings.HasPrefix(n.Message, fmt.Sprintf("%d of %d ended; waited ", ended, total)) &&
		n.Progress > float64(ended) && n.Progress < float64(ended+1)
}

// TestWaitTellsProgress: a wait with a progress token over three agents
// hears heartbeats while none ends ("0 of 3 ended; waited 0.2s of 10s",
// progress below 1), then "1 of 3 ended: /root/<b> completed" with
// progress 1 when b ends, before its result, which is the result of the
// same call without a token.
func TestWaitTellsProgress(t *testing.T) {
	shortInterval(t, 150*time.Millisecond)
	s := hostkit.Supervisor(t, gateCommand, hostkit.MaxAgentsOf(4))
	h := &hearing{}
	cs := connectWith(t, NewServer(One(s), "test"), h.options())
	g := gates(t.TempDir())
	var a, b, c proto.SpawnResult
	callOK(t, cs, ToolSpawn, map[string]any{"message": g.until("a")}, &a)
	callOK(t, cs, ToolSpawn, map[string]any{"message": g.until("b")}, &b)
	callOK(t, cs, ToolSpawn, map[string]any{"message": g.until("c")}, &c)
	defer g.open(t, "a")
	defer g.open(t, "c")

	start := time.Now()
	args := map[string]any{"ids": []string{a.AgentID, b.AgentID, c.AgentID}, "timeout_ms": 10000}
	done := callWith(t, cs, ToolWait, args, "w1")
	testkit.Poll(t, 20*time.Second, "three heartbeats", func() ([]heard, bool) {
		n := h.of("w1")
		return n, len(n) >= 3
	})
	g.open(t, "b")
	got := result(t, done)
	notes := h.await(t, "w1", "1 of 3 ended: ")
	if end := notes[len(notes)-1]; end.Message != "1 of 3 ended: "+b.AgentPath+" completed" || end.Progress != 1 {
		t.Errorf("the end of b: %q, progress %v", end.Message, end.Progress)
	}
	for _, n := range notes[:len(notes)-1] {
		if !heartbeat(n, 0, 3) || !strings.HasSuffix(n.Message, " of 10s") {
			t.Errorf("a heartbeat before any end: %q, progress %v", n.Message, n.Progress)
		}
	}
	checkProgress(t, notes, 3, start, progressInterval)

	without, isErr := call(t, cs, ToolWait, args)
	if isErr || len(got) != 1 || got[0] != without {
		t.Errorf("the result with a token %q\nwithout %q", got, without)
	}
	if !strings.Contains(without, `"status":{"`+b.AgentID+`":"completed"}`) {
		t.Errorf("wait's result %s", without)
	}
}

// TestWaitAgentTellsProgressOfTheSubtree: a wait_agent with a progress
// token awaits the agents list_agents shows its caller that run when it
// begins (a child and its two children, not an agent that completed
// before): it hears each end as it happens, also those that put nothing
// in its mailbox (a grandchild that completes, one interrupted), with
// list_agents' word for it, heartbeats in between, and its result is
// the one Memo's wait_agent gives.
func TestWaitAgentTellsProgressOfTheSubtree(t *testing.T) {
	shortInterval(t, 150*time.Millisecond)
	s := hostkit.Supervisor(t, gateCommand, hostkit.MaxAgentsOf(8))
	h := &hearing{}
	cs := connectWith(t, NewFamilyServer(FamilyMultiAgent, One(s), "test", "s1"), h.options())
	g := gates(t.TempDir())
	ctx := t.Context()
	if _, err := s.Spawn(ctx, "before"); err != nil { // a person's agent, completed before the wait
		t.Fatal(err)
	}
	out, isErr := callText(t, cs, ToolSpawn, map[string]any{"message": g.until("lead"), "task_name": "lead"})
	if isErr {
		t.Fatalf("spawn_agent: %q", out)
	}
	var lead proto.TreeAgent
	if err := json.Unmarshal([]byte(out[0]), &lead); err != nil {
		t.Fatal(err)
	}
	under := proto.WithCaller(ctx, proto.Caller{AgentID: lead.AgentID})
	for _, name := range []string{"x", "y"} {
		if _, err := s.SpawnAgent(under, proto.SpawnRequest{Message: g.until(name), TaskName: name}); err != nil {
			t.Fatal(err)
		}
	}
	defer g.open(t, "y")
	defer g.open(t, "lead")
	testkit.Eventually(t, 20*time.Second, "the person's agent to complete", func() bool {
		ls, _ := s.List(ctx)
		for _, a := range ls.Agents {
			if a.LastMessage == "before" {
				return a.Status == proto.StatusCompleted
			}
		}
		return false
	})

	start := time.Now()
	done := callWith(t, cs, ToolWaitAgent, map[string]any{"timeout_ms": 10000}, 7)
	token := float64(7) // a number, as JSON carries it
	h.await(t, token, "0 of 3 ended; waited ")
	g.open(t, "x")
	h.await(t, token, "1 of 3 ended: /root/lead/x completed")
	if out, isErr := callText(t, cs, ToolInterruptAgent, map[string]any{"target": "/root/lead/y"}); isErr {
		t.Fatalf("interrupt_agent: %q", out)
	}
	h.await(t, token, "2 of 3 ended: /root/lead/y interrupted")
	h.await(t, token, "2 of 3 ended; waited ")
	g.open(t, "lead")
	got := result(t, done)
	notes := h.await(t, token, "3 of 3 ended: /root/lead completed")

	checkProgress(t, notes, 3, start, progressInterval)
	ends := 0
	for _, n := range notes {
		if strings.Contains(n.Message, " ended: ") {
			ends++
			if n.Progress != float64(ends) {
				t.Errorf("%q: progress %v, want %d", n.Message, n.Progress, ends)
			}
		} else if !heartbeat(n, ends, 3) {
			t.Errorf("a heartbeat after %d ends: %q, progress %v", ends, n.Message, n.Progress)
		}
	}
	want := []string{"{\n  \"message\": \"Wait completed.\",\n  \"timed_out\": false\n}",
		"<agent_completion path=\"/root/lead\" status=\"completed\">\ngot: " + g.until("lead") + "\n</agent_completion>"}
	if strings.Join(got, "\n--\n") != strings.Join(want, "\n--\n") {
		t.Errorf("wait_agent's result %q\nwant %q", got, want)
	}
}

// TestOnlyACallWithATokenHearsProgress: a wait without a progress token
// hears nothing while one with a token, beside it, hears its heartbeats;
// the same for wait_agent.
func TestOnlyACallWithATokenHearsProgress(t *testing.T) {
	shortInterval(t, 100*time.Millisecond)
	s := hostkit.Supervisor(t, gateCommand, hostkit.MaxAgentsOf(4))
	g := gates(t.TempDir())
	for _, family := range []Family{FamilySeed, FamilyMultiAgent} {
		t.Run(string(family), func(t *testing.T) {
			h := &hearing{}
			cs := connectWith(t, NewFamilyServer(family, One(s), "test", "quiet-"+string(family)), h.options())
			spawn := func(name string) string {
				if family == FamilySeed {
					var r proto.SpawnResult
					callOK(t, cs, ToolSpawn, map[string]any{"message": g.until(string(family) + name)}, &r)
					return r.AgentID
				}
				out, isErr := callText(t, cs, ToolSpawn, map[string]any{"message": g.until(string(family) + name), "task_name": string(family) + name})
				if isErr {
					t.Fatalf("spawn_agent: %q", out)
				}
				return ""
			}
			a, b := spawn("a"), spawn("b")
			defer g.open(t, string(family)+"b")
			wait := func(id string, token any) <-chan *mcp.CallToolResult {
				if family == FamilySeed {
					return callWith(t, cs, ToolWait, map[string]any{"ids": []string{id}}, token)
				}
				return callWith(t, cs, ToolWaitAgent, map[string]any{}, token)
			}
			quiet := wait(a, nil)
			loud := wait(b, "loud")
			testkit.Poll(t, 20*time.Second, "three heartbeats of the call with a token", func() ([]heard, bool) {
				n := h.of("loud")
				return n, len(n) >= 3
			})
			g.open(t, string(family)+"a")
			result(t, quiet)
			if family == FamilySeed {
				g.open(t, string(family)+"b")
				result(t, loud)
			} else {
				result(t, loud) // the end of a is in the mailbox both wait on
			}
			for _, n := range h.all() {
				if n.ProgressToken != "loud" {
					t.Errorf("a notification for token %v (%q): the call without a token heard progress", n.ProgressToken, n.Message)
				}
			}
		})
	}
}

// TestRunTellsProgressThroughTheHost: a `subdash mcp` that drives the
// host serving the directory tells the ends it follows on the host's
// event stream (a grandchild's end comes into no mailbox of the session)
// and its result's end, the notifications before the result on the wire.
func TestRunTellsProgressThroughTheHost(t *testing.T) {
	shortInterval(t, 150*time.Millisecond)
	t.Setenv("MEMO_ENABLE_COLLAB_TOOLS", "1")
	t.Setenv("SUBDASH_MCP_SESSION", "progress-test")
	o := options(t, gateCommand)
	s, quit := serveDirectory(t, o)
	defer quit()
	h := &hearing{}
	cs, stop := startFamilyWith(t, o, FamilyMultiAgent, h.options())
	defer func() { _, _ = stop() }() // the session's end; what it returns is checked in the other tests
	g := gates(t.TempDir())
	out, isErr := callText(t, cs, ToolSpawn, map[string]any{"message": g.until("lead"), "task_name": "lead"})
	if isErr {
		t.Fatalf("spawn_agent: %q", out)
	}
	var lead proto.TreeAgent
	if err := json.Unmarshal([]byte(out[0]), &lead); err != nil {
		t.Fatal(err)
	}
	under := proto.WithCaller(t.Context(), proto.Caller{AgentID: lead.AgentID})
	if _, err := s.SpawnAgent(under, proto.SpawnRequest{Message: g.until("x"), TaskName: "x"}); err != nil {
		t.Fatal(err)
	}
	defer g.open(t, "lead")

	start := time.Now()
	done := callWith(t, cs, ToolWaitAgent, map[string]any{}, "far")
	h.await(t, "far", "0 of 2 ended; waited ")
	g.open(t, "x")
	h.await(t, "far", "1 of 2 ended: /root/lead/x completed")
	g.open(t, "lead")
	result(t, done)
	notes := h.await(t, "far", "2 of 2 ended: /root/lead completed")
	checkProgress(t, notes, 2, start, progressInterval)
}

// TestProgressComesBeforeTheResult speaks the protocol line by line: the
// notifications of a wait carry its token as the client wrote it, come
// before its answer, and the last of them says which agent ended.
func TestProgressComesBeforeTheResult(t *testing.T) {
	shortInterval(t, 100*time.Millisecond)
	t.Setenv("MEMO_ENABLE_COLLAB_TOOLS", "")
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), options(t, gateCommand), FamilySeed, toServer, fromServer, io.Discard, nil)
	}()
	defer func() {
		fromClient.Close() //nolint:errcheck // the end of stdin ends Run
		go func() { _, _ = io.Copy(io.Discard, toClient) }()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	lines := bufio.NewScanner(toClient)
	send := func(line string) {
		if _, err := io.WriteString(fromClient, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() string {
		if !lines.Scan() {
			t.Fatalf("stdout ended: %v", lines.Err())
		}
		return lines.Text()
	}
	g := gates(t.TempDir())
	send(initLine)
	next()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spawn_agent","arguments":{"message":"` + g.until("a") + `"}}}`)
	var spawned struct {
		Result struct {
			Structured proto.SpawnResult `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(next()), &spawned); err != nil {
		t.Fatal(err)
	}
	a := spawned.Result.Structured
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"tok-1"},"name":"wait","arguments":{"ids":["` + a.AgentID + `"]}}}`)
	type line struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Token    json.RawMessage `json:"progressToken"`
			Message  string          `json:"message"`
			Progress float64         `json:"progress"`
			Total    float64         `json:"total"`
		} `json:"params"`
	}
	var heard []line
	for len(heard) < 2 {
		var l line
		if err := json.Unmarshal([]byte(next()), &l); err != nil || l.Method != "notifications/progress" {
			t.Fatalf("while a waits: %+v (%v), want progress", l, err)
		}
		heard = append(heard, l)
	}
	g.open(t, "a")
	var answer string
	for answer == "" {
		raw := next()
		var l line
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatal(err)
		}
		if string(l.ID) == "2" {
			answer = raw
		} else {
			heard = append(heard, l)
		}
	}
	end := heard[len(heard)-1]
	if end.Params.Message != "1 of 1 ended: "+a.AgentPath+" completed" || end.Params.Progress != 1 || end.Params.Total != 1 {
		t.Errorf("the last notification before the answer: %+v", end.Params)
	}
	for _, l := range heard {
		if string(l.Params.Token) != `"tok-1"` {
			t.Errorf("a notification for token %s", l.Params.Token)
		}
	}
	if !strings.Contains(answer, `"status":{"`+a.AgentID+`":"completed"}`) {
		t.Errorf("the answer: %s", answer)
	}
}

// TestWaitAgentDoesNotAwaitItsCaller: a `subdash mcp` run inside a
// submission acts for that submission's agent, which runs while it waits:
// its wait_agent awaits the agent's running children, not the agent
// itself, nor a child that ended.
func TestWaitAgentDoesNotAwaitItsCaller(t *testing.T) {
	s := hostkit.Supervisor(t, gateCommand, hostkit.MaxAgentsOf(4))
	g := gates(t.TempDir())
	defer g.open(t, "lead")
	defer g.open(t, "x")
	ctx := t.Context()
	lead, err := s.SpawnAgent(ctx, proto.SpawnRequest{Message: g.until("lead"), TaskName: "lead"})
	if err != nil {
		t.Fatal(err)
	}
	under := proto.WithCaller(ctx, proto.Caller{AgentID: lead.AgentID})
	x, err := s.SpawnAgent(under, proto.SpawnRequest{Message: g.until("x"), TaskName: "x"})
	if err != nil {
		t.Fatal(err)
	}
	done, err := s.SpawnAgent(under, proto.SpawnRequest{Message: "at once", TaskName: "done"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.Wait(ctx, []string{done.AgentID}, nil); err != nil || res.Status[done.AgentID] != proto.StatusCompleted {
		t.Fatalf("the child that ends at once: %+v %v", res, err)
	}
	t.Setenv("SUBDASH_SUBMISSION_ID", lead.SubmissionID) // what the agent command's processes carry
	got := awaitedAgents(under, s)
	if want := map[string]string{x.AgentID: "/root/lead/x"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("awaited %v, want %v", got, want)
	}
}
