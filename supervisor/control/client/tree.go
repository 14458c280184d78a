package client

import (
	"context"
	"net/url"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// The multi-agent family (SPEC §14) over the socket: Client implements
// proto.MultiAgent for the session WithSession names. The host must take
// it (FeatureMultiAgent: `subdash mcp --tools multi-agent` asks first).

var _ proto.MultiAgent = (*Client)(nil)

// SpawnTree calls spawn_agent's route.
func (c *Client) SpawnTree(ctx context.Context, message, taskName string) (proto.TreeAgent, error) {
	var res proto.TreeAgent
	return res, c.do(ctx, wire.TreeSpawn.At("", nil), proto.SpawnRequest{Message: message, TaskName: taskName}, &res)
}

// MessageAgent calls send_message's (followup_task's, with trigger) route.
func (c *Client) MessageAgent(ctx context.Context, target, message string, trigger bool) (proto.TreeAgent, error) {
	var res proto.TreeAgent
	return res, c.do(ctx, wire.TreeMessage.At("", nil), wire.MessageRequest{Target: target, Message: message, Trigger: trigger}, &res)
}

// InterruptAgent calls interrupt_agent's route.
func (c *Client) InterruptAgent(ctx context.Context, target string) (proto.TreeAgent, error) {
	var res proto.TreeAgent
	return res, c.call(ctx, CallTimeout+WaitMargin, wire.TreeInterrupt.At("", nil), wire.TargetRequest{Target: target}, &res)
}

// WaitMailbox calls wait_agent's route, bounded by its timeout (SPEC §14:
// 10 to 300 s, 30 s when nil) plus WaitMargin.
func (c *Client) WaitMailbox(ctx context.Context, ms *int, ack uint64) (proto.MailboxResult, error) {
	var res proto.MailboxResult
	limit := time.Duration(proto.DefaultWaitTimeoutMS) * time.Millisecond
	if ms != nil {
		limit = time.Duration(min(max(*ms, 0), proto.MaxWaitTimeoutMS)) * time.Millisecond
	}
	return res, c.call(ctx, limit+WaitMargin, wire.TreeWait.At("", nil), wire.MailboxRequest{TimeoutMS: (*wire.TimeoutMS)(ms), Ack: ack}, &res)
}

// ListTree calls list_agents's route.
func (c *Client) ListTree(ctx context.Context, pathPrefix string) (proto.TreeList, error) {
	var res proto.TreeList
	return res, c.do(ctx, wire.TreeList.At("", url.Values{"path_prefix": {pathPrefix}}), nil, &res)
}
