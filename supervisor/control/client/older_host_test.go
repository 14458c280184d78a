package client

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestLongMessageToAnOlderHost: a host whose info names no
// FeatureTextMessage gets even a long message in a JSON body.
func TestLongMessageToAnOlderHost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string // content types of spawn requests
	var message string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/info", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(proto.Info{PID: os.Getpid(), Protocol: wire.Protocol})
	})
	mux.HandleFunc("POST /v1/agents", func(w http.ResponseWriter, r *http.Request) {
		var req proto.SpawnRequest
		err := json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		got, message = append(got, r.Header.Get("Content-Type")), req.Message
		mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(proto.SpawnResult{Summary: proto.Summary{AgentID: "a1"}})
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)  //nolint:errcheck // http.ErrServerClosed at the deferred Close
	defer srv.Close() //nolint:errcheck // cleanup of the stand-in host
	c := NewClient(path, "")
	defer c.CloseIdleConnections()
	msg := strings.Repeat("x", textAbove+1) // just long enough for a text body
	if _, err := c.SpawnFrom(context.Background(), strings.NewReader(msg), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Spawn(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != "application/json" || got[1] != "application/json" || message != msg {
		t.Fatalf("an older host got %v and a message of %d bytes; want two JSON bodies with the whole %d", got, len(message), len(msg))
	}
}
