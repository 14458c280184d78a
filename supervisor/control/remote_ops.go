package control

import (
	"context"
	"io"

	"github.com/subdash/subdash/supervisor/proto"
)

// refuse is the error of operation op on a read-only viewer, nil
// otherwise.
func (r *Remote) refuse(op string) error {
	if !r.readOnly {
		return nil
	}
	return proto.ErrReadOnly(op)
}

// Spawn calls spawn on the host.
func (r *Remote) Spawn(ctx context.Context, message string) (proto.SpawnResult, error) {
	if err := r.refuse("spawn"); err != nil {
		return proto.SpawnResult{}, err
	}
	return r.c.Spawn(ctx, message)
}

// SpawnAgent calls spawn with a task name on the host.
func (r *Remote) SpawnAgent(ctx context.Context, req proto.SpawnRequest) (proto.SpawnResult, error) {
	if err := r.refuse("spawn"); err != nil {
		return proto.SpawnResult{}, err
	}
	return r.c.SpawnAgent(ctx, req)
}

// Send calls send on the host.
func (r *Remote) Send(ctx context.Context, id, message string, interrupt bool) (proto.SendResult, error) {
	if err := r.refuse("send"); err != nil {
		return proto.SendResult{}, err
	}
	return r.c.Send(ctx, id, message, interrupt)
}

// Interrupt calls interrupt on the host.
func (r *Remote) Interrupt(ctx context.Context, id string) (proto.StatusResult, error) {
	if err := r.refuse("interrupt"); err != nil {
		return proto.StatusResult{}, err
	}
	return r.c.Interrupt(ctx, id)
}

// Close calls close on the host.
func (r *Remote) Close(ctx context.Context, id string) (proto.StatusResult, error) {
	if err := r.refuse("close"); err != nil {
		return proto.StatusResult{}, err
	}
	return r.c.Close(ctx, id)
}

// CloseMany calls close on the host for the agents req selects.
func (r *Remote) CloseMany(ctx context.Context, req proto.CloseManyRequest) (proto.CloseManyResult, error) {
	if err := r.refuse("close"); err != nil {
		return proto.CloseManyResult{}, err
	}
	return r.c.CloseMany(ctx, req)
}

// Resume calls resume on the host.
func (r *Remote) Resume(ctx context.Context, id string) (proto.StatusResult, error) {
	if err := r.refuse("resume"); err != nil {
		return proto.StatusResult{}, err
	}
	return r.c.Resume(ctx, id)
}

// Forget calls forget on the host.
func (r *Remote) Forget(ctx context.Context, id string) (proto.StatusResult, error) {
	if err := r.refuse("forget"); err != nil {
		return proto.StatusResult{}, err
	}
	return r.c.Forget(ctx, id)
}

// Approve answers a pending tool permission request on the host (SPEC
// §12).
func (r *Remote) Approve(ctx context.Context, id, requestID string, always bool) (proto.ApprovalResult, error) {
	if err := r.refuse("approve"); err != nil {
		return proto.ApprovalResult{}, err
	}
	return r.c.Approve(ctx, id, requestID, always)
}

// Deny refuses a pending tool permission request on the host (SPEC §12).
func (r *Remote) Deny(ctx context.Context, id, requestID, message string) (proto.ApprovalResult, error) {
	if err := r.refuse("deny"); err != nil {
		return proto.ApprovalResult{}, err
	}
	return r.c.Deny(ctx, id, requestID, message)
}

// Queue queues a message on the host for a running agent (SPEC §11).
func (r *Remote) Queue(ctx context.Context, id, message string) (proto.SendResult, error) {
	if err := r.refuse("queue"); err != nil {
		return proto.SendResult{}, err
	}
	return r.c.Queue(ctx, id, message)
}

// Steer writes a message into a running agent on the host (SPEC §11).
func (r *Remote) Steer(ctx context.Context, id, message string) (proto.SendResult, error) {
	if err := r.refuse("steer"); err != nil {
		return proto.SendResult{}, err
	}
	return r.c.Steer(ctx, id, message)
}

// CancelQueue drops an agent's queued message on the host (SPEC §11).
func (r *Remote) CancelQueue(ctx context.Context, id string) (proto.StatusResult, error) {
	if err := r.refuse("cancel queue"); err != nil {
		return proto.StatusResult{}, err
	}
	return r.c.CancelQueue(ctx, id)
}

// MarkSeen tells the host that this viewer looked at agent id (SPEC §11:
// selected in any viewer). It changes no agent, so a read-only viewer does
// it too.
func (r *Remote) MarkSeen(ctx context.Context, id string) (proto.StatusResult, error) {
	return r.c.MarkSeen(ctx, id)
}

// Window asks the host for a window of display lines (Client.Window); the
// call ends when the viewer detaches, too. The last n lines (from < 0) of
// the submission followed come from what the host pushed when they hold
// every change the dashboard was told of (remote_follow.go).
func (r *Remote) Window(ctx context.Context, id string, seq int, from int64, n int) (proto.Window, error) {
	ctx, stop := r.bound(ctx)
	defer stop()
	if from < 0 && n > 0 {
		if w, ok := r.pushedWindow(ctx, id, seq, n); ok {
			return w, nil
		}
	}
	return r.c.Window(ctx, id, seq, from, n)
}

// Transcript asks the host for a window of transcript entries
// (Client.Transcript); the call ends when the viewer detaches, too.
func (r *Remote) Transcript(ctx context.Context, id string, seq int, from int64, n int) (proto.TranscriptWindow, bool, error) {
	ctx, stop := r.bound(ctx)
	defer stop()
	r.unfollow(ctx)
	return r.c.Transcript(ctx, id, seq, from, n)
}

// bound returns ctx ended also when the viewer detaches, and the function
// that lets go of it.
func (r *Remote) bound(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(r.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// Search asks the host for the matches of query (Client.Search).
func (r *Remote) Search(ctx context.Context, id string, seq int, transcript bool, query string, from int64) (proto.SearchResult, error) {
	return r.c.Search(ctx, id, seq, transcript, query, from)
}

// Message returns a submission's whole message from the host.
func (r *Remote) Message(ctx context.Context, id string, seq int) (string, error) {
	return r.c.Message(ctx, id, seq)
}

// WriteLines streams a submission's display lines from the host (the
// pager's feed).
func (r *Remote) WriteLines(ctx context.Context, w io.Writer, id string, seq int, keepSGR bool) error {
	return r.c.WriteLines(ctx, w, id, seq, keepSGR)
}

// Storage asks the host where its logs are and how much space they take
// now (GET /v1/info).
func (r *Remote) Storage(ctx context.Context) (proto.Storage, error) { return r.c.Storage(ctx) }

// WriteMessage streams a submission's whole message from the host.
func (r *Remote) WriteMessage(ctx context.Context, w io.Writer, id string, seq int) error {
	return r.c.WriteMessage(ctx, w, id, seq)
}

// SendFrom sends (queue: queues) the message read from r, streamed to the
// host (FeatureTextMessage).
func (r *Remote) SendFrom(ctx context.Context, id string, rd io.Reader, interrupt, queue bool) (proto.SendResult, error) {
	if err := r.refuse("send"); err != nil {
		return proto.SendResult{}, err
	}
	return r.c.SendFrom(ctx, id, rd, interrupt, queue)
}

// Resend has the host send the agent's latest message again from its file.
func (r *Remote) Resend(ctx context.Context, id string, interrupt, queue bool) (proto.SendResult, error) {
	if err := r.refuse("send"); err != nil {
		return proto.SendResult{}, err
	}
	return r.c.Resend(ctx, id, interrupt, queue)
}
