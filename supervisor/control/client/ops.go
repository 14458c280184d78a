package client

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// waitLimit is the deadline of a wait call: wait's timeout (SPEC §3: 30 s
// when absent, clamped to 10 s..300 s) plus WaitMargin.
func waitLimit(ms *int) time.Duration {
	d := proto.DefaultWaitTimeoutMS
	if ms != nil && *ms > 0 {
		d = min(max(*ms, proto.MinWaitTimeoutMS), proto.MaxWaitTimeoutMS)
	}
	return time.Duration(d)*time.Millisecond + WaitMargin
}

// Info describes the supervisor behind the socket.
func (c *Client) Info(ctx context.Context) (proto.Info, error) {
	var res proto.Info
	if err := c.do(ctx, wire.Info.At("", nil), nil, &res); err != nil {
		return res, err
	}
	c.host.Store(&res)
	return res, nil
}

// Spawn calls spawn (SPEC §3) on the supervisor behind the socket.
// A message longer than 64 KiB goes as SpawnFrom sends it.
func (c *Client) Spawn(ctx context.Context, message string) (proto.SpawnResult, error) {
	return c.SpawnAgent(ctx, proto.SpawnRequest{Message: message})
}

// SpawnAgent calls spawn with a task name (SPEC §3, §14) on the supervisor
// behind the socket. A message longer than 64 KiB goes as SpawnFrom sends
// it.
func (c *Client) SpawnAgent(ctx context.Context, req proto.SpawnRequest) (proto.SpawnResult, error) {
	var res proto.SpawnResult
	return res, c.sendMessage(ctx, wire.Spawn, "", spawnQuery(req.TaskName), req.Message, func(msg string) any {
		return proto.SpawnRequest{Message: msg, TaskName: req.TaskName}
	}, &res)
}

// Send calls send (SPEC §3) on the supervisor behind the socket.
// A message longer than 64 KiB goes as SpawnFrom sends it.
func (c *Client) Send(ctx context.Context, id, message string, interrupt bool) (proto.SendResult, error) {
	var res proto.SendResult
	q := url.Values{}
	if interrupt {
		q.Set("interrupt", "1")
	}
	return res, c.sendMessage(ctx, wire.Send, id, q, message,
		func(msg string) any { return wire.SendRequest{Message: msg, Interrupt: interrupt} }, &res)
}

// Queue calls send with queue (SPEC §11, supervisor.Queue) on the
// supervisor behind the socket: the message starts after the running
// submission ends by itself, or at once when nothing runs.
func (c *Client) Queue(ctx context.Context, id, message string) (proto.SendResult, error) {
	var res proto.SendResult
	return res, c.sendMessage(ctx, wire.Send, id, url.Values{"queue": {"1"}}, message,
		func(msg string) any { return wire.SendRequest{Message: msg, Queue: true} }, &res)
}

// Steer calls send with steer (SPEC §11, supervisor.Steer) on the
// supervisor behind the socket.
func (c *Client) Steer(ctx context.Context, id, message string) (proto.SendResult, error) {
	var res proto.SendResult
	return res, c.sendMessage(ctx, wire.Send, id, url.Values{"steer": {"1"}}, message,
		func(msg string) any { return wire.SendRequest{Message: msg, Steer: true} }, &res)
}

// CancelQueue drops the message queued for agent id (SPEC §11,
// supervisor.CancelQueue) on the supervisor behind the socket.
func (c *Client) CancelQueue(ctx context.Context, id string) (proto.StatusResult, error) {
	var res proto.StatusResult
	return res, c.do(ctx, wire.CancelQueue.At(id, nil), nil, &res)
}

// MarkSeen records that a dashboard shows agent id, which then no longer
// needs you (SPEC §11, supervisor.MarkSeen), on the supervisor behind the
// socket. The result names the agent and its status.
func (c *Client) MarkSeen(ctx context.Context, id string) (proto.StatusResult, error) {
	var res proto.StatusResult
	return res, c.do(ctx, wire.Seen.At(id, nil), nil, &res)
}

// Interrupt calls interrupt (SPEC §3) on the supervisor behind the socket.
func (c *Client) Interrupt(ctx context.Context, id string) (proto.StatusResult, error) {
	var res proto.StatusResult
	return res, c.do(ctx, wire.Interrupt.At(id, nil), nil, &res)
}

