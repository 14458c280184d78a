package controlkit

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/subdash/subdash/supervisor/control/wire"
)

// ProtocolHost serves, on a socket of its own (DIR/s.sock of a folder of
// the test's, mode 0700: the rule of trust takes it), what a host of
// control protocol n answers to GET /v1/info, /v1/config, /v1/agents and
// /v1/events and to POST /v1/agents (spawn: agent a1) and
// /v1/agents/{id}/close (not found), each in the JSON both protocols
// share. Protocol 1, the last without wire.ProtocolHeader, sends none;
// any other names n there. It returns the socket and set, which changes
// the protocol from the next request on (a host replaced by one of
// another protocol). The server is closed when the test ends.
func ProtocolHost(t *testing.T, n int) (socket string, set func(n int)) {
	t.Helper()
	socket = filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	var protocol atomic.Int64
	protocol.Store(int64(n))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/info", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"pid": 4242, "dir": "/src", "socket": %q, "command": "memo", "max_agents": 4, "protocol": %d, "kind": "serve", "viewers": 0}`, socket, protocol.Load()) //nolint:errcheck // a failed answer fails the client under test
	})
	mux.HandleFunc("GET /v1/config", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"config": {"command": "memo", "max_agents": 4, "dir": "/src"}}`) //nolint:errcheck // as above
	})
	mux.HandleFunc("GET /v1/agents", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"agents": []}`) //nolint:errcheck // as above
	})
	mux.HandleFunc("POST /v1/agents", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"agent_id": "a1", "status": "running", "last_message": null}`) //nolint:errcheck // as above
	})
	mux.HandleFunc("POST /v1/agents/{id}/close", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error": "agent not found: %s", "code": "not_found"}`, r.PathValue("id")) //nolint:errcheck // as above
	})
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "event: synced\ndata: {}\n\n") //nolint:errcheck // as above
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := protocol.Load(); n != 1 {
			w.Header().Set(wire.ProtocolHeader, strconv.FormatInt(n, 10))
		}
		mux.ServeHTTP(w, r)
	})}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return socket, func(n int) { protocol.Store(int64(n)) }
}
