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
// carrying the agent's summary as JSON. Changes are coalesced per agent
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
		// Let a frame's changes gather: one batch per EventFrame.
		select {
		case <-ctx.Done():
			return
		case <-time.After(EventFrame):
		}
		sent := false
		for _, c := range sub.Drain() {
			if c.Agent {
				if info, ok := srv.sup.Agent(c.AgentID); ok {
					writeEvent(w, EventAgent, info)
					sent = true
				} else if c.Forgotten {
					// gone for good (SPEC §10): the status says so
					writeEvent(w, EventAgent, proto.Summary{AgentID: c.AgentID, Status: proto.StatusForgotten})
					sent = true
				}
			}
			for _, text := range c.Warnings {
				writeEvent(w, EventWarning, warningEvent{Text: text})
				sent = true
			}
			if c.Output {
				ev := outputEvent{AgentID: c.AgentID}
				ev.Output, ev.Seq, _ = srv.sup.Counts(c.AgentID, 0)
				writeEvent(w, EventOutput, ev)
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
