package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// connectFamily is connect for the multi-agent family of session.
func connectFamily(t *testing.T, bs Backends, session string) *mcp.ClientSession {
	t.Helper()
	return connectTo(t, NewFamilyServer(FamilyMultiAgent, bs, "test", session))
}

// callText calls a tool of the family and returns its text contents and
// whether it failed.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) ([]string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if res.StructuredContent != nil {
		t.Errorf("%s: structured content %v; Memo's tools answer text only", name, res.StructuredContent)
	}
	var out []string
	for _, c := range res.Content {
		out = append(out, c.(*mcp.TextContent).Text)
	}
	return out, res.IsError
}

// TestMultiAgentToolsAreMemos: exactly the six tools, with Memo's strict
// schemas, property by property, and subdash's answer_question.
func TestMultiAgentToolsAreMemos(t *testing.T) {
	cs := connectFamily(t, One(newSupervisor(t, 4)), "s1")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	str := `{"type":"string"}`
	min1 := `{"type":"string","minLength":1}`
	obj := func(props, required string) string {
		r := ""
		if required != "" {
			r = `,"required":[` + required + `]`
		}
		return `{"type":"object"` + r + `,"additionalProperties":false,"properties":{` + props + `}}`
	}
	want := map[string]string{
		"spawn_agent":     obj(`"message":`+min1+`,"task_name":`+min1+`,"agent_type":`+str+`,"fork_turns":`+str, `"message","task_name"`),
		"send_message":    obj(`"target":`+min1+`,"message":`+min1, `"target","message"`),
		"followup_task":   obj(`"target":`+min1+`,"message":`+min1, `"target","message"`),
		"wait_agent":      obj(`"timeout_ms":{"type":"integer","exclusiveMinimum":0}`, ""),
		"interrupt_agent": obj(`"target":`+min1, `"target"`),
		"list_agents":     obj(`"path_prefix":`+min1, ""),
	}
	i := slices.IndexFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == ToolAnswer })
	if i < 0 {
		t.Fatalf("no %s tool", ToolAnswer)
	}
	res.Tools = slices.Delete(res.Tools, i, i+1)
	if len(res.Tools) != len(want) {
		t.Fatalf("%d tools, want 6", len(res.Tools))
	}
	for _, tool := range res.Tools {
		got, _ := json.Marshal(tool.InputSchema)
		var g, w any
		_ = json.Unmarshal(got, &g)
		if err := json.Unmarshal([]byte(want[tool.Name]), &w); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s schema %s\nwant %s", tool.Name, got, want[tool.Name])
		}
		if tool.OutputSchema != nil {
			t.Errorf("%s has an output schema; Memo's tools have none", tool.Name)
		}
	}
}

// TestMultiAgentOrchestration: an orchestrator spawns a child, waits for
// its end in its mailbox, lists it, holds a message for it and sends it a
// follow-up, which starts a turn with the held message first; results are
// Memo's JSON, indented by two spaces.
func TestMultiAgentOrchestration(t *testing.T) {
	s := newSupervisor(t, 4)
	cs := connectFamily(t, One(s), "s1")
	out, isErr := callText(t, cs, "spawn_agent", map[string]any{"message": "hello", "task_name": "review"})
	if isErr {
		t.Fatalf("spawn_agent: %q", out)
	}
	var ta proto.TreeAgent
	if err := json.Unmarshal([]byte(out[0]), &ta); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"agent_id\": \"" + ta.AgentID + "\",\n  \"agent_path\": \"/root/review\",\n  \"task_name\": \"review\",\n  \"status\": \"running\",\n  \"last_message\": null,\n  \"error\": null\n}"
	if len(out) != 1 || out[0] != want {
		t.Fatalf("spawn_agent's result %q\nwant %q", out, want)
	}
	out, _ = callText(t, cs, "wait_agent", map[string]any{"timeout_ms": 10000})
	end := "<agent_completion path=\"/root/review\" status=\"completed\">\ngot: hello\n</agent_completion>"
	if len(out) != 2 || out[0] != "{\n  \"message\": \"Wait completed.\",\n  \"timed_out\": false\n}" || out[1] != end {
		t.Fatalf("wait_agent: %q", out)
	}
	out, _ = callText(t, cs, "list_agents", map[string]any{})
	if !strings.Contains(out[0], `"status": "completed",`+"\n"+`      "last_message": "got: hello",`) {
		t.Fatalf("list_agents: %s", out[0])
	}
	out, _ = callText(t, cs, "send_message", map[string]any{"target": "review", "message": "note <this>"})
	if out[0] != "{\n  \"target\": \"/root/review\",\n  \"queued\": true\n}" {
		t.Fatalf("send_message: %q", out)
	}
	a, _ := s.Agent(ta.AgentID)
	if len(a.Submissions) != 1 || a.QueuedMessage != "note <this>" {
		t.Fatalf("a held message started a submission (%d) or is not held (%q)", len(a.Submissions), a.QueuedMessage)
	}
	out, _ = callText(t, cs, "followup_task", map[string]any{"target": "/root/review", "message": "continue"})
	if out[0] != "{\n  \"target\": \"/root/review\",\n  \"triggered\": true\n}" {
		t.Fatalf("followup_task: %q", out)
	}
	out, _ = callText(t, cs, "wait_agent", map[string]any{})
	if len(out) != 2 || !strings.Contains(out[1], "\ngot: note <this>\n") {
		t.Fatalf("second wait: %q (the wait before must be acknowledged: its item not again)", out)
	}
	if m, err := s.Message(context.Background(), ta.AgentID, 2); err != nil || m != "note <this>\n\ncontinue" {
		t.Fatalf("the follow-up's submission: %q %v", m, err)
	}
}

