package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/supervisor/proto"
)

// The multi-agent family (SPEC §14): Memo 0.9.1's six tools
// (packages/core/src/tools/tools/collab.ts) with its schemas, strict, its
// results (JSON indented by two spaces, as JSON.stringify(v, null, 2)
// writes it) and its error texts ("<tool> failed: <message>"). Where
// subdash differs docs/tree.md says so: the agents are child processes, no
// conversation is forked, and wait_agent's result carries the mailbox
// items that Memo hands to the model's next request.

// Family names a family of tools `subdash mcp` offers (--tools,
// SUBDASH_MCP_TOOLS).
type Family string

// The families.
const (
	// FamilySeed is the first family (spawn_agent, send_input,
	// resume_agent, wait, close_agent, list_agents; SPEC §6), the default.
	FamilySeed Family = "seed"
	// FamilyMultiAgent is Memo 0.9.1's multi-agent family (SPEC §14).
	FamilyMultiAgent Family = "multi-agent"
)

// ParseFamily reads a --tools value; "" is FamilySeed. Errors name the
// families.
func ParseFamily(v string) (Family, error) {
	switch f := Family(strings.TrimSpace(v)); f {
	case "", FamilySeed:
		return FamilySeed, nil
	case FamilyMultiAgent:
		return f, nil
	}
	return "", fmt.Errorf("unknown tool family %q for --tools (SUBDASH_MCP_TOOLS): give seed (spawn_agent, send_input, resume_agent, wait, close_agent, list_agents) or multi-agent (Memo 0.9's spawn_agent, send_message, followup_task, wait_agent, interrupt_agent, list_agents)", v)
}

// The tools of the family.
const (
	ToolSendMessage    = "send_message"
	ToolFollowupTask   = "followup_task"
	ToolWaitAgent      = "wait_agent"
	ToolInterruptAgent = "interrupt_agent"
)

// Their descriptions, Memo's; spawn_agent's and wait_agent's say what
// subdash does instead (a child process; the items in the result).
const (
	descTreeSpawn     = "Spawn a sub-agent for a well-scoped task."
	descSendMessage   = "Queue a message for an agent without starting an idle turn."
	descFollowupTask  = "Send follow-up work to an agent and start a turn if it is idle."
	descWaitAgent     = "Wait for mailbox activity. The mailbox items (child results and messages) follow the result's JSON as text."
	descInterruptTree = "Interrupt an agent current turn while keeping the agent available for follow-up work."
	descListTree      = "List live sub-agents in the current agent subtree."
)

// Tool inputs, as Memo's zod schemas have them (the schemas below are
// written out, strict).
type (
	treeSpawnInput struct {
		Message   string  `json:"message"`
		TaskName  string  `json:"task_name"`
		AgentType *string `json:"agent_type,omitempty"`
		ForkTurns *string `json:"fork_turns,omitempty"`
	}
	treeMessageInput struct {
		Target  string `json:"target"`
		Message string `json:"message"`
	}
	treeWaitInput struct {
		TimeoutMS *float64 `json:"timeout_ms,omitempty"`
	}
	treeTargetInput struct {
		Target string `json:"target"`
	}
	treeListInput struct {
		PathPrefix *string `json:"path_prefix,omitempty"`
	}
)

// prop is one property of a tool's input schema.
type prop struct {
	name string
	s    *jsonschema.Schema
}

// strictObject is an object schema of props, in their order, the first
// required of them required, and no other property (zod's .strict():
// additionalProperties false).
func strictObject(required int, props ...prop) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	for i, p := range props {
		s.Properties[p.name] = p.s
		s.PropertyOrder = append(s.PropertyOrder, p.name)
		if i < required {
			s.Required = append(s.Required, p.name)
		}
	}
	return s
}

// nonEmpty is z.string().min(1); text is z.string().
func nonEmpty() *jsonschema.Schema {
	one := 1
	return &jsonschema.Schema{Type: "string", MinLength: &one}
}

func text() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }

