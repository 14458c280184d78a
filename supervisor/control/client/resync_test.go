package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// scriptHost is a host of this process whose event streams follow a
// script: the n-th GET /v1/events (the last script for later ones) sends
// the snapshots of streams[n].agents and wire.EventSynced, then an agent event
// for each id sent on agents, and heartbeats every 20 ms ("beat"), nothing
// else ("silent"), or ends ("end") once end is closed. GET /v1/info
// answers (run "run-1" unless changed), or never once infoSilent is set;
// POST /v1/agents/{id}/close never answers; POST /v1/wait closes waiting
// and answers once answer is closed, with more ids than the socket holds
// (a wait of many ids), so a paused client reads it over many reads.
type scriptHost struct {
	socket  string
	streams []scriptStream
	end     chan struct{}
	agents  chan string
	waiting chan struct{}
	answer  chan struct{}

	mu         sync.Mutex
	opened     int
	runDir     string
	infoSilent bool
}

type scriptStream struct {
	agents []string
	then   string
}

func startScriptHost(t *testing.T, streams ...scriptStream) *scriptHost {
	t.Helper()
	h := &scriptHost{socket: filepath.Join(t.TempDir(), "h.sock"), streams: streams, end: make(chan struct{}), runDir: "run-1",
		agents: make(chan string, 4), waiting: make(chan struct{}), answer: make(chan struct{})}
	ln, err := net.Listen("unix", h.socket)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/info", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		silent, run := h.infoSilent, h.runDir
		h.mu.Unlock()
		if silent {
			<-r.Context().Done()
			return
		}
		_ = json.NewEncoder(w).Encode(proto.Info{PID: os.Getpid(), RunDir: run, Socket: h.socket, Protocol: wire.Protocol})
	})
	mux.HandleFunc("GET /v1/config", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(wire.ConfigResult{})
	})
	mux.HandleFunc("POST /v1/agents/{id}/close", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("POST /v1/wait", func(w http.ResponseWriter, r *http.Request) {
		close(h.waiting)
		select {
		case <-h.answer:
		case <-r.Context().Done():
			return
		}
		st := map[string]proto.Status{"a1": proto.StatusCompleted}
		for i := range 40000 {
			st[fmt.Sprintf("not-an-agent-%05d", i)] = proto.StatusNotFound
		}
		_ = json.NewEncoder(w).Encode(proto.WaitResult{Status: st})
	})
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		st := h.streams[min(h.opened, len(h.streams)-1)]
		h.opened++
		h.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, id := range st.agents {
			wire.WriteEvent(w, wire.EventAgent, proto.Summary{AgentID: id, Status: proto.StatusRunning}) //nolint:errcheck // a scripted host's stream: the client under test judges what arrives
		}
		wire.WriteEvent(w, wire.EventSynced, struct{}{}) //nolint:errcheck // a scripted host's stream: the client under test judges what arrives
		w.(http.Flusher).Flush()
		beat := time.NewTicker(20 * time.Millisecond)
		defer beat.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case id := <-h.agents:
				wire.WriteEvent(w, wire.EventAgent, proto.Summary{AgentID: id, Status: proto.StatusRunning}) //nolint:errcheck // a scripted host's stream: the client under test judges what arrives
				w.(http.Flusher).Flush()
			case <-h.end:
				if st.then == "end" {
					return
				}
			case <-beat.C:
				if st.then == "beat" {
					fmt.Fprint(w, ": heartbeat\n\n")
					w.(http.Flusher).Flush()
				}
			}
		}
	})
	srv := &http.Server{Handler: protocol2(mux)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return h
}

func (h *scriptHost) set(edit func(h *scriptHost)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	edit(h)
}

// attachScript attaches a viewer to h with the deadline limit.
func attachScript(t *testing.T, h *scriptHost, limit time.Duration) (*Remote, *proto.Subscription) {
	t.Helper()
	c := NewClient(h.socket, "").WithOrigin("viewer")
	c.limit = limit
	r, err := attachWith(context.Background(), c, false, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Detach()
		<-r.Ended()
	})
	return r, r.Subscribe()
}

// ids returns the ids of r's agents.
func ids(r *Remote) []string {
	var out []string
	for _, a := range r.Agents() {
		out = append(out, a.AgentID)
	}
	return out
}

// warnings collects the warnings sub receives until one contains want.
func waitWarning(t *testing.T, sub *proto.Subscription, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var seen []string
	for {
		cs, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("no warning with %q; warnings: %q", want, seen)
		}
		for _, c := range cs {
			for _, w := range c.Warnings {
				if strings.Contains(w, want) {
					return w
				}
				seen = append(seen, w)
			}
		}
	}
}

