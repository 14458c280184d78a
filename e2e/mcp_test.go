package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

func TestMCPToolsOverStdio(t *testing.T) {
	w := newWorkspace(t)
	cs, _, stderr := startMCP(t, nil, append([]string{"--command", e2eCommand, "--max-agents", "2", "--grace", "200ms"}, w.flags()...)...)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]string{}
	for _, tool := range tools.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		schemas[tool.Name] = string(b)
		props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		for name, p := range props {
			if p.(map[string]any)["description"] == nil {
				t.Errorf("%s.%s has no description", tool.Name, name)
			}
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range schemas {
			if !yield(n) {
				return
			}
		}
	})
	if want := []string{"answer_question", "close_agent", "list_agents", "resume_agent", "send_input", "spawn_agent", "wait"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	for tool, want := range map[string]string{
		"spawn_agent": `"required":["message"]`, "send_input": `"required":["id","message"]`,
		"resume_agent": `"required":["id"]`, "close_agent": `"required":["id"]`, "wait": `"required":["ids"]`,
	} {
		if !strings.Contains(schemas[tool], want) {
			t.Errorf("%s input schema %s lacks %s", tool, schemas[tool], want)
		}
	}
	for tool, want := range map[string]string{
		"send_input": `"interrupt":{"description":"If true`, "wait": `"timeout_ms":{"description":"How long to wait, in milliseconds.`,
	} {
		if !strings.Contains(schemas[tool], want) {
			t.Errorf("%s input schema %s lacks %s", tool, schemas[tool], want)
		}
	}
	// timeout_ms may be null (the default), which models often send.
	for _, want := range []string{`"type":"boolean"`, `"type":["integer","null"]`, `"type":"array"`} {
		if !strings.Contains(schemas["send_input"]+schemas["wait"], want) {
			t.Errorf("schemas lack %s: %s %s", want, schemas["send_input"], schemas["wait"])
		}
	}

	// Two agents, the limit, send with and without interrupt, wait.
	var a, b proto.SpawnResult
	toolOK(t, cs, "spawn_agent", map[string]any{"message": "sleep a"}, &a)
	toolOK(t, cs, "spawn_agent", map[string]any{"message": "sleep b"}, &b)
	toolFails(t, cs, "spawn_agent", map[string]any{"message": "third"}, "subagent concurrency limit reached (2)")
	toolFails(t, cs, "send_input", map[string]any{"id": a.AgentID, "message": "first"}, "agent "+a.AgentID+" is busy; set interrupt=true to cancel current submission")
	var sent proto.SendResult
	toolOK(t, cs, "send_input", map[string]any{"id": a.AgentID, "message": "first", "interrupt": true}, &sent)
	if sent.Status != "running" || sent.SubmissionID == a.SubmissionID {
		t.Fatalf("send with interrupt = %+v", sent)
	}
	var wr proto.WaitResult
	toolOK(t, cs, "wait", map[string]any{"ids": []string{a.AgentID, b.AgentID}, "timeout_ms": 300000}, &wr)
	if wr.TimedOut || len(wr.Status) != 1 || wr.Status[a.AgentID] != "completed" || *wr.Details[a.AgentID].LastOutput != "got: first" {
		t.Fatalf("wait = %+v", wr)
	}
	toolOK(t, cs, "send_input", map[string]any{"id": b.AgentID, "message": "second", "interrupt": true}, &sent)
	toolOK(t, cs, "wait", map[string]any{"ids": []string{b.AgentID}}, &wr)
	if *wr.Details[b.AgentID].LastOutput != "got: second" {
		t.Fatalf("wait after send = %+v", wr)
	}

	// close, resume.
	var st proto.StatusResult
	toolOK(t, cs, "close_agent", map[string]any{"id": a.AgentID}, &st)
	if st.Status != "closed" {
		t.Fatalf("close = %+v", st)
	}
	toolFails(t, cs, "send_input", map[string]any{"id": a.AgentID, "message": "x"}, "agent "+a.AgentID+" is closed; run resume_agent first")
	toolOK(t, cs, "resume_agent", map[string]any{"id": a.AgentID}, &st)
	if st.Status != "completed" {
		t.Fatalf("resume = %+v", st)
	}

	// Every error of SPEC §3 as a tool result with isError.
	toolFails(t, cs, "spawn_agent", map[string]any{"message": " "}, "message must not be empty")
	toolFails(t, cs, "send_input", map[string]any{"id": a.AgentID, "message": ""}, "message must not be empty")
	toolFails(t, cs, "send_input", map[string]any{"id": "nope", "message": "x"}, "agent not found: nope")
	toolFails(t, cs, "resume_agent", map[string]any{"id": "nope"}, "agent not found: nope")
	toolFails(t, cs, "close_agent", map[string]any{"id": "nope"}, "agent not found: nope")
	toolFails(t, cs, "wait", map[string]any{"ids": []string{}}, "ids must not be empty")
	toolFails(t, cs, "wait", map[string]any{"ids": []string{"x"}, "timeout_ms": 0}, "timeout_ms must be greater than zero")
	toolOK(t, cs, "wait", map[string]any{"ids": []string{"ghost"}}, &wr)
	if wr.Status["ghost"] != "not_found" || wr.Details["ghost"].LastOutput != nil {
		t.Fatalf("wait for an unknown id = %+v", wr)
	}

	// Shell syntax in a message reaches the child's stdin literally.
	marker := filepath.Join(w.base, "pwned")
	message := fmt.Sprintf("$(touch %s); ; | && `touch %s`", marker, marker)
	var c proto.SpawnResult
	toolOK(t, cs, "spawn_agent", map[string]any{"message": message}, &c)
	toolOK(t, cs, "wait", map[string]any{"ids": []string{c.AgentID}}, &wr)
	if got := *wr.Details[c.AgentID].LastOutput; got != "got: "+message {
		t.Fatalf("the child got %q", got)
	}
	if _, err := os.Lstat(marker); !os.IsNotExist(err) {
		t.Fatalf("%s exists: the message was executed", marker)
	}

	var list struct{ Agents []proto.Summary }
	toolOK(t, cs, "list_agents", map[string]any{}, &list)
	if len(list.Agents) != 3 || list.Agents[0].AgentID != a.AgentID || list.Agents[2].AgentID != c.AgentID {
		t.Fatalf("list_agents = %+v", list)
	}
	// With no dashboard serving, subdash mcp serves the socket itself.
	if out := ctlOK(t, w, nil, "list"); !strings.Contains(out, b.AgentID) {
		t.Fatalf("ctl list against subdash mcp: %q", out)
	}
	if !strings.Contains(stderr.String(), "supervising agents here") {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestMCPListsNoToolsWhenCollabToolsAreOff(t *testing.T) {
	w := newWorkspace(t)
	cs, _, _ := startMCP(t, []string{"MEMO_ENABLE_COLLAB_TOOLS=0"}, w.flags()...)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 0 {
		t.Fatalf("tools = %+v, %v; want none", res, err)
	}
}

func TestMCPDrivesTheSubdashServingItsDirectory(t *testing.T) {
	w := newWorkspace(t)
	serve := startServe(t, w)
	cs, _, stderr := startMCP(t, nil, append([]string{"--command", "false"}, w.flags()...)...)
	var sp proto.SpawnResult
	toolOK(t, cs, "spawn_agent", map[string]any{"message": "through mcp"}, &sp)
	var wr proto.WaitResult
	toolOK(t, cs, "wait", map[string]any{"ids": []string{sp.AgentID}}, &wr)
	if *wr.Details[sp.AgentID].LastOutput != "got: through mcp" {
		t.Fatalf("wait = %+v (ran the serve's agent command?)", wr)
	}
	if out := ctlOK(t, w, nil, "list"); !strings.Contains(out, sp.AgentID) {
		t.Fatalf("the serving subdash does not list the agent: %q", out)
	}
	if want := fmt.Sprintf("driving the subdash (pid %d) that serves %s", serve.cmd.Process.Pid, w.dir); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
}

// TestMCPStdoutCarriesOnlyProtocol speaks raw JSON-RPC to subdash mcp,
// sends a line that is not JSON (answered with a parse error, the session
// goes on), spawns an agent that would run for a minute, closes stdin, and checks
// that every line on stdout is a protocol message, that the process exits
// cleanly, that the agent's process group is gone and the socket removed.
func TestMCPStdoutCarriesOnlyProtocol(t *testing.T) {
	w := newWorkspace(t)
	cmd := exec.Command(binPath, append([]string{"mcp", "--command", e2eCommand, "--grace", "200ms"}, w.flags()...)...)
	cmd.Env = testEnv()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() //nolint:errcheck // cleanup: the server may have exited already
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`this is junk`, // answered with a parse error; the session goes on
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"spawn_agent","arguments":{"message":"sleep"}}}`,
	} {
		if _, err := io.WriteString(stdin, m+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	var agentID string
	lines, parseErrors, pid := 0, 0, 0
	for sc.Scan() {
		lines++
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      int             `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Fatalf("stdout line %d is not a protocol message: %q", lines, sc.Text())
		}
		if msg.Error != nil && msg.Error.Code == -32700 && msg.ID == 0 {
			parseErrors++
		}
		if msg.ID == 3 {
			var res struct {
				StructuredContent proto.SpawnResult `json:"structuredContent"`
			}
			_ = json.Unmarshal(msg.Result, &res)
			agentID = res.StructuredContent.AgentID
			if agentID != "" {
				// The agent is running (it wrote its pid) before the
				// client leaves; otherwise the shutdown could stop it
				// before it says which group it is.
				pid = readPID(t, w, agentID)
			}
			stdin.Close() //nolint:errcheck // the client leaves: the server's exit is what the test checks
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("subdash mcp exited with %v", err)
	}
	if agentID == "" || lines != 4 || parseErrors != 1 {
		t.Fatalf("%d lines (%d parse errors), agent %q; want 3 answers, a parse error and a spawned agent", lines, parseErrors, agentID)
	}
	if !groupGone(pid) {
		t.Errorf("the agent's process group %d outlived subdash mcp", pid)
	}
	if _, err := os.Lstat(w.socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
}

// TestDashboardShowsAgentSpawnedThroughMCP runs the dashboard in tmux and
// spawns an agent through `subdash mcp` for the same directory: the
// dashboard's table shows it (the first 8 characters of its id and its
// message).
func TestDashboardShowsAgentSpawnedThroughMCP(t *testing.T) {
	d := startDash(t, 160, 40, nil, "--command", e2eCommand)
	d.waitServing()
	cs, _, _ := startMCP(t, nil, "--dir", d.dir, "--state-dir", d.state, "--socket", d.socket)
	var sp proto.SpawnResult
	toolOK(t, cs, "spawn_agent", map[string]any{"message": "hello from mcp"}, &sp)
	d.waitText(sp.AgentID[:8], "hello from mcp")
}