// addMultiAgent adds the family's tools to s, each calling a backend of bs
// for session (proto.Caller.Session).
func addMultiAgent(s *mcp.Server, bs Backends, session string) {
	acked := new(atomic.Uint64) // the highest item number a wait answered
	as := func(ctx context.Context) context.Context {
		return proto.WithOrigin(proto.WithCaller(ctx, proto.Caller{Session: session, Exact: true}), "mcp")
	}
	zero := 0.0
	mcp.AddTool(s, &mcp.Tool{Name: ToolSpawn, Description: descTreeSpawn, InputSchema: strictObject(2,
		prop{"message", nonEmpty()}, prop{"task_name", nonEmpty()}, prop{"agent_type", text()}, prop{"fork_turns", text()})},
		func(ctx context.Context, _ *mcp.CallToolRequest, in treeSpawnInput) (*mcp.CallToolResult, any, error) {
			if strings.TrimSpace(in.Message) == "" {
				return failure(ToolSpawn, proto.ErrEmptyMessage())
			}
			if f := in.ForkTurns; f != nil && !strings.EqualFold(strings.TrimSpace(*f), "none") && strings.TrimSpace(*f) != "" {
				return failure(ToolSpawn, errors.New("forking is not supported; put the context in message"))
			}
			res, err := via(bs, func(b Backend) (proto.TreeAgent, error) { return b.SpawnTree(as(ctx), in.Message, in.TaskName) })
			return answer(ToolSpawn, res, err)
		})
	for _, t := range []struct {
		name, desc string
		trigger    bool
		key        string
	}{{ToolSendMessage, descSendMessage, false, "queued"}, {ToolFollowupTask, descFollowupTask, true, "triggered"}} {
		mcp.AddTool(s, &mcp.Tool{Name: t.name, Description: t.desc, InputSchema: strictObject(2, prop{"target", nonEmpty()}, prop{"message", nonEmpty()})},
			func(ctx context.Context, _ *mcp.CallToolRequest, in treeMessageInput) (*mcp.CallToolResult, any, error) {
				if strings.TrimSpace(in.Message) == "" {
					return failure(t.name, proto.ErrEmptyMessage())
				}
				res, err := via(bs, func(b Backend) (proto.TreeAgent, error) {
					return b.MessageAgent(as(ctx), in.Target, in.Message, t.trigger)
				})
				return answer(t.name, ordered{{"target", res.AgentPath}, {t.key, true}}, err)
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: ToolWaitAgent, Description: descWaitAgent, InputSchema: strictObject(0, prop{"timeout_ms", &jsonschema.Schema{Type: "integer", ExclusiveMinimum: &zero}})},
		func(ctx context.Context, req *mcp.CallToolRequest, in treeWaitInput) (*mcp.CallToolResult, any, error) {
			ms := millis(in.TimeoutMS)
			res, err := via(bs, func(b Backend) (proto.MailboxResult, error) {
				return waitMailboxTelling(as(ctx), req, b, ms, acked.Load())
			})
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, err // cancelled: no answer goes out
				}
				return failure(ToolWaitAgent, err)
			}
			msg := map[string]string{proto.ActivityMailbox: "Wait completed.", proto.ActivityTimeout: "Wait timed out.",
				proto.ActivityClosed: "Agent mailbox closed."}[res.Activity]
			result := ordered{{"message", msg}, {"timed_out", res.TimedOut}}
			if asked := askingAgents(as(ctx), bs); len(asked) > 0 {
				result = append(result, struct {
					k string
					v any
				}{"pending_questions", asked})
			}
			out, _, _ := answer(ToolWaitAgent, result, nil)
			for _, it := range res.Items {
				out.Content = append(out.Content, &mcp.TextContent{Text: it.Text})
				for {
					a := acked.Load()
					if it.Seq <= a || acked.CompareAndSwap(a, it.Seq) {
						break
					}
				}
			}
			return out, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolInterruptAgent, Description: descInterruptTree, InputSchema: strictObject(1, prop{"target", nonEmpty()})},
		func(ctx context.Context, _ *mcp.CallToolRequest, in treeTargetInput) (*mcp.CallToolResult, any, error) {
			res, err := via(bs, func(b Backend) (proto.TreeAgent, error) { return b.InterruptAgent(as(ctx), in.Target) })
			return answer(ToolInterruptAgent, ordered{{"agent_id", res.AgentID}, {"agent_path", res.AgentPath}, {"previous_status", res.Status}}, err)
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolList, Description: descListTree, InputSchema: strictObject(0, prop{"path_prefix", nonEmpty()})},
		func(ctx context.Context, _ *mcp.CallToolRequest, in treeListInput) (*mcp.CallToolResult, any, error) {
			prefix := ""
			if in.PathPrefix != nil {
				prefix = *in.PathPrefix
			}
			res, err := via(bs, func(b Backend) (proto.TreeList, error) { return b.ListTree(as(ctx), prefix) })
			return answer(ToolList, res, err)
		})
	addAnswer(s, bs)
}

// ordered is a JSON object whose keys keep their order, as Memo's results
// have them.
type ordered []struct {
	k string
	v any
}

// MarshalJSON writes the pairs in order.
func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.k)
		v, err := marshal(kv.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal encodes v without escaping <, > and &, as JSON.stringify does.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// answer is a tool's result: v as JSON.stringify(v, null, 2) writes it,
// or, when err is set, Memo's failure.
func answer(tool string, v any, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return failure(tool, err)
	}
	b, err := marshal(v)
	if err != nil {
		return failure(tool, err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return failure(tool, err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.String()}}}, nil, nil
}

// failure is Memo's failed tool result: "<tool> failed: <message>", an
// error.
func failure(tool string, err error) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: tool + " failed: " + err.Error()}}}, nil, nil
}

// askingAgents returns the caller's agents that ask a question and wait on
// it (SPEC §12 "Questions"), as list_agents shows them; nil when none or
// when the list cannot be had (the wait's answer goes out anyway).
func askingAgents(ctx context.Context, bs Backends) []proto.TreeAgent {
	list, err := via(bs, func(b Backend) (proto.TreeList, error) { return b.ListTree(ctx, "") })
	if err != nil {
		return nil
	}
	var out []proto.TreeAgent
	for _, a := range list.Agents {
		if len(a.PendingQuestions) > 0 {
			out = append(out, a)
		}
	}
	return out
}
