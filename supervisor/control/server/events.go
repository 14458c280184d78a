package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// events streams server-sent events: first one "agent" event per existing
// agent, oldest first, then one per agent whose summary changed, each
// carrying the agent's snapshot as JSON, and one "output" event per agent
// whose output grew, with its counts (with ?outputs=batch, one "outputs"
// event per batch carrying them all), a batch per frame (?frame=,
// streamFrame). With window=1 as well it follows a submission for a
// viewer (follow.go): its first event names it. Changes are coalesced per agent
// while the client is slow (proto.Subscription), so a slow client
// never holds up the supervisor.
func (srv *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, errors.New("event stream not supported by this connection"))
		return
	}
	sub := srv.sup.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(srv.streams, cancel)() // Close ends the stream
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	batch := r.URL.Query().Get("outputs") == "batch"
	frame := streamFrame(r.URL.Query().Get("frame"))
	viewer := r.URL.Query().Get("viewer") == "1"
	var held heldCounts // with ?counts=, the counts of agents not followed (counts.go)
	if viewer {
		srv.viewers.Add(1)
		defer srv.viewers.Add(-1)
	}
	var followed *follow // with window=1 (and outputs=batch): the submission it follows
	if batch && r.URL.Query().Get("window") == "1" {
		id, f, forget := srv.openFollow()
		defer forget()
		followed = f
		held.interval = streamCounts(r.URL.Query().Get("counts"), frame)
		if wire.WriteEvent(w, wire.EventStream, wire.StreamEvent{Stream: id}) != nil {
			return
		}
	}
	// A failed write (the viewer went away) ends the stream.
	for _, a := range srv.sup.Agents() {
		if wire.WriteEvent(w, wire.EventAgent, a) != nil {
			return
		}
	}
	if wire.WriteEvent(w, wire.EventSynced, struct{}{}) != nil {
		return
	}
	flusher.Flush()
	beat := time.NewTicker(wire.HeartbeatInterval)
	defer beat.Stop()
	for {
		due, stop := held.wake(time.Now())
		select {
		case <-ctx.Done():
			stop()
			return
		case <-due:
		case <-beat.C:
			stop()
			if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil {
				return
			}
			flusher.Flush()
			continue
		case <-sub.Ready():
		}
		stop()
		// Let a frame's changes gather: one batch per frame, at the
		// frame's boundary, so that the streams of every viewer with the
		// same frame write theirs at once (their processes wake together).
		select {
		case <-ctx.Done():
			return
		case <-time.After(untilBoundary(time.Now(), srv.frameOf(frame, viewer))):
		}
		var changes []proto.Change
		if followed == nil {
			changes = sub.Drain()
		} else {
			changes = held.drain(sub, followed.get().AgentID, time.Now())
			// read after the changes were taken: it holds what they count
			if srv.writeFollowed(ctx, w, followed, changes) != nil {
				return
			}
		}
		sent, err := writeChanges(w, changes, batch)
		if err != nil {
			return
		}
		if sent {
			flusher.Flush()
		}
	}
}

// streamFrame is the interval between two batches of an event stream:
// the client's ?frame= (a Go duration; a viewer asks for its own,
// proto.ViewerFrameInterval), within proto.FrameInterval and a second,
// else proto.FrameInterval.
func streamFrame(asked string) time.Duration {
	d, err := time.ParseDuration(asked)
	if err != nil || d < proto.FrameInterval {
		return proto.FrameInterval
	}
	return min(d, time.Second)
}

// ViewerBatches is how many batches a second the event streams of all
// the viewers attached to a host share (SPEC §9): each batch of a
// viewer following a flood is a frame it draws and its terminal shows,
// which take the cores the host reads the flood on. Up to 10 viewers
// batch at their own frame (1/30 s); more batch less often, down to 10 a
// second each (30 viewers). BENCHMARKS.md, "20 viewers on a four-flood
// host".
const ViewerBatches = 300

// frameOf is the frame of a stream that asked for frame: a viewer's is
// longer while so many viewers are attached that they would take more
// than ViewerBatches batches a second together, up to 1/10 s.
func (srv *Server) frameOf(frame time.Duration, viewer bool) time.Duration {
	if !viewer {
		return frame
	}
	return viewerFrame(frame, srv.viewers.Load())
}

// viewerFrame is the frame of a viewer's stream that asked for asked
// while n viewers are attached (frameOf).
func viewerFrame(asked time.Duration, n int64) time.Duration {
	return max(asked, min(time.Duration(n)*time.Second/ViewerBatches, time.Second/10))
}

// untilBoundary is how long from now until the next multiple of frame
// (since the Unix epoch): at least a tenth of frame, so that a change
// just before a boundary still gathers the changes that come with it.
func untilBoundary(now time.Time, frame time.Duration) time.Duration {
	d := frame - time.Duration(now.UnixNano()%int64(frame))
	if d < frame/10 {
		d += frame
	}
	return d
}

// writeChanges writes the events of changes: only the agents that changed
// (each change carries the agent's snapshot, proto.Change.Info), the
// warnings and the latest output counts, one output event per agent or,
// with batch, one outputs event after the others. sent says whether it
// wrote any; it stops at the first failed write, whose error it returns.
func writeChanges(w io.Writer, changes []proto.Change, batch bool) (sent bool, err error) {
	write := func(name string, v any) {
		if err == nil {
			err = wire.WriteEvent(w, name, v)
			sent = true
		}
	}
	var outputs []wire.OutputEvent
	for _, c := range changes {
		switch {
		case c.Agent && c.Info != nil:
			write(wire.EventAgent, *c.Info)
		case c.Agent && c.Forgotten:
			// gone for good (SPEC §10): the status says so
			write(wire.EventAgent, proto.Summary{AgentID: c.AgentID, Status: proto.StatusForgotten})
		}
		for _, text := range c.Warnings {
			write(wire.EventWarning, wire.WarningEvent{Text: text})
		}
		if seq, counts, ok := c.LatestOutput(); c.Output && ok {
			o := wire.OutputEvent{AgentID: c.AgentID, Seq: seq, Output: counts, Rate: c.Info.OutputRate, Now: c.Info.Now}
			if batch {
				outputs = append(outputs, o)
			} else {
				write(wire.EventOutput, o)
			}
		}
	}
	if len(outputs) > 0 {
		write(wire.EventOutputs, wire.OutputsEvent{Outputs: outputs})
	}
	return sent, err
}