// TestMultiAgentErrors: bad input gets Memo's texts, as failed results,
// and changes nothing.
func TestMultiAgentErrors(t *testing.T) {
	s := newSupervisor(t, 1)
	cs := connectFamily(t, One(s), "s1")
	callText(t, cs, "spawn_agent", map[string]any{"message": "sleep", "task_name": "busy"})
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"spawn_agent", map[string]any{"message": "x", "task_name": "bad name"}, "spawn_agent failed: task_name must contain only letters, numbers, underscores, or hyphens"},
		{"spawn_agent", map[string]any{"message": "x", "task_name": strings.Repeat("a", 257)}, "spawn_agent failed: task_name is 257 bytes, longer than the limit of 256; use a shorter name"},
		{"spawn_agent", map[string]any{"message": "  ", "task_name": "a"}, "spawn_agent failed: message must not be empty"},
		{"spawn_agent", map[string]any{"message": "x", "task_name": "a", "fork_turns": "all"}, "spawn_agent failed: forking is not supported; put the context in message"},
		{"spawn_agent", map[string]any{"message": "x", "task_name": "other"}, "spawn_agent failed: subagent concurrency limit reached"},
		{"spawn_agent", map[string]any{"message": "x", "task_name": "busy"}, "spawn_agent failed: agent path already exists: /root/busy (held by agent "},
		{"send_message", map[string]any{"target": "nobody", "message": "x"}, "send_message failed: agent not found: nobody"},
		{"followup_task", map[string]any{"target": "/root", "message": "x"}, "followup_task failed: follow-up tasks cannot target the root agent"},
		{"interrupt_agent", map[string]any{"target": "/root"}, "interrupt_agent failed: root is not a spawned agent"},
		{"wait_agent", map[string]any{"timeout_ms": 5000}, "wait_agent failed: timeout_ms must be between 10000 and 300000"},
		{"wait_agent", map[string]any{"timeout_ms": 300001}, "wait_agent failed: timeout_ms must be between 10000 and 300000"},
	} {
		out, isErr := callText(t, cs, c.tool, c.args)
		if !isErr || len(out) != 1 || !strings.HasPrefix(out[0], c.want) {
			t.Errorf("%s %v: %q (error %v), want %q", c.tool, c.args, out, isErr, c.want)
		}
	}
	// The schemas are strict: an unknown parameter is refused.
	if out, isErr := callText(t, cs, "list_agents", map[string]any{"prefix": "/root"}); !isErr {
		t.Errorf("list_agents with an unknown parameter: %q", out)
	}
	if n := len(s.Agents()); n != 1 {
		t.Errorf("%d agents after the refused calls, want 1", n)
	}
}

