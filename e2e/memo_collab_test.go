package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// The TestMemoCollab… tests replay the scenarios of Memo's own tests of
// its collab tools through `subdash mcp` over stdio, the real binary in a
// real MCP session, with a child of the contract of Memo's fake subagent
// (testdata/memochild/child: sleep:N, hang, fail, echo:X, else ok:<msg>)
// as MEMO_SUBAGENT_COMMAND. Each names the Memo file and test whose
// expectation it checks:
//
//   - the seed family: packages/tools/src/tools/collab.test.ts as it was
//     before Memo's commit 1fb12f1 (not in ../shared/tools/memo's
//     tarball);
//   - the multi-agent family: Memo 0.9.1 (commit 52cdec1, in the
//     tarball), packages/core/src/tools/tools/collab.test.ts and, beside
//     it in packages/core/src/agent/, registry.test.ts and status.test.ts.
//
// Where subdash differs from Memo on purpose, the test says so.

// memoChild is the fake subagent of Memo's collab tests.
func memoChild() string { return filepath.Join(repoRoot, "testdata", "memochild", "child") }

// startMemoCollab starts `subdash mcp --tools family` in a workspace of its
// own with memoChild as MEMO_SUBAGENT_COMMAND and MEMO_SUBAGENT_MAX_AGENTS
// maxAgents, as Memo's tests set them, and returns its session and the
// workspace (the children's working folder, where they keep their turns).
func startMemoCollab(t *testing.T, family string, maxAgents string) (*mcpsdk.ClientSession, workspace) {
	t.Helper()
	w := newWorkspace(t)
	cs, _, _ := startMCP(t, []string{"MEMO_SUBAGENT_COMMAND=" + memoChild(), "MEMO_SUBAGENT_MAX_AGENTS=" + maxAgents},
		append([]string{"--tools", family, "--grace", "200ms"}, w.flags()...)...)
	return cs, w
}

// memoTurns returns the messages of the agent's turns so far, as the
// child recorded them (Memo's tests count their calls to the model).
func memoTurns(t *testing.T, w workspace, agentID string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, agentID+".turns"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	turns := strings.Split(string(b), "--\n")
	return turns[:len(turns)-1]
}

// TestMemoCollabSeedSpawnWait checks collab.test.ts (seed) "spawn + wait
// reaches completed status and returns final map payload": spawn_agent
// answers running with an agent_id; wait answers timed_out false and the
// agent completed, its last_output the child's answer.
func TestMemoCollabSeedSpawnWait(t *testing.T) {
	t.Parallel()
	cs, _ := startMemoCollab(t, "seed", "4")
	var sp proto.SpawnResult
	toolOK(t, cs, "spawn_agent", map[string]any{"message": "echo:hello"}, &sp)
	if sp.Status != proto.StatusRunning || sp.AgentID == "" {
		t.Fatalf("spawn_agent = %+v, want running with an agent_id", sp)
	}
	var wr proto.WaitResult
	toolOK(t, cs, "wait", map[string]any{"ids": []string{sp.AgentID}, "timeout_ms": 10000}, &wr)
	if d := wr.Details[sp.AgentID]; wr.TimedOut || wr.Status[sp.AgentID] != proto.StatusCompleted || d.LastOutput == nil || *d.LastOutput != "hello" {
		t.Fatalf("wait = %+v, want completed with last_output hello", wr)
	}
}

// TestMemoCollabSeedBusySend checks collab.test.ts (seed) "send_input
// requires interrupt when agent is busy and supports interruption": a
// send to a running agent is an error saying to set interrupt=true; with
// interrupt it answers running, and the new submission completes.
func TestMemoCollabSeedBusySend(t *testing.T) {
	t.Parallel()
	cs, _ := startMemoCollab(t, "seed", "4")
	var sp proto.SpawnResult
	toolOK(t, cs, "spawn_agent", map[string]any{"message": "sleep:5000"}, &sp)
	if text, isErr := callTool(t, cs, "send_input", map[string]any{"id": sp.AgentID, "message": "echo:next"}); !isErr || !strings.Contains(text, "set interrupt=true") {
		t.Fatalf("send to a busy agent: %q (error %v), want an error saying set interrupt=true", text, isErr)
	}
	var sent proto.SendResult
	toolOK(t, cs, "send_input", map[string]any{"id": sp.AgentID, "message": "echo:next", "interrupt": true}, &sent)
	if sent.Status != proto.StatusRunning {
		t.Fatalf("send with interrupt = %+v, want running", sent)
	}
	var wr proto.WaitResult
	toolOK(t, cs, "wait", map[string]any{"ids": []string{sp.AgentID}, "timeout_ms": 10000}, &wr)
	if wr.TimedOut || wr.Status[sp.AgentID] != proto.StatusCompleted || *wr.Details[sp.AgentID].LastOutput != "next" {
		t.Fatalf("wait = %+v, want the interrupting submission completed", wr)
	}
}

