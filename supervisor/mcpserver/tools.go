package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/supervisor/proto"
)

// Tool names (SPEC §6), Memo's subagent tool family plus list_agents.
const (
	ToolSpawn  = "spawn_agent"
	ToolSend   = "send_input"
	ToolResume = "resume_agent"
	ToolWait   = "wait"
	ToolClose  = "close_agent"
	ToolList   = "list_agents"
	// ToolAnswer answers an agent's pending question (both families,
	// SPEC §12 "Questions"); the host refuses it without --mcp-answers.
	ToolAnswer = "answer_question"
)

// Tool inputs. The jsonschema tags are the parameter descriptions a client
// lists; fields without omitempty are required.
type (
	spawnInput struct {
		Message string `json:"message" jsonschema:"The task for the new agent: specific, bounded, with a clear deliverable. It is written to the agent command's stdin."`
	}
	sendInput struct {
		ID        string `json:"id" jsonschema:"The agent_id returned by spawn_agent."`
		Message   string `json:"message" jsonschema:"The new message for the agent; it starts a new submission."`
		Interrupt bool   `json:"interrupt,omitempty" jsonschema:"If true and the agent is running, cancel its current submission first. Default false: a running agent gives a busy error."`
	}
	idInput struct {
		ID string `json:"id" jsonschema:"The agent_id returned by spawn_agent."`
	}
	waitInput struct {
		IDs       []string `json:"ids" jsonschema:"Agent ids to wait for (at least one); wait returns as soon as any of them is final."`
		TimeoutMS *float64 `json:"timeout_ms,omitempty" jsonschema:"How long to wait, in milliseconds. Default 30000 (also when null); clamped to 10000..300000; must be greater than zero."`
	}
	listInput   struct{}
	answerInput struct {
		ID        string              `json:"id" jsonschema:"The agent that asks: its agent_id (or agent path)."`
		RequestID string              `json:"request_id,omitempty" jsonschema:"The request_id of its pending question (pending_questions in list_agents and wait); default the oldest."`
		Answers   map[string][]string `json:"answers" jsonschema:"Each question of the request (its text or header; \"\" when it asks one) to the chosen option labels or other text; more than one label only for a multi-select question."`
	}
)

// Tool descriptions, after Memo's.
const (
	descSpawn = "Start a subagent: a child run of the agent command working on one scoped task, " +
		"shown in the subdash dashboard. Returns at once with its agent_id and submission_id while " +
		"the agent works in the background; call wait to get its result. Fails when the maximum " +
		"number of agents is running. Good for parallel audits across folders and independent " +
		"investigations; not for tiny single-file edits."
	descSend = "Continue an existing agent with a new message (a new submission). A running agent " +
		"gives a busy error unless interrupt is true, which cancels its current submission first. " +
		"A closed agent must be reopened with resume_agent first."
	descResume = "Reopen a closed agent, restoring the status it had when it was closed. It starts " +
		"no submission; use send_input afterwards."
	descWait = "Wait until any of the given agents is final (completed, errored, closed, or not_found " +
		"for an unknown id), or until the timeout. status and details hold only the final agents, " +
		"with their last_output and last_error; timed_out is true when none became final."
	descClose = "Close an agent you are done with; its running submission, if any, is terminated " +
		"before this returns. Closing a closed agent is not an error."
	descList   = "List every agent with its status, last message and submission, oldest first; pending_questions are what an agent asks and waits on."
	descAnswer = "Answer a question a subagent asks (its pending_questions, from list_agents or wait): " +
		"every question of the request gets option labels or other text. Only when the host runs with " +
		"--mcp-answers; otherwise it fails: a person must answer."
)

// NewServer returns an MCP server whose tools call the backends of bs.
// With nil bs it has no tools (MEMO_ENABLE_COLLAB_TOOLS=0) but still
// answers tools/list,
// with an empty list. Every failure of an operation is a tool result with
// isError set and the spec's message as its text; every success carries the
// JSON result of SPEC §3 as text content and as structured content. Its
// capabilities are tools alone: a request for prompts, resources or
// completions is answered "method not found" (-32601).
func NewServer(bs Backends, version string) *mcp.Server {
	return NewFamilyServer(FamilySeed, bs, version, "")
}

