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
// whose output grew, with its counts (with ?outputs=batch, one "outputs"
// event per batch carrying them all), a batch per frame (?frame=,
// streamFrame). Changes are coalesced per agent
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
	if r.URL.Query().Get("viewer") == "1" {
		srv.viewers.Add(1)
		defer srv.viewers.Add(-1)
	}
	// A failed write (the viewer went away) ends the stream.
	for _, a := range srv.sup.Agents() {
		if writeEvent(w, EventAgent, a) != nil {
			return
		}
	}
	if writeEvent(w, EventSynced, struct{}{}) != nil {
		return
	}
	flusher.Flush()
	beat := time.NewTicker(HeartbeatInterval)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil {
				return
			}
			flusher.Flush()
			continue
		case <-sub.Ready():
		}
		// Let a frame's changes gather: one batch per frame.
		select {
		case <-ctx.Done():
			return
		case <-time.After(frame):
		}
		sent, err := writeChanges(w, sub.Drain(), batch)
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

// writeChanges writes the events of changes: only the agents that changed
// (each change carries the agent's snapshot, proto.Change.Info), the
// warnings and the latest output counts, one output event per agent or,
// with batch, one outputs event after the others. sent says whether it
// wrote any; it stops at the first failed write, whose error it returns.
func writeChanges(w io.Writer, changes []proto.Change, batch bool) (sent bool, err error) {
	write := func(name string, v any) {
		if err == nil {
			err = writeEvent(w, name, v)
			sent = true
		}
	}
	var outputs []outputEvent
	for _, c := range changes {
		switch {
		case c.Agent && c.Info != nil:
			write(EventAgent, *c.Info)
		case c.Agent && c.Forgotten:
			// gone for good (SPEC §10): the status says so
			write(EventAgent, proto.Summary{AgentID: c.AgentID, Status: proto.StatusForgotten})
		}
		for _, text := range c.Warnings {
			write(EventWarning, warningEvent{Text: text})
		}
		if seq, counts, ok := c.LatestOutput(); c.Output && ok {
			o := outputEvent{AgentID: c.AgentID, Seq: seq, Output: counts, Rate: c.Info.OutputRate}
			if batch {
				outputs = append(outputs, o)
			} else {
				write(EventOutput, o)
			}
		}
	}
	if len(outputs) > 0 {
		write(EventOutputs, outputsEvent{Outputs: outputs})
	}
	return sent, err
}

// writeEvent writes one event of the stream; its error is the write's.
func writeEvent(w io.Writer, name string, v any) error {
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, mustJSON(v))
	return err
}