// TestMultiAgentFollowupWaitsForASlot: a follow-up to an idle agent at the
// concurrency limit is pending_init and starts when a slot frees; an
// interrupt of an idle agent changes nothing; a person's interrupt of a
// child reaches its parent's wait.
func TestMultiAgentFollowupWaitsForASlot(t *testing.T) {
	s := newSupervisor(t, 1)
	cs := connectFamily(t, One(s), "s1")
	callText(t, cs, "spawn_agent", map[string]any{"message": "done", "task_name": "idle"})
	callText(t, cs, "wait_agent", map[string]any{})
	if out, _ := callText(t, cs, "interrupt_agent", map[string]any{"target": "idle"}); !strings.Contains(out[0], `"previous_status": "completed"`) {
		t.Fatalf("interrupt of an idle agent: %q", out)
	}
	res, err := s.Spawn(context.Background(), "sleep") // a person's agent takes the one slot
	if err != nil {
		t.Fatal(err)
	}
	if out, isErr := callText(t, cs, "followup_task", map[string]any{"target": "idle", "message": "again"}); isErr {
		t.Fatalf("followup at the limit: %q", out)
	}
	out, _ := callText(t, cs, "list_agents", map[string]any{"path_prefix": "/root/idle"})
	if !strings.Contains(out[0], `"status": "pending_init"`) {
		t.Fatalf("list at the limit: %s", out[0])
	}
	if _, err := s.Close(context.Background(), res.AgentID); err != nil {
		t.Fatal(err)
	}
	out, _ = callText(t, cs, "wait_agent", map[string]any{})
	if len(out) != 2 || out[1] != "<agent_completion path=\"/root/idle\" status=\"completed\">\ngot: again\n</agent_completion>" {
		t.Fatalf("the follow-up after the slot freed: %q", out)
	}
	// A person interrupts a running child: the orchestrator learns it.
	callText(t, cs, "followup_task", map[string]any{"target": "idle", "message": "sleep now"})
	testkit.Eventually(t, 10*time.Second, "the follow-up runs", func() bool {
		a, _ := s.Agent("/root/idle")
		return a.Running()
	})
	if _, err := s.Interrupt(context.Background(), "/root/idle"); err != nil {
		t.Fatal(err)
	}
	out, _ = callText(t, cs, "wait_agent", map[string]any{})
	if len(out) != 2 || !strings.HasPrefix(out[1], "<agent_completion path=\"/root/idle\" status=\"interrupted\">\ninterrupted by a person") {
		t.Fatalf("after a person's interrupt: %q", out)
	}
}

// TestMultiAgentSessionsKeepTheirMailboxes: two orchestrators on one host
// do not take each other's items.
func TestMultiAgentSessionsKeepTheirMailboxes(t *testing.T) {
	s := newSupervisor(t, 4)
	one, two := connectFamily(t, One(s), "one"), connectFamily(t, One(s), "two")
	callText(t, one, "spawn_agent", map[string]any{"message": "first", "task_name": "a"})
	callText(t, two, "spawn_agent", map[string]any{"message": "second", "task_name": "b"})
	for cs, want := range map[*mcp.ClientSession]string{one: "got: first", two: "got: second"} {
		out, _ := callText(t, cs, "wait_agent", map[string]any{})
		if len(out) != 2 || !strings.Contains(out[1], want) {
			t.Errorf("wait: %q, want only %q", out, want)
		}
	}
	out, _ := callText(t, one, "wait_agent", map[string]any{"timeout_ms": 10000})
	if len(out) != 1 || out[0] != "{\n  \"message\": \"Wait timed out.\",\n  \"timed_out\": true\n}" {
		t.Errorf("an empty mailbox: %q", out)
	}
}

// TestRunMultiAgentDrivesTheHost: `subdash mcp --tools multi-agent`
// driving the subdash that serves its directory keeps its root mailbox on
// that host, named by its session (SUBDASH_MCP_SESSION here).
func TestRunMultiAgentDrivesTheHost(t *testing.T) {
	t.Setenv("MEMO_ENABLE_COLLAB_TOOLS", "1")
	t.Setenv("SUBDASH_MCP_SESSION", "run-test")
	o := options(t, testCommand)
	s, quit := serveDirectory(t, o)
	defer quit()
	cs, stop := startFamily(t, o, FamilyMultiAgent)
	// the host refuses a task name too long, as its own spawns
	if out, isErr := callText(t, cs, "spawn_agent", map[string]any{"message": "remote", "task_name": strings.Repeat("n", 1<<20)}); !isErr ||
		!strings.Contains(out[0], "task_name is 1048576 bytes, longer than the limit of 256") {
		t.Fatalf("spawn_agent with a 1 MiB task name: %.200q", out)
	}
	out, isErr := callText(t, cs, "spawn_agent", map[string]any{"message": "remote", "task_name": "far"})
	if isErr || !strings.Contains(out[0], `"agent_path": "/root/far"`) {
		t.Fatalf("spawn_agent: %q", out)
	}
	out, _ = callText(t, cs, "wait_agent", map[string]any{"timeout_ms": 300000})
	if len(out) != 2 || out[1] != "<agent_completion path=\"/root/far\" status=\"completed\">\ngot: remote\n</agent_completion>" {
		t.Fatalf("wait_agent over the socket: %q", out)
	}
	if ls, _ := s.List(t.Context()); len(ls.Agents) != 1 || ls.Agents[0].AgentPath != "/root/far" {
		t.Fatalf("the serving host has %+v", ls.Agents)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
}