// TestMemoCollabSeedCloseResume checks collab.test.ts (seed) "close_agent
// marks closed and resume_agent restores pre-close status": close answers
// closed; a send to the closed agent is an error naming resume_agent;
// resume answers the status before the close (completed); a send then
// works.
func TestMemoCollabSeedCloseResume(t *testing.T) {
	t.Parallel()
	cs, _ := startMemoCollab(t, "seed", "4")
	var sp proto.SpawnResult
	toolOK(t, cs, "spawn_agent", map[string]any{"message": "echo:first"}, &sp)
	var wr proto.WaitResult
	toolOK(t, cs, "wait", map[string]any{"ids": []string{sp.AgentID}, "timeout_ms": 10000}, &wr)
	var st proto.StatusResult
	toolOK(t, cs, "close_agent", map[string]any{"id": sp.AgentID}, &st)
	if st.Status != proto.StatusClosed {
		t.Fatalf("close_agent = %+v, want closed", st)
	}
	if text, isErr := callTool(t, cs, "send_input", map[string]any{"id": sp.AgentID, "message": "echo:second"}); !isErr || !strings.Contains(text, "resume_agent") {
		t.Fatalf("send to a closed agent: %q (error %v), want an error naming resume_agent", text, isErr)
	}
	toolOK(t, cs, "resume_agent", map[string]any{"id": sp.AgentID}, &st)
	if st.Status != proto.StatusCompleted {
		t.Fatalf("resume_agent = %+v, want completed (the status before the close)", st)
	}
	var sent proto.SendResult
	toolOK(t, cs, "send_input", map[string]any{"id": sp.AgentID, "message": "echo:second"}, &sent)
}

// TestMemoCollabSeedWaitUnknown checks collab.test.ts (seed) "wait returns
// not_found immediately for unknown agents": timed_out false, the id
// not_found, well before the timeout.
func TestMemoCollabSeedWaitUnknown(t *testing.T) {
	t.Parallel()
	cs, _ := startMemoCollab(t, "seed", "4")
	start := time.Now()
	var wr proto.WaitResult
	toolOK(t, cs, "wait", map[string]any{"ids": []string{"missing-agent-id"}, "timeout_ms": 10000}, &wr)
	if took := time.Since(start); wr.TimedOut || wr.Status["missing-agent-id"] != "not_found" || took > 5*time.Second {
		t.Fatalf("wait for an unknown id = %+v after %v, want not_found at once", wr, took)
	}
}

// TestMemoCollabSeedLimit checks collab.test.ts (seed) "spawn_agent
// respects MEMO_SUBAGENT_MAX_AGENTS limit": with 1, a second spawn while
// the first runs is an error naming the concurrency limit.
func TestMemoCollabSeedLimit(t *testing.T) {
	t.Parallel()
	cs, _ := startMemoCollab(t, "seed", "1")
	var sp proto.SpawnResult
	toolOK(t, cs, "spawn_agent", map[string]any{"message": "sleep:5000"}, &sp)
	if text, isErr := callTool(t, cs, "spawn_agent", map[string]any{"message": "echo:blocked"}); !isErr || !strings.Contains(text, "concurrency limit") {
		t.Fatalf("second spawn at MEMO_SUBAGENT_MAX_AGENTS=1: %q (error %v), want the concurrency limit", text, isErr)
	}
}

// TestMemoCollabSeedErrors checks collab.test.ts (seed) "wait validates
// timeout and mutating tools report missing agents": timeout_ms 0 is an
// error naming timeout_ms; send_input, close_agent and resume_agent of a
// missing id are errors, send's saying "agent not found".
func TestMemoCollabSeedErrors(t *testing.T) {
	t.Parallel()
	cs, _ := startMemoCollab(t, "seed", "4")
	if text, isErr := callTool(t, cs, "wait", map[string]any{"ids": []string{"missing"}, "timeout_ms": 0}); !isErr || !strings.Contains(text, "timeout_ms") {
		t.Errorf("wait with timeout_ms 0: %q (error %v), want an error naming timeout_ms", text, isErr)
	}
	if text, isErr := callTool(t, cs, "send_input", map[string]any{"id": "missing", "message": "x"}); !isErr || !strings.Contains(text, "agent not found") {
		t.Errorf("send_input to a missing id: %q (error %v), want agent not found", text, isErr)
	}
	for _, tool := range []string{"close_agent", "resume_agent"} {
		if text, isErr := callTool(t, cs, tool, map[string]any{"id": "missing"}); !isErr {
			t.Errorf("%s of a missing id: %q, want an error", tool, text)
		}
	}
}

