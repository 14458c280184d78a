package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestTextMessageBody: spawn and send take the message as a text/plain
// body (FeatureTextMessage), trimmed as a JSON one; send's interrupt and
// queue come in the query; errors are the operation's own.
func TestTextMessageBody(t *testing.T) {
	s := newSupervisor(t, 4)
	_, c := serve(t, s)
	post := func(path, body string, out any) int {
		t.Helper()
		resp, err := rawHTTP(t, c).Post("http://subdash"+path, "text/plain; charset=utf-8", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close() //nolint:errcheck // a response body, read: its Close cannot lose data
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	var sp proto.SpawnResult
	if code := post("/v1/agents", "\n  sleep a while \n", &sp); code != http.StatusCreated || sp.LastMessage != "sleep a while" {
		t.Fatalf("spawn with a text body: %d %+v", code, sp)
	}
	var eb wire.ErrorBody
	if code := post(wire.Send.At(sp.AgentID, url.Values{"interrupt": {"1"}, "queue": {"1"}}).URL, "x", &eb); code != http.StatusBadRequest || !strings.HasPrefix(eb.Error, "queue and interrupt exclude each other") {
		t.Errorf("send with interrupt and queue: %d %+v", code, eb)
	}
	var sr proto.SendResult
	if code := post(wire.Send.At(sp.AgentID, url.Values{"queue": {"1"}}).URL, "next one", &sr); code != http.StatusOK || !sr.Queued {
		t.Errorf("send with queue: %d %+v", code, sr)
	}
	// The interrupt keeps the queued message: the next submission takes
	// it before its own (SPEC §14); the agent reads the first line.
	sr = proto.SendResult{}
	if code := post(wire.Send.At(sp.AgentID, url.Values{"interrupt": {"1"}}).URL, "hello", &sr); code != http.StatusOK || sr.Status != proto.StatusRunning || sr.DroppedQueued {
		t.Errorf("send with interrupt: %d %+v", code, sr)
	}
	if d := waitFinal(t, c, sp.AgentID); d.LastOutput == nil || *d.LastOutput != "got: next one" || *d.LastMessage != "next one\n\nhello" {
		t.Errorf("the agent answered %+v, want got: next one", d)
	}
	if code := post("/v1/agents", " \t\n", &eb); code != http.StatusBadRequest || eb.Error != "message must not be empty" {
		t.Errorf("spawn with a blank text body: %d %+v", code, eb)
	}
	if left, _ := filepath.Glob(filepath.Join(s.RunDir(), "incoming", "*")); len(left) != 0 {
		t.Errorf("files left in incoming/: %v", left)
	}
}

// TestLongMessageIsStreamed: the client sends a message over 1 MiB as a
// text body to a host that takes one, and the supervisor gets it whole.
func TestLongMessageIsStreamed(t *testing.T) {
	s := newSupervisor(t, 4)
	_, c := serve(t, s)
	msg := strings.Repeat("sleep ", 1<<18) // 1.5 MiB
	sp, err := c.SpawnFrom(context.Background(), io.MultiReader(strings.NewReader("  "), strings.NewReader(msg)), "")
	if err != nil {
		t.Fatal(err)
	}
	if whole, err := s.Message(t.Context(), sp.AgentID, 0); err != nil || whole != strings.TrimSpace(msg) {
		t.Fatalf("the supervisor did not get the whole message (%d bytes, %v)", len(whole), err)
	}
	if _, err := c.Send(context.Background(), sp.AgentID, "  "+msg, true); err != nil {
		t.Fatal(err)
	}
	if whole, err := s.Message(t.Context(), sp.AgentID, 2); err != nil || whole != strings.TrimSpace(msg) {
		t.Fatalf("send: the supervisor did not get the whole message (%d bytes, %v)", len(whole), err)
	}
}
