package mcpserver

import (
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

func TestEveryToolOnASupervisorOfThisProcess(t *testing.T) {
	cs := connect(t, One(newSupervisor(t, 3)))
	long := proto.MaxWaitTimeoutMS

	var a, b proto.SpawnResult
	callOK(t, cs, ToolSpawn, map[string]any{"message": "first task"}, &a)
	callOK(t, cs, ToolSpawn, map[string]any{"message": "sleep long"}, &b)
	if a.Status != proto.StatusRunning || a.LastMessage != "first task" || a.SubmissionID == "" {
		t.Fatalf("spawn = %+v", a)
	}
	var w proto.WaitResult
	callOK(t, cs, ToolWait, map[string]any{"ids": []string{a.AgentID, b.AgentID}, "timeout_ms": long}, &w)
	if w.TimedOut || len(w.Status) != 1 || w.Status[a.AgentID] != proto.StatusCompleted || *w.Details[a.AgentID].LastOutput != "got: first task" {
		t.Fatalf("wait = %+v", w)
	}

	// send without interrupt to a running agent: busy; with interrupt: runs.
	text, isErr := call(t, cs, ToolSend, map[string]any{"id": b.AgentID, "message": "x"})
	if !isErr || text != "agent "+b.AgentID+" is busy; set interrupt=true to cancel current submission" {
		t.Fatalf("send to a running agent: %q %v", text, isErr)
	}
	var sent proto.SendResult
	callOK(t, cs, ToolSend, map[string]any{"id": b.AgentID, "message": "second", "interrupt": true}, &sent)
	if sent.Status != proto.StatusRunning || sent.SubmissionID == b.SubmissionID {
		t.Fatalf("send with interrupt = %+v", sent)
	}
	callOK(t, cs, ToolWait, map[string]any{"ids": []string{b.AgentID}, "timeout_ms": long}, &w)
	if w.Status[b.AgentID] != proto.StatusCompleted || *w.Details[b.AgentID].LastOutput != "got: second" {
		t.Fatalf("wait after send = %+v", w)
	}
	callOK(t, cs, ToolSend, map[string]any{"id": a.AgentID, "message": "again", "interrupt": false}, &sent)

	// close, send to closed, resume.
	var st proto.StatusResult
	callOK(t, cs, ToolClose, map[string]any{"id": b.AgentID}, &st)
	if st.Status != proto.StatusClosed {
		t.Fatalf("close = %+v", st)
	}
	text, isErr = call(t, cs, ToolSend, map[string]any{"id": b.AgentID, "message": "x"})
	if !isErr || text != "agent "+b.AgentID+" is closed; run resume_agent first" {
		t.Fatalf("send to a closed agent: %q %v", text, isErr)
	}
	callOK(t, cs, ToolResume, map[string]any{"id": b.AgentID}, &st)
	if st.Status != proto.StatusCompleted {
		t.Fatalf("resume = %+v", st)
	}

	var list proto.ListResult
	callOK(t, cs, ToolList, map[string]any{}, &list)
	if len(list.Agents) != 2 || list.Agents[0].AgentID != a.AgentID || list.Agents[1].AgentID != b.AgentID {
		t.Fatalf("list = %+v", list)
	}
}

func TestToolErrorsCarryTheSpecMessage(t *testing.T) {
	cs := connect(t, One(newSupervisor(t, 1)))
	var running proto.SpawnResult
	callOK(t, cs, ToolSpawn, map[string]any{"message": "sleep"}, &running)
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		want  string
		exact bool // the spec's message, exactly; else a schema error naming the parameter
	}{
		{ToolSpawn, map[string]any{"message": "  "}, "message must not be empty", true},
		{ToolSpawn, map[string]any{"message": "another"}, "subagent concurrency limit reached (1)", true},
		{ToolSend, map[string]any{"id": "nope", "message": "x"}, "agent not found: nope", true},
		{ToolSend, map[string]any{"id": running.AgentID, "message": ""}, "message must not be empty", true},
		{ToolResume, map[string]any{"id": "nope"}, "agent not found: nope", true},
		{ToolClose, map[string]any{"id": "nope"}, "agent not found: nope", true},
		{ToolWait, map[string]any{"ids": []string{}}, "ids must not be empty", true},
		{ToolWait, map[string]any{"ids": []string{"x"}, "timeout_ms": 0}, "timeout_ms must be greater than zero", true},
		{ToolWait, map[string]any{"ids": []string{"x"}, "timeout_ms": -1}, "timeout_ms must be greater than zero", true},
		{ToolSpawn, map[string]any{}, "message", false},
		{ToolSend, map[string]any{"id": "x", "message": "y", "agent_id": "z"}, "agent_id", false},
		{ToolWait, map[string]any{"ids": []string{"x"}, "timeout_ms": "soon"}, "timeout_ms", false},
	} {
		text, isErr := call(t, cs, tc.tool, tc.args)
		if !isErr || (tc.exact && text != tc.want) || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: %q (isError %v), want an error %q", tc.tool, tc.args, text, isErr, tc.want)
		}
	}
	var w proto.WaitResult
	callOK(t, cs, ToolWait, map[string]any{"ids": []string{"ghost"}}, &w)
	if w.Status["ghost"] != proto.StatusNotFound || w.Details["ghost"].LastMessage != nil {
		t.Fatalf("wait for an unknown id = %+v", w)
	}
}
