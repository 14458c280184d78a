package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/control/wire/wiretest"
)

// wireHost is a live host for TestWireRoutesAnswerTheirTypes: the fake
// claude CLI of testdata/fakecli, a --notify-command that fails (a
// warning event), and a raw HTTP client on its socket.
type wireHost struct {
	t      *testing.T
	http   *http.Client
	golden map[string]map[string]bool
}

func newWireHost(t *testing.T) (*wireHost, *supervisor.Supervisor) {
	t.Helper()
	fake, err := filepath.Abs("../../testdata/fakecli")
	if err != nil {
		t.Fatal(err)
	}
	p, err := supervisor.LookupPreset("claude", "", "")
	if err != nil {
		t.Fatal(err)
	}
	s := newSupervisorWith(t, func(c *supervisor.Config) {
		c.Preset, c.Command = p, p.Describe()
		c.Environ = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "FAKECLI_LOG="+filepath.Join(t.TempDir(), "calls.log"))
		c.NotifyCommand = "exit 7"
	})
	srv, _ := serve(t, s)
	var d net.Dialer
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "unix", srv.Path())
	}}}
	t.Cleanup(hc.CloseIdleConnections)
	return &wireHost{t: t, http: hc, golden: wiretest.Golden(t)}, s
}

// call makes a request and checks its JSON answer's names against route's
// golden entry (the error entry for a status of 400 or more); it returns
// the decoded answer.
func (h *wireHost) call(method, path, route string, body any) map[string]any {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://subdash"+path, rd)
	req.Header.Set(wire.SessionHeader, "wire") // the multi-agent routes' root mailbox
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close() //nolint:errcheck // a response body, read: its Close cannot lose data
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		route = "error"
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		h.t.Fatalf("%s %s: %v: %s", method, path, err, data)
	}
	h.check(route, doc)
	return doc
}

// check fails for any name of doc that route's golden entry lacks.
func (h *wireHost) check(route string, doc any) {
	h.t.Helper()
	want, ok := h.golden[route]
	if !ok {
		h.t.Fatalf("no golden entry for %s", route)
	}
	got := map[string]bool{}
	wiretest.Paths(doc, "", want, got)
	for p := range got {
		if !want[p] {
			h.t.Errorf("%s answers %q, which its golden entry lacks", route, p)
		}
	}
}

// TestWireRoutesAnswerTheirTypes makes every request of the golden on a
// live host, and reads its event stream.
func TestWireRoutesAnswerTheirTypes(t *testing.T) {
	h, _ := newWireHost(t)
	events := h.stream(t)
	h.call("GET", "/v1/info", "GET /v1/info", nil)
	h.call("GET", "/v1/config", "GET /v1/config", nil)
	sp := h.call("POST", "/v1/agents", "POST /v1/agents", map[string]any{"message": "hello"})
	id, _ := sp["agent_id"].(string)
	ms := 30000
	h.call("POST", "/v1/wait", "POST /v1/wait", map[string]any{"ids": []string{id}, "timeout_ms": ms})
	h.call("GET", "/v1/agents", "GET /v1/agents", nil)
	h.call("GET", "/v1/agents/"+id+"/window?from=-1&n=10", "GET /v1/agents/{id}/window", nil)
	tr := h.call("GET", "/v1/agents/"+id+"/transcript?from=0&n=100", "GET /v1/agents/{id}/transcript", nil)
	if entries, _ := tr["entries"].([]any); len(entries) == 0 {
		t.Fatalf("the fake claude's transcript has no entries: %v", tr)
	}
	h.call("GET", "/v1/agents/"+id+"/search?q=stub&transcript=1", "GET /v1/agents/{id}/search", nil)
	h.call("POST", "/v1/agents/"+id+"/seen", "POST /v1/agents/{id}/seen", nil)
	h.call("POST", "/v1/agents/"+id+"/send", "POST /v1/agents/{id}/send", map[string]any{"message": "again", "queue": true})
	h.call("POST", "/v1/wait", "POST /v1/wait", map[string]any{"ids": []string{id}, "timeout_ms": ms})
	h.call("POST", "/v1/agents/"+id+"/interrupt", "POST /v1/agents/{id}/interrupt", nil) // not running: an error
	h.call("DELETE", "/v1/agents/"+id+"/queue", "DELETE /v1/agents/{id}/queue", nil)     // none queued: an error
	h.call("POST", "/v1/agents/"+id+"/approve", "POST /v1/agents/{id}/approve", nil)     // none pending: an error
	h.call("POST", "/v1/agents/"+id+"/close", "POST /v1/agents/{id}/close", nil)
	h.call("POST", "/v1/agents/"+id+"/resume", "POST /v1/agents/{id}/resume", nil)
	h.call("POST", "/v1/agents/"+id+"/forget", "POST /v1/agents/{id}/forget", nil)
	h.call("POST", "/v1/multi-agent/spawn", "POST /v1/multi-agent/spawn", map[string]any{"message": "hi", "task_name": "wire"})
	h.call("POST", "/v1/multi-agent/wait", "POST /v1/multi-agent/wait", map[string]any{"timeout_ms": 30000})
	h.call("POST", "/v1/multi-agent/message", "POST /v1/multi-agent/message", map[string]any{"target": "wire", "message": "note"})
	h.call("POST", "/v1/multi-agent/interrupt", "POST /v1/multi-agent/interrupt", map[string]any{"target": "wire"})
	h.call("GET", "/v1/multi-agent/agents?path_prefix=wire", "GET /v1/multi-agent/agents", nil)
	seen := map[string]bool{}
	deadline := time.After(20 * time.Second)
	for !seen["agent"] || !seen["synced"] || !seen["output"] || !seen["warning"] {
		select {
		case ev := <-events:
			seen[ev.Name] = true
			var doc any
			if err := json.Unmarshal(ev.Data, &doc); err != nil {
				t.Fatalf("event %s: %v", ev.Name, err)
			}
			h.check("event: "+ev.Name, doc)
		case <-deadline:
			t.Fatalf("events seen: %v; want agent, synced, output and warning", seen)
		}
	}
}

// stream reads GET /v1/events until the test ends, sending each event.
func (h *wireHost) stream(t *testing.T) <-chan client.Event {
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://subdash/v1/events", nil)
	resp, err := h.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan client.Event, 1000)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done }) //nolint:errcheck // the stream is ended on purpose
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		var ev client.Event
		for sc.Scan() {
			switch l := sc.Text(); {
			case l == "" && ev.Name != "":
				select {
				case out <- ev:
				default:
				}
				ev = client.Event{}
			case strings.HasPrefix(l, "event: "):
				ev.Name = strings.TrimPrefix(l, "event: ")
			case strings.HasPrefix(l, "data: "):
				ev.Data = append(ev.Data, strings.TrimPrefix(l, "data: ")...)
			}
		}
	}()
	return out
}
