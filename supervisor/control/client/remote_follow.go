package client

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// A viewer's windows pushed by its host (SPEC §9; the server's
// follow.go): the submission the log pane follows is named to the
// host once, and each batch in which its output changed brings its last
// lines before the batch's output counts; Window answers a request for
// them from what came, when it holds at least what the counts the
// dashboard was given say, and asks the host otherwise.

// pushed is what a Remote follows on its event stream, and the last
// window the host pushed of it. Remote.mu guards it.
type pushed struct {
	stream string             // the stream's name (wire.EventStream); "" before it
	target wire.FollowRequest // what the host was asked to follow on stream
	win    proto.Window       // the last window of target pushed
	fresh  bool               // win holds every change of target the dashboard was told of
	batch  bool               // a window of target came in the batch being read
	served int                // Window requests answered from pushes (what the tests see of it)
}

// onStream takes the name of a (re)opened event stream: nothing is
// followed on it yet.
func (r *Remote) onStream(data []byte) error {
	var se wire.StreamEvent
	if err := json.Unmarshal(data, &se); err != nil {
		return fmt.Errorf("bad stream event from %s: %v", r.socket, err)
	}
	r.mu.Lock()
	r.push = pushed{stream: se.Stream}
	r.mu.Unlock()
	return nil
}

// onWindow keeps a pushed window of the submission followed.
func (r *Remote) onWindow(data []byte) error {
	var we wire.WindowEvent
	if err := json.Unmarshal(data, &we); err != nil {
		return fmt.Errorf("bad window event from %s: %v", r.socket, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if we.FollowRequest == r.push.target {
		r.push.win = proto.Window{First: we.First, Total: we.Total, Lines: we.Lines}
		r.push.fresh, r.push.batch = true, true
	}
	return nil
}

// onChanged notes a change of agent id that a batch carries (its
// snapshot or its output counts): unless the batch brought a window of
// it first, the window held may be older than what the dashboard is told.
// r.mu is held.
func (r *Remote) onChanged(id string) {
	if id == r.push.target.AgentID && !r.push.batch {
		r.push.fresh = false
	}
}

// endBatch is called after a batch's outputs event: the next batch's
// changes need a window of their own.
func (r *Remote) endBatch() {
	r.mu.Lock()
	r.push.batch = false
	r.mu.Unlock()
}

// pushedWindow answers Window's request for the last n lines of
// submission seq from the window pushed, when it holds every change the
// dashboard was told of; otherwise it names that submission to the host
// (once per stream and submission) and returns false: the caller asks.
func (r *Remote) pushedWindow(ctx context.Context, id string, seq int, n int) (proto.Window, bool) {
	want := wire.FollowRequest{AgentID: id, Submission: seq, N: n}
	r.mu.Lock()
	p := r.push
	if p.stream == "" { // no stream named yet
		r.mu.Unlock()
		return proto.Window{}, false
	}
	if p.target == want {
		var w proto.Window
		if p.fresh {
			r.push.served++
			w = proto.Window{First: p.win.First, Total: p.win.Total, Lines: slices.Clone(p.win.Lines)}
		}
		r.mu.Unlock()
		return w, p.fresh
	}
	// Set before asking, so that no window of it is missed; one that came
	// before the host followed it is not taken (fresh stays false until
	// a window of the target comes).
	r.push.target, r.push.fresh, r.push.win = want, false, proto.Window{}
	r.mu.Unlock()
	// Not following is no loss (each request is answered by the host):
	// its error is the next window request's to say, if it lasts.
	_, _ = r.Follow(ctx, p.stream, want)
	return proto.Window{}, false
}

// unfollow tells the host to push no more windows on this stream (the
// log pane shows a transcript, which is fetched).
func (r *Remote) unfollow(ctx context.Context) {
	r.mu.Lock()
	p := r.push
	r.push.target, r.push.fresh = wire.FollowRequest{}, false
	r.mu.Unlock()
	if p.stream != "" && p.target.AgentID != "" {
		_, _ = r.Follow(ctx, p.stream, wire.FollowRequest{})
	}
}