// memoCall calls a tool of the multi-agent family and returns its text
// contents (the result's JSON, then a wait's mailbox items) and whether it
// failed; a protocol error fails the test.
func memoCall(t *testing.T, cs *mcpsdk.ClientSession, tool string, args map[string]any) ([]string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var texts []string
	for _, c := range res.Content {
		texts = append(texts, c.(*mcpsdk.TextContent).Text)
	}
	if len(texts) == 0 {
		t.Fatalf("%s: no content", tool)
	}
	return texts, res.IsError
}

// memoOK calls a tool that must succeed, decodes its result's JSON into
// out (when not nil) and returns the mailbox items after it.
func memoOK(t *testing.T, cs *mcpsdk.ClientSession, tool string, args map[string]any, out any) []string {
	t.Helper()
	texts, isErr := memoCall(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s %v: %q", tool, args, texts)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(texts[0]), out); err != nil {
			t.Fatalf("%s: %v in %q", tool, err, texts[0])
		}
	}
	return texts[1:]
}

// memoFails calls a tool that must fail with a text starting with want.
func memoFails(t *testing.T, cs *mcpsdk.ClientSession, tool string, args map[string]any, want string) {
	t.Helper()
	if texts, isErr := memoCall(t, cs, tool, args); !isErr || len(texts) != 1 || !strings.HasPrefix(texts[0], want) {
		t.Errorf("%s %v: %q (error %v), want an error %q", tool, args, texts, isErr, want)
	}
}

// memoWaitFor calls wait_agent until an item holding want comes and
// returns the items up to it; each wait acknowledges what it answered.
func memoWaitFor(t *testing.T, cs *mcpsdk.ClientSession, want string) []string {
	t.Helper()
	var items []string
	for range 3 {
		var wr struct {
			TimedOut bool `json:"timed_out"`
		}
		got := memoOK(t, cs, "wait_agent", map[string]any{"timeout_ms": 10000}, &wr)
		items = append(items, got...)
		for _, it := range got {
			if strings.Contains(it, want) {
				return items
			}
		}
	}
	t.Fatalf("no mailbox item holding %q in three waits: %q", want, items)
	return nil
}

// memoAgent is an agent as list_agents answers it.
type memoAgent struct {
	AgentID     string  `json:"agent_id"`
	AgentPath   string  `json:"agent_path"`
	TaskName    string  `json:"task_name"`
	Status      string  `json:"status"`
	LastMessage *string `json:"last_message"`
}

// memoList returns list_agents' agents.
func memoList(t *testing.T, cs *mcpsdk.ClientSession) []memoAgent {
	t.Helper()
	var l struct{ Agents []memoAgent }
	memoOK(t, cs, "list_agents", map[string]any{}, &l)
	return l.Agents
}

// memoStarted waits until the agent's child has read its message of turn
// n (1 for the first): Memo's tests wait so for the child's call to the
// model before they interrupt or follow up.
func memoStarted(t *testing.T, w workspace, agentID string, n int) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, "the child of "+agentID+" reads its message", func() bool {
		return len(memoTurns(t, w, agentID)) >= n
	})
}

// memoStatus polls list_agents until the agent at path has status want.
func memoStatus(t *testing.T, cs *mcpsdk.ClientSession, path, want string) memoAgent {
	t.Helper()
	return testkit.Poll(t, 10*time.Second, path+" "+want, func() (memoAgent, bool) {
		for _, a := range memoList(t, cs) {
			if a.AgentPath == path {
				return a, a.Status == want
			}
		}
		return memoAgent{}, false
	})
}

