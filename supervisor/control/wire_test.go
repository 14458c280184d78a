package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

// The /v1 wire stays additive (SPEC §6, docs/automation.md): a JSON name once sent is
// never renamed or dropped. testdata/wire.golden lists, for every route and
// event, the JSON names of its answer: the answer type filled in whole
// (every optional field set), flattened to paths ("logs.runs_dir",
// "agents[].status", "status.{}" for a map's values). A rename or a drop
// fails TestWireNames; a new name is added to the golden with -update.
// TestWireRoutesAnswerTheirTypes checks on a live host that each route
// answers with no name outside its golden entry.

var updateWire = flag.Bool("update", false, "rewrite testdata/wire.golden")

// wireTypes maps each route or event to its answer's type.
var wireTypes = []struct {
	route string
	v     any
}{
	{"GET /v1/info", proto.Info{}},
	{"GET /v1/config", ConfigResult{}},
	{"GET /v1/agents", proto.ListResult{}},
	{"POST /v1/agents", proto.SpawnResult{}},
	{"POST /v1/agents/{id}/send", proto.SendResult{}},
	{"POST /v1/agents/{id}/interrupt", proto.StatusResult{}},
	{"POST /v1/agents/{id}/close", proto.StatusResult{}},
	{"POST /v1/agents/{id}/resume", proto.StatusResult{}},
	{"POST /v1/agents/{id}/forget", proto.StatusResult{}},
	{"POST /v1/agents/{id}/seen", proto.StatusResult{}},
	{"DELETE /v1/agents/{id}/queue", proto.StatusResult{}},
	{"POST /v1/agents/{id}/approve", proto.ApprovalResult{}},
	{"POST /v1/agents/{id}/deny", proto.ApprovalResult{}},
	{"POST /v1/wait", proto.WaitResult{}},
	{"GET /v1/agents/{id}/window", WindowResult{}},
	{"GET /v1/agents/{id}/transcript", TranscriptResult{}},
	{"GET /v1/agents/{id}/search", proto.SearchResult{}},
	{"GET /v1/search (a hit line)", proto.SearchHit{}},
	{"GET /v1/search (the last line)", proto.SearchSummary{}},
	{"POST /v1/multi-agent/spawn", proto.TreeAgent{}},
	{"POST /v1/multi-agent/message", proto.TreeAgent{}},
	{"POST /v1/multi-agent/interrupt", proto.TreeAgent{}},
	{"POST /v1/multi-agent/wait", proto.MailboxResult{}},
	{"GET /v1/multi-agent/agents", proto.TreeList{}},
	{"error", errorBody{}},
	{"event: agent", proto.AgentInfo{}},
	{"event: synced", struct{}{}},
	{"event: output", outputEvent{}},
	{"event: warning", warningEvent{}},
}

// TestWireNames compares every answer's JSON names with the golden.
func TestWireNames(t *testing.T) {
	var b strings.Builder
	for _, w := range wireTypes {
		fmt.Fprintf(&b, "%s\n", w.route)
		for _, p := range namesOf(t, w.v) {
			fmt.Fprintf(&b, "\t%s\n", p)
		}
	}
	golden := filepath.Join("testdata", "wire.golden")
	if *updateWire {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("the /v1 wire changed: JSON names are added (go test ./supervisor/control -run TestWireNames -update), never renamed or dropped\n%s",
			diffLines(string(want), b.String()))
	}
}

// goldenNames returns the golden's names per route.
func goldenNames(t *testing.T) map[string]map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "wire.golden"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	route := ""
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.HasPrefix(l, "\t") {
			route = l
			out[route] = map[string]bool{}
			continue
		}
		out[route][strings.TrimSpace(l)] = true
	}
	return out
}

// namesOf fills v's type in whole and returns the JSON paths of its
// encoding, sorted.
func namesOf(t *testing.T, v any) []string {
	t.Helper()
	p := reflect.New(reflect.TypeOf(v))
	fill(p.Elem(), 0)
	data, err := json.Marshal(p.Interface())
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	paths(doc, "", nil, set)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// fill sets every field of v to a value that JSON does not leave out.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	if v.Type() == reflect.TypeOf(time.Time{}) {
		v.Set(reflect.ValueOf(time.Unix(1e9, 0).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// paths adds the JSON paths of doc under prefix to set. Objects whose
// keys are a map's (in maps, from the golden; else guessed as none) get
// "{}" instead of their keys.
func paths(doc any, prefix string, maps map[string]bool, set map[string]bool) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch d := doc.(type) {
	case map[string]any:
		if len(d) == 0 {
			if prefix != "" {
				set[prefix] = true
			}
			return
		}
		isMap := maps[join("{}")] || maps == nil && prefix != "" && len(d) == 1 && d["x"] != nil
		for k, v := range d {
			if isMap {
				k = "{}"
			}
			p := join(k)
			set[p] = true
			paths(v, p, maps, set)
		}
	case []any:
		p := prefix + "[]"
		set[p] = true
		for _, e := range d {
			paths(e, p, maps, set)
		}
	}
}

// diffLines says which lines of want are missing from got and which are
// new.
func diffLines(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

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
	return &wireHost{t: t, http: hc, golden: goldenNames(t)}, s
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
	req.Header.Set(SessionHeader, "wire") // the multi-agent routes' root mailbox
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
	paths(doc, "", want, got)
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
func (h *wireHost) stream(t *testing.T) <-chan Event {
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://subdash/v1/events", nil)
	resp, err := h.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan Event, 1000)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done }) //nolint:errcheck // the stream is ended on purpose
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		var ev Event
		for sc.Scan() {
			switch l := sc.Text(); {
			case l == "" && ev.Name != "":
				select {
				case out <- ev:
				default:
				}
				ev = Event{}
			case strings.HasPrefix(l, "event: "):
				ev.Name = strings.TrimPrefix(l, "event: ")
			case strings.HasPrefix(l, "data: "):
				ev.Data = append(ev.Data, strings.TrimPrefix(l, "data: ")...)
			}
		}
	}()
	return out
}
