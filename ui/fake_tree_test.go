package ui

import (
	"context"
	"fmt"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// The fake's operations that the agent tree changed (SPEC §14): a spawn
// with a task name, a close that takes the subtree, several queued
// messages of which a cancel drops the last.

// SpawnAgent is Spawn with a task name, kept under the root as a host of
// the tree keeps it (the fake checks neither the name nor its siblings).
func (f *fakeSup) SpawnAgent(ctx context.Context, req proto.SpawnRequest) (proto.SpawnResult, error) {
	if req.TaskName == "" {
		return f.Spawn(ctx, req.Message)
	}
	f.noIO("SpawnAgent")
	f.mu.Lock()
	f.record("spawn %q as %q", req.Message, req.TaskName)
	if err := f.fail["spawn"]; err != nil {
		f.mu.Unlock()
		return proto.SpawnResult{}, err
	}
	id := f.newID()
	f.mu.Unlock()
	f.child("", id, req.TaskName, req.Message, proto.StatusRunning)
	f.changed(id)
	return proto.SpawnResult{Summary: proto.Summary{AgentID: id, Status: proto.StatusRunning}}, nil
}

// newID returns the id of the next agent spawned. Call with f.mu held.
func (f *fakeSup) newID() string {
	f.ids++
	return fmt.Sprintf("%08x-0000-4000-8000-%012d", 0xa0000000+f.ids, f.ids)
}

func (f *fakeSup) Close(ctx context.Context, id string) (proto.StatusResult, error) {
	f.noIO("Close")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("close %s", id[:8])
	a := f.find(id)
	r := proto.StatusResult{AgentID: id, Status: proto.StatusClosed}
	for _, d := range f.below(id) { // a host of the tree closes the subtree (SPEC §14)
		d.info.Status = proto.StatusClosed
		f.end(d, "interrupted")
		f.changed(d.info.AgentID)
		r.Descendants = append(r.Descendants, d.info.AgentID)
	}
	a.info.Status = proto.StatusClosed
	f.end(a, "interrupted")
	f.changed(a.info.AgentID)
	return r, nil
}

// below returns the descendants of agent id, nearest first. Call with
// f.mu held.
func (f *fakeSup) below(id string) []*fakeAgent {
	var out []*fakeAgent
	for queue := []string{id}; len(queue) > 0; queue = queue[1:] {
		for _, a := range f.agents {
			if a.info.ParentID == queue[0] {
				out = append(out, a)
				queue = append(queue, a.info.AgentID)
			}
		}
	}
	return out
}

// Queue keeps message on a running agent, after those queued before
// (SPEC §11, §14), else sends it.
func (f *fakeSup) Queue(ctx context.Context, id, message string) (proto.SendResult, error) {
	f.noIO("Queue")
	f.mu.Lock()
	a := f.find(id)
	if a != nil && a.info.Running() {
		defer f.mu.Unlock()
		f.record("queue %s %q", id[:8], message)
		if a.info.QueuedMessage != "" && len(a.info.QueuedMessages) == 0 {
			a.info.QueuedMessages = []string{a.info.QueuedMessage}
		}
		a.info.QueuedMessages = append(a.info.QueuedMessages, message)
		a.info.QueuedMessage = a.info.QueuedMessages[0]
		f.changed(a.info.AgentID)
		return proto.SendResult{AgentID: id, Status: proto.StatusRunning, Queued: true}, nil
	}
	f.mu.Unlock()
	return f.Send(ctx, id, message, false)
}

// Steer writes a message into a running agent: the fake records it and
// answers pending.
func (f *fakeSup) Steer(ctx context.Context, id, message string) (proto.SendResult, error) {
	f.noIO("Steer")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("steer %s %q", id[:8], message)
	return proto.SendResult{AgentID: id, Status: proto.StatusRunning, MessageID: "11111111-0000-4000-8000-000000000000", Receipt: proto.ReceiptPending}, nil
}

// CancelQueue drops the last queued message.
func (f *fakeSup) CancelQueue(ctx context.Context, id string) (proto.StatusResult, error) {
	f.noIO("CancelQueue")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("cancel-queue %s", id[:8])
	a := f.find(id)
	if a.info.QueuedMessage == "" {
		return proto.StatusResult{}, proto.ErrNoQueue(id)
	}
	a.info.QueuedMessage = ""
	if n := len(a.info.QueuedMessages); n > 1 {
		a.info.QueuedMessages = append([]string(nil), a.info.QueuedMessages[:n-1]...)
		a.info.QueuedMessage = a.info.QueuedMessages[0]
	} else {
		a.info.QueuedMessages = nil
	}
	f.changed(a.info.AgentID)
	return proto.StatusResult{AgentID: id, Status: a.info.Status, DroppedQueued: true}, nil
}

// child adds agent id named name under parent ("" for the root), as a
// host of the tree reports it (SPEC §14).
func (f *fakeSup) child(parent, id, name, message string, statuses ...proto.Status) *fakeAgent {
	a := f.add(id, message, statuses...)
	f.mu.Lock()
	defer f.mu.Unlock()
	path := proto.RootPath
	if p := f.find(parent); parent != "" && p != nil {
		path = p.info.AgentPath
	}
	last := name
	if last == "" {
		last = termtext.ShortID(id)
	}
	a.info.TaskName, a.info.ParentID, a.info.AgentPath = name, parent, path+"/"+last
	return a
}