// TestMemoCollabTreeSpawnCompletes checks collab.test.ts "spawns a
// stateful child and delivers completion through the parent mailbox":
// spawn_agent with task_name review is /root/review; wait_agent answers
// timed_out false; list_agents has that one agent, completed; the caller's
// mailbox holds its agent_completion. And status.test.ts "derives
// lifecycle status from session events": running at the spawn, then
// completed with the answer as last_message.
//
// Differences on purpose: Memo forks its in-process history for
// fork_turns "all"; a subdash agent is a process of its own, so that
// spawn fails saying to put the context in the message, and the scenario
// goes on without fork_turns. Memo hands the mailbox items to the model's
// next request; an MCP server cannot, so they follow wait_agent's JSON
// (SPEC §14).
func TestMemoCollabTreeSpawnCompletes(t *testing.T) {
	t.Parallel()
	cs, _ := startMemoCollab(t, "multi-agent", "4")
	memoFails(t, cs, "spawn_agent", map[string]any{"task_name": "review", "message": "inspect this", "fork_turns": "all"},
		"spawn_agent failed: forking is not supported; put the context in message")
	var sp memoAgent
	memoOK(t, cs, "spawn_agent", map[string]any{"task_name": "review", "message": "inspect this"}, &sp)
	if sp.AgentPath != "/root/review" || sp.Status != "running" {
		t.Fatalf("spawn_agent = %+v, want /root/review running", sp)
	}
	var wr struct {
		TimedOut *bool `json:"timed_out"`
	}
	items := memoOK(t, cs, "wait_agent", map[string]any{"timeout_ms": 10000}, &wr)
	if wr.TimedOut == nil || *wr.TimedOut {
		t.Fatalf("wait_agent: timed_out %v, want false", wr.TimedOut)
	}
	if len(items) != 1 || items[0] != "<agent_completion path=\"/root/review\" status=\"completed\">\nok:inspect this\n</agent_completion>" {
		t.Fatalf("the caller's mailbox: %q, want the agent_completion of /root/review", items)
	}
	agents := memoList(t, cs)
	if len(agents) != 1 || agents[0].AgentPath != "/root/review" || agents[0].Status != "completed" || agents[0].LastMessage == nil || *agents[0].LastMessage != "ok:inspect this" {
		t.Fatalf("list_agents = %+v, want /root/review completed with its answer", agents)
	}
}

// TestMemoCollabTreeQueuedMessage checks collab.test.ts "queues messages
// without waking idle agents and folds them into a later follow-up":
// send_message to an idle agent starts no turn; followup_task does, and
// that second turn (of two) holds both the queued note and the follow-up.
func TestMemoCollabTreeQueuedMessage(t *testing.T) {
	t.Parallel()
	cs, w := startMemoCollab(t, "multi-agent", "4")
	var sp memoAgent
	memoOK(t, cs, "spawn_agent", map[string]any{"task_name": "worker", "message": "first"}, &sp)
	memoWaitFor(t, cs, `path="/root/worker" status="completed"`)
	memoOK(t, cs, "send_message", map[string]any{"target": "worker", "message": "queued note"}, nil)
	if a := memoStatus(t, cs, "/root/worker", "completed"); len(memoTurns(t, w, sp.AgentID)) != 1 {
		t.Fatalf("send_message woke the idle agent: %+v, turns %q", a, memoTurns(t, w, sp.AgentID))
	}
	memoOK(t, cs, "followup_task", map[string]any{"target": "worker", "message": "continue now"}, nil)
	memoWaitFor(t, cs, "continue now")
	turns := memoTurns(t, w, sp.AgentID)
	if len(turns) != 2 || !strings.Contains(turns[1], "queued note") || !strings.Contains(turns[1], "continue now") {
		t.Fatalf("turns %q, want two, the second holding the queued note and the follow-up", turns)
	}
}

// TestMemoCollabTreeLimit checks collab.test.ts "rejects a second running
// child when the execution limit is reached": at MEMO_SUBAGENT_MAX_AGENTS=1
// a second spawn while the first runs fails naming the concurrency limit.
// And registry.test.ts: "reserves paths atomically and rolls failed spawns
// back" (a second review is "already exists"; the refused spawn left no
// path behind, so it spawns once a slot frees) and "limits running turns
// independently of registered identities" (the completed first agent
// holds no slot). And status.test.ts's first state: a follow-up at the
// limit is pending_init until a slot frees.
func TestMemoCollabTreeLimit(t *testing.T) {
	t.Parallel()
	cs, _ := startMemoCollab(t, "multi-agent", "1")
	memoOK(t, cs, "spawn_agent", map[string]any{"task_name": "first", "message": "sleep:3000"}, nil)
	memoFails(t, cs, "spawn_agent", map[string]any{"task_name": "second", "message": "blocked"}, "spawn_agent failed: subagent concurrency limit reached")
	memoFails(t, cs, "spawn_agent", map[string]any{"task_name": "first", "message": "again"}, "spawn_agent failed: agent path already exists: /root/first")
	memoWaitFor(t, cs, `path="/root/first" status="completed"`)
	var second memoAgent
	memoOK(t, cs, "spawn_agent", map[string]any{"task_name": "second", "message": "hang"}, &second)
	if second.AgentPath != "/root/second" || second.Status != "running" {
		t.Fatalf("spawn after the first ended = %+v, want /root/second running", second)
	}
	memoOK(t, cs, "followup_task", map[string]any{"target": "first", "message": "later"}, nil)
	memoStatus(t, cs, "/root/first", "pending_init")
	memoOK(t, cs, "interrupt_agent", map[string]any{"target": "second"}, nil)
	memoWaitFor(t, cs, "ok:later")
}