// TestViewerResyncsWhenTheHostEndsItsStream: the host ends a viewer's event
// stream and still answers. The viewer says it reconnected, and its table
// is the host's again: an agent forgotten meanwhile leaves it, a new one
// comes. (It used to close, saying the host stopped serving.)
func TestViewerResyncsWhenTheHostEndsItsStream(t *testing.T) {
	h := startScriptHost(t, scriptStream{[]string{"a", "b"}, "end"}, scriptStream{[]string{"a", "c"}, "beat"})
	r, sub := attachScript(t, h, 0)
	if got := ids(r); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("agents at first: %v", got)
	}
	close(h.end)
	w := waitWarning(t, sub, "reconnected to the host")
	if !strings.Contains(w, "the host ended the event stream and answered a new request") {
		t.Errorf("the reconnection says %q", w)
	}
	testkit.Eventually(t, 10*time.Second, "the table to be the host's again", func() bool { return slices.Equal(ids(r), []string{"a", "c"}) })
	if err := r.Err(); err != nil {
		t.Fatalf("the viewer ended: %v", err)
	}
}

// TestViewerResyncsAfterASilentStream: a stream that says nothing (no
// heartbeat) for the deadline while the host answers a fresh request is
// opened again, saying so; the host is not called hung.
func TestViewerResyncsAfterASilentStream(t *testing.T) {
	h := startScriptHost(t, scriptStream{[]string{"a"}, "silent"}, scriptStream{[]string{"a", "b"}, "beat"})
	r, sub := attachScript(t, h, 300*time.Millisecond)
	w := waitWarning(t, sub, "reconnected to the host")
	if !strings.Contains(w, "the event stream was silent for 300ms while the host answered") {
		t.Errorf("the reconnection says %q", w)
	}
	testkit.Eventually(t, 10*time.Second, "the table to be the host's again", func() bool { return slices.Equal(ids(r), []string{"a", "b"}) })
	if err := r.Err(); err != nil {
		t.Fatalf("the viewer ended: %v", err)
	}
}

// TestViewerOfAHostThatStopsAnsweringEnds: silent stream, and the fresh
// request gets no answer either: now the host is said not to answer.
func TestViewerOfAHostThatStopsAnsweringEnds(t *testing.T) {
	h := startScriptHost(t, scriptStream{[]string{"a"}, "silent"})
	r, _ := attachScript(t, h, 300*time.Millisecond)
	h.set(func(h *scriptHost) { h.infoSilent = true })
	select {
	case <-r.Ended():
	case <-time.After(10 * time.Second):
		t.Fatal("the viewer of a silent host did not end")
	}
	var na *NoAnswerError
	if err := r.Err(); !errors.As(err, &na) || na.Answers || !strings.Contains(err.Error(), "did not answer within 300ms") {
		t.Fatalf("the viewer ended with %v, want a host that does not answer", err)
	}
}

// TestViewerOfARestartedHostEnds: the stream ends and another host (a new
// run) answers on the socket: the viewer ends naming it, rather than
// showing another host's agents as the one it attached to.
func TestViewerOfARestartedHostEnds(t *testing.T) {
	h := startScriptHost(t, scriptStream{[]string{"a"}, "end"}, scriptStream{[]string{"z"}, "beat"})
	r, _ := attachScript(t, h, 0)
	h.set(func(h *scriptHost) { h.runDir = "run-2" })
	close(h.end)
	<-r.Ended()
	var se *StoppedError
	if err := r.Err(); !errors.As(err, &se) || se.Successor != os.Getpid() || !strings.Contains(err.Error(), "attach again") {
		t.Fatalf("the viewer of a restarted host ended with %v", err)
	}
}

// TestStreamThatKeepsBreakingIsReported: a host that answers but ends every
// stream right after its snapshot is followed maxReconnects times, then
// reported.
func TestStreamThatKeepsBreakingIsReported(t *testing.T) {
	h := startScriptHost(t, scriptStream{[]string{"a"}, "end"})
	close(h.end)
	c := NewClient(h.socket, "")
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	reconnects := 0
	err := c.SSE(context.Background(), nil, func(ev Event) error {
		if ev.Name == EventReconnected {
			reconnects++
		}
		return nil
	})
	if reconnects != maxReconnects || err == nil || !strings.Contains(err.Error(), "its event stream broke 4 times in a row") {
		t.Fatalf("after %d reconnections: %v", reconnects, err)
	}
}

// TestCallLeftWithoutAnAnswerByAnAnsweringHost: a call the host never
// answers, while it answers a fresh request, is not "hung": the error says
// the host answers others and the operation may still be carried out.
func TestCallLeftWithoutAnAnswerByAnAnsweringHost(t *testing.T) {
	h := startScriptHost(t, scriptStream{nil, "beat"})
	c := NewClient(h.socket, "")
	c.limit = 300 * time.Millisecond
	_, err := c.Close(context.Background(), "a")
	var na *NoAnswerError
	if !errors.As(err, &na) || !na.Answers {
		t.Fatalf("close left without an answer: %v", err)
	}
	want := fmt.Sprintf("subdash serving %s did not answer this request within 300ms, though it answers others (a fresh request took ", h.socket)
	if s := err.Error(); !strings.HasPrefix(s, want) || !strings.HasSuffix(s, "check with subdash ctl list before repeating it") || strings.Contains(s, "hung") {
		t.Fatalf("close left without an answer:\n%s\nwant it to start %q", s, want)
	}
}

// protocol2 is h answering as a host of protocol 2 does: every answer
// names it (wire.ProtocolHeader).
func protocol2(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(wire.ProtocolHeader, strconv.Itoa(wire.Protocol))
		h.ServeHTTP(w, r)
	})
}