// NewFamilyServer is NewServer offering the tools of family f: with
// FamilyMultiAgent Memo 0.9.1's six (SPEC §14), acting for session, whose
// root mailbox the host keeps.
func NewFamilyServer(f Family, bs Backends, version, session string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "subdash", Title: "subdash subagents", Version: version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	s.AddReceivingMiddleware(toolsOnly)
	if bs == nil {
		return s
	}
	if f == FamilyMultiAgent {
		addMultiAgent(s, bs, session)
		return s
	}
	no := false
	mcp.AddTool(s, &mcp.Tool{Name: ToolSpawn, InputSchema: inputSchema[spawnInput](), Description: descSpawn, OutputSchema: outputSchema[proto.SpawnResult](),
		Annotations: &mcp.ToolAnnotations{Title: "Spawn subagent", DestructiveHint: &no, OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in spawnInput) (*mcp.CallToolResult, proto.SpawnResult, error) {
			// the agent keeps who spawned it (AgentInfo.Origin); a host's
			// client names it in its requests too (WithOrigin)
			res, err := via(bs, func(b Backend) (proto.SpawnResult, error) { return b.Spawn(proto.WithOrigin(ctx, "mcp"), in.Message) })
			return textResult(res, err), res, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolSend, InputSchema: inputSchema[sendInput](), Description: descSend, OutputSchema: outputSchema[proto.SendResult](),
		Annotations: &mcp.ToolAnnotations{Title: "Send input to subagent", OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sendInput) (*mcp.CallToolResult, proto.SendResult, error) {
			res, err := via(bs, func(b Backend) (proto.SendResult, error) { return b.Send(ctx, in.ID, in.Message, in.Interrupt) })
			return textResult(res, err), res, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolResume, InputSchema: inputSchema[idInput](), Description: descResume, OutputSchema: outputSchema[proto.StatusResult](),
		Annotations: &mcp.ToolAnnotations{Title: "Resume subagent", DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in idInput) (*mcp.CallToolResult, proto.StatusResult, error) {
			res, err := via(bs, func(b Backend) (proto.StatusResult, error) { return b.Resume(ctx, in.ID) })
			return textResult(res, err), res, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolWait, InputSchema: waitSchema(), Description: descWait, OutputSchema: outputSchema[proto.WaitResult](),
		Annotations: &mcp.ToolAnnotations{Title: "Wait for subagents", ReadOnlyHint: true, OpenWorldHint: &no}},
		func(ctx context.Context, req *mcp.CallToolRequest, in waitInput) (*mcp.CallToolResult, proto.WaitResult, error) {
			// ctx ends when the client cancels the call or the connection
			// closes; Wait then stops at once.
			res, err := via(bs, func(b Backend) (proto.WaitResult, error) {
				return waitTelling(ctx, req, b, in.IDs, millis(in.TimeoutMS))
			})
			return textResult(res, err), res, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolClose, InputSchema: inputSchema[idInput](), Description: descClose, OutputSchema: outputSchema[proto.StatusResult](),
		Annotations: &mcp.ToolAnnotations{Title: "Close subagent", IdempotentHint: true, OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in idInput) (*mcp.CallToolResult, proto.StatusResult, error) {
			res, err := via(bs, func(b Backend) (proto.StatusResult, error) { return b.Close(ctx, in.ID) })
			return textResult(res, err), res, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolList, InputSchema: inputSchema[listInput](), Description: descList, OutputSchema: outputSchema[proto.ListResult](),
		Annotations: &mcp.ToolAnnotations{Title: "List subagents", ReadOnlyHint: true, OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ listInput) (*mcp.CallToolResult, proto.ListResult, error) {
			res, err := via(bs, func(b Backend) (proto.ListResult, error) { return b.List(ctx) })
			return textResult(res, err), res, err
		})
	addAnswer(s, bs)
	return s
}

// addAnswer adds answer_question to s. The call names its origin "mcp":
// the host answers only with --mcp-answers (supervisor.ErrMCPAnswers).
func addAnswer(s *mcp.Server, bs Backends) {
	no := false
	mcp.AddTool(s, &mcp.Tool{Name: ToolAnswer, InputSchema: inputSchema[answerInput](), Description: descAnswer, OutputSchema: outputSchema[proto.QuestionResult](),
		Annotations: &mcp.ToolAnnotations{Title: "Answer a subagent's question", DestructiveHint: &no, OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in answerInput) (*mcp.CallToolResult, proto.QuestionResult, error) {
			res, err := via(bs, func(b Backend) (proto.QuestionResult, error) {
				return b.Answer(proto.WithOrigin(ctx, "mcp"), in.ID, in.RequestID, in.Answers)
			})
			return textResult(res, err), res, err
		})
}

// via runs op on a backend of bs and returns its result.
func via[T any](bs Backends, op func(Backend) (T, error)) (T, error) {
	var res T
	err := bs.Do(func(b Backend) (err error) {
		res, err = op(b)
		return err
	})
	return res, err
}

// textResult returns the result of a successful call: its JSON, with the
// fields of SPEC §3, as text content (the SDK adds the same value as
// structured content). A failed call returns nil, and the SDK makes the
// error a result with isError.
func textResult(v any, err error) *mcp.CallToolResult {
	if err != nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil // the SDK reports the same encoding error
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// inputSchema infers the JSON schema of a tool's input type. An optional
// parameter is described by its type alone ("integer", "array"), not as
// nullable: a client leaves it out rather than sending null.
func inputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %T: %v", *new(T), err))
	}
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	return s
}

// waitSchema is wait's input schema: timeout_ms is an integer, which JSON
// Schema lets a client write as 1e20 (an integral number), or null for the
// default. The Go field is a float64 so that no such value fails to decode
// with Go's type names in the error; millis clamps it.
func waitSchema() *jsonschema.Schema {
	s := inputSchema[waitInput]()
	p := s.Properties["timeout_ms"]
	p.Type, p.Types = "", []string{"integer", "null"}
	return s
}

// millis converts a timeout_ms argument for Wait (proto.TimeoutMS);
// nil stays nil, the default.
func millis(ms *float64) *int {
	if ms == nil {
		return nil
	}
	n := proto.TimeoutMS(*ms)
	return &n
}

// outputSchema infers the JSON schema of a result type, describing
// proto.Time as the RFC 3339 string it encodes to.
func outputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[proto.Time](): {Type: "string", Format: "date-time"},
	}})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema of %T: %v", *new(T), err))
	}
	return s
}