// TestMemoCollabTreeRunningFollowup checks collab.test.ts "injects a
// running follow-up before the child turn can finish": a follow-up while
// the child runs gives it a second turn (two in all) holding the new
// requirement. Memo writes it into the running turn; Memo's fake child
// reads stdin to its end and takes no message while it runs, so subdash
// queues it for the end of the running submission (SPEC §14).
func TestMemoCollabTreeRunningFollowup(t *testing.T) {
	t.Parallel()
	cs, w := startMemoCollab(t, "multi-agent", "4")
	var sp memoAgent
	memoOK(t, cs, "spawn_agent", map[string]any{"task_name": "live", "message": "sleep:1500"}, &sp)
	memoStarted(t, w, sp.AgentID, 1)
	memoOK(t, cs, "followup_task", map[string]any{"target": "live", "message": "new requirement"}, nil)
	memoWaitFor(t, cs, "ok:new requirement")
	if turns := memoTurns(t, w, sp.AgentID); len(turns) != 2 || !strings.Contains(turns[1], "new requirement") {
		t.Fatalf("turns %q, want two, the second holding the new requirement", turns)
	}
}

// TestMemoCollabTreeInterrupt checks collab.test.ts "interrupts a turn and
// resumes the same child session with follow-up work": interrupt_agent of
// the running child answers previous_status running; a follow-up then
// runs a second turn to completion. And status.test.ts "keeps interrupted
// agents resumable": between the two the agent is interrupted, which is
// not final (a wait for the caller's mailbox gets no end of it).
func TestMemoCollabTreeInterrupt(t *testing.T) {
	t.Parallel()
	cs, w := startMemoCollab(t, "multi-agent", "4")
	var sp memoAgent
	memoOK(t, cs, "spawn_agent", map[string]any{"task_name": "recover", "message": "hang"}, &sp)
	memoStarted(t, w, sp.AgentID, 1)
	var in struct {
		AgentPath      string `json:"agent_path"`
		PreviousStatus string `json:"previous_status"`
	}
	memoOK(t, cs, "interrupt_agent", map[string]any{"target": "recover"}, &in)
	if in.PreviousStatus != "running" || in.AgentPath != "/root/recover" {
		t.Fatalf("interrupt_agent = %+v, want previous_status running", in)
	}
	memoStatus(t, cs, "/root/recover", "interrupted")
	memoOK(t, cs, "followup_task", map[string]any{"target": "recover", "message": "try again"}, nil)
	items := memoWaitFor(t, cs, "ok:try again")
	for _, it := range items {
		if strings.Contains(it, `status="interrupted"`) {
			t.Errorf("the caller's own interrupt reached its mailbox as an end: %q", it)
		}
	}
	if turns := memoTurns(t, w, sp.AgentID); len(turns) != 2 {
		t.Fatalf("turns %q, want two", turns)
	}
	memoStatus(t, cs, "/root/recover", "completed")
}

// TestMemoCollabTreeRefusals checks what Memo's tools refuse where Memo
// has no test of it: wait_agent's timeout_ms outside 10000–300000
// (collab.ts, waitAgentTool) and a follow-up to /root (agent/control.ts,
// sendMessage), each with Memo's text.
func TestMemoCollabTreeRefusals(t *testing.T) {
	t.Parallel()
	cs, _ := startMemoCollab(t, "multi-agent", "4")
	for _, ms := range []int{9999, 300001} {
		memoFails(t, cs, "wait_agent", map[string]any{"timeout_ms": ms}, "wait_agent failed: timeout_ms must be between 10000 and 300000")
	}
	memoFails(t, cs, "followup_task", map[string]any{"target": "/root", "message": "x"}, "followup_task failed: follow-up tasks cannot target the root agent")
}
