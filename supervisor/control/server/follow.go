package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/google/uuid"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// A viewer following a submission (SPEC §9):
// its event stream, opened with window=1, is named by its first event
// (wire.EventStream); PUT /v1/events/{stream}/follow says which submission it
// follows and how many lines it shows; each batch in which that
// submission's output changed then starts with its last n display lines
// (wire.EventWindow). Twenty viewers following a flood ask for no window each
// per frame: the host reads it once per batch of each stream, where it
// reads the batch's changes anyway.

// follow is what one event stream follows; the zero value follows
// nothing.
type follow struct {
	mu     sync.Mutex
	target wire.FollowRequest
}

// get returns what the stream follows now.
func (f *follow) get() wire.FollowRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.target
}

// openFollow names a new event stream that takes follow requests; the
// function returned forgets it when the stream ends.
func (srv *Server) openFollow() (string, *follow, func()) {
	id, f := uuid.NewString(), &follow{}
	srv.follows.Store(id, f)
	return id, f, func() { srv.follows.Delete(id) }
}

// setFollow answers PUT /v1/events/{stream}/follow (FollowRequest) with
// what the stream follows from now on (a FollowRequest, all empty for
// nothing). Errors: 404 for a stream that is not open on this host or
// an unknown agent or submission, 400 for n outside 1 to
// proto.MaxWindowItems or a submission below 1.
func (srv *Server) setFollow(w http.ResponseWriter, r *http.Request) {
	v, ok := srv.follows.Load(r.PathValue("stream"))
	if !ok {
		writeError(w, &proto.Error{Code: proto.CodeNotFound, Message: fmt.Sprintf(
			"no event stream %q is open on this host: open GET /v1/events?outputs=batch&window=1 and use the stream its first event names", r.PathValue("stream"))})
		return
	}
	var req wire.FollowRequest
	if !decode(w, r, &req) {
		return
	}
	if req.AgentID != "" {
		if req.N < 1 || req.N > proto.MaxWindowItems {
			writeError(w, &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("n must be a count of 1 to %d lines, not %d", proto.MaxWindowItems, req.N)})
			return
		}
		if req.Submission < 1 {
			writeError(w, &proto.Error{Code: proto.CodeInvalid, Message: fmt.Sprintf("submission must be a submission's number (1 for the first), not %d", req.Submission)})
			return
		}
		if _, _, err := srv.sup.Counts(req.AgentID, req.Submission); err != nil {
			writeError(w, err)
			return
		}
	} else {
		req = wire.FollowRequest{}
	}
	f := v.(*follow)
	f.mu.Lock()
	f.target = req
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, req)
}

// writeFollowed writes the window event of the submission f follows when
// changes (a batch just taken) hold new output of it; it returns the
// write's error. A window the host cannot read (the agent was forgotten
// since) is not sent: the viewer's own window request then says why.
func (srv *Server) writeFollowed(ctx context.Context, w io.Writer, f *follow, changes []proto.Change) error {
	t := f.get()
	if t.AgentID == "" {
		return nil
	}
	changed := false
	for _, c := range changes {
		if seq, _, ok := c.LatestOutput(); c.Output && ok && c.AgentID == t.AgentID && seq == t.Submission {
			changed = true
			break
		}
	}
	if !changed {
		return nil
	}
	win, err := srv.sup.Window(ctx, t.AgentID, t.Submission, -1, t.N)
	if err != nil {
		return nil
	}
	return wire.WriteEvent(w, wire.EventWindow, wire.WindowEvent{FollowRequest: t, WindowResult: wire.WindowOf(win)})
}