// Close calls close (SPEC §3) on the supervisor behind the socket: it
// closes the agent id, not the client, which holds nothing to release.
func (c *Client) Close(ctx context.Context, id string) (proto.StatusResult, error) {
	var res proto.StatusResult
	return res, c.do(ctx, wire.Close.At(id, nil), nil, &res)
}

// CloseMany calls close for the agents req selects (SPEC §3 close, POST
// /v1/close) on the supervisor behind the socket; a req that selects in
// none or several ways is refused here (proto.CloseManyRequest.Check).
func (c *Client) CloseMany(ctx context.Context, req proto.CloseManyRequest) (proto.CloseManyResult, error) {
	var res proto.CloseManyResult
	if err := req.Check(); err != nil {
		return res, err
	}
	return res, c.call(ctx, CallTimeout, wire.CloseMany.At("", nil), req, &res)
}

// Resume calls resume (SPEC §3) on the supervisor behind the socket.
func (c *Client) Resume(ctx context.Context, id string) (proto.StatusResult, error) {
	var res proto.StatusResult
	return res, c.do(ctx, wire.Resume.At(id, nil), nil, &res)
}

// Forget calls forget (SPEC §10) on the supervisor behind the socket: agent
// id leaves the table and list for good; a running agent is refused.
func (c *Client) Forget(ctx context.Context, id string) (proto.StatusResult, error) {
	var res proto.StatusResult
	return res, c.do(ctx, wire.Forget.At(id, nil), nil, &res)
}

// Answer answers the pending question request requestID ("" = the
// oldest) of agent id (SPEC §12 "Questions"): answers maps each question,
// by its text or header ("" for the only one), to the chosen option labels
// or other text. Errors: a host without FeatureQuestions, and those of
// supervisor.Answer.
func (c *Client) Answer(ctx context.Context, id, requestID string, answers map[string][]string) (proto.QuestionResult, error) {
	var res proto.QuestionResult
	if has, err := c.Has(ctx, proto.FeatureQuestions); err != nil {
		return res, err
	} else if !has {
		return res, fmt.Errorf("the host does not relay questions (no %q feature): upgrade the host's subdash", proto.FeatureQuestions)
	}
	return res, c.do(ctx, wire.Answer.At(id, nil), wire.AnswerRequest{RequestID: requestID, Answers: answers}, &res)
}

// Approve allows the pending tool permission request requestID ("" = the
// oldest) of agent id on the supervisor behind the socket (SPEC §12); with
// always, its tool stays allowed for the rest of the agent's session.
func (c *Client) Approve(ctx context.Context, id, requestID string, always bool) (proto.ApprovalResult, error) {
	var res proto.ApprovalResult
	return res, c.do(ctx, wire.Approve.At(id, nil), wire.ApproveRequest{RequestID: requestID, Always: always}, &res)
}

// Deny refuses the pending tool permission request requestID ("" = the
// oldest) of agent id with message ("" = the default reason) on the
// supervisor behind the socket (SPEC §12).
func (c *Client) Deny(ctx context.Context, id, requestID, message string) (proto.ApprovalResult, error) {
	var res proto.ApprovalResult
	return res, c.do(ctx, wire.Deny.At(id, nil), wire.DenyRequest{RequestID: requestID, Message: message}, &res)
}

// Wait calls wait (SPEC §3) on the supervisor behind the socket. When ctx
// ends first, the request is abandoned, the server stops waiting at once,
// and ctx's error is returned.
func (c *Client) Wait(ctx context.Context, ids []string, ms *int) (proto.WaitResult, error) {
	var res proto.WaitResult
	if ids == nil {
		ids = []string{}
	}
	return res, c.call(ctx, waitLimit(ms), wire.Wait.At("", nil), wire.WaitRequest{IDs: ids, TimeoutMS: (*wire.TimeoutMS)(ms)}, &res)
}

// List calls list (SPEC §3) on the supervisor behind the socket.
func (c *Client) List(ctx context.Context) (proto.ListResult, error) {
	var res proto.ListResult
	return res, c.do(ctx, wire.List.At("", nil), nil, &res)
}
