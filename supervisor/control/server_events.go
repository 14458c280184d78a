package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// events streams server-sent events: first one "agent" event per existing
// agent, oldest first, then one per agent whose summary changed, each
// carrying the agent's snapshot as JSON, and one "output" event per agent
// whose output grew, with its counts. Changes are coalesced per agent
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
	if r.URL.Query().Get("viewer") == "1" {
		srv.viewers.Add(1)
		defer srv.viewers.Add(-1)
	}
	for _, a := range srv.sup.Agents() {
		writeEvent(w, EventAgent, a)
	}
	writeEvent(w, EventSynced, struct{}{})
	flusher.Flush()
	beat := time.NewTicker(HeartbeatInterval)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			fmt.Fprint(w, ": heartbeat\n\n")
			flusher.Flush()
			continue
		case <-sub.Ready():
		}
		// Let a frame's changes gather: one batch per proto.FrameInterval.
		select {
		case <-ctx.Done():
			return
		case <-time.After(proto.FrameInterval):
		}
		sent := false
		for _, c := range sub.Drain() {
			// each change carries the agent's snapshot (proto.Change.Info):
			// only the agents that changed are sent
			switch {
			case c.Agent && c.Info != nil:
				writeEvent(w, EventAgent, *c.Info)
				sent = true
			case c.Agent && c.Forgotten:
				// gone for good (SPEC §10): the status says so
				writeEvent(w, EventAgent, proto.Summary{AgentID: c.AgentID, Status: proto.StatusForgotten})
				sent = true
			}
			for _, text := range c.Warnings {
				writeEvent(w, EventWarning, warningEvent{Text: text})
				sent = true
			}
			if seq, counts, ok := c.LatestOutput(); c.Output && ok {
				writeEvent(w, EventOutput, outputEvent{AgentID: c.AgentID, Seq: seq, Output: counts})
				sent = true
			}
		}
		if sent {
			flusher.Flush()
		}
	}
}

func writeEvent(w io.Writer, name string, v any) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, mustJSON(v))
}
