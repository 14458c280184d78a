package client

import (
	"context"

	"github.com/subdash/subdash/supervisor/proto"
)

// The reads a viewer's Remote makes otherwise than its Client: every
// other call of proto.Reader and proto.Operator is the Client's own.

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
	return r.Client.Window(ctx, id, seq, from, n)
}

// Transcript asks the host for a window of transcript entries
// (Client.Transcript); the call ends when the viewer detaches, too.
func (r *Remote) Transcript(ctx context.Context, id string, seq int, from int64, n int) (proto.TranscriptWindow, bool, error) {
	ctx, stop := r.bound(ctx)
	defer stop()
	r.unfollow(ctx)
	return r.Client.Transcript(ctx, id, seq, from, n)
}

// Windows asks the host for several windows in one request
// (Client.Windows); the pushed window the log pane follows is left as it
// is. The call ends when the viewer detaches, too.
func (r *Remote) Windows(ctx context.Context, reqs []proto.WindowRequest) ([]proto.WindowAnswer, error) {
	ctx, stop := r.bound(ctx)
	defer stop()
	return r.Client.Windows(ctx, reqs)
}

// bound returns ctx ended also when the viewer detaches, and the function
// that lets go of it.
func (r *Remote) bound(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(r.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}
