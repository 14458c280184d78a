package client_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// A viewer's HostConfig is its host's: the command as shown, the limit,
// the preset, the notes after the one saying it is attached, the host's
// features; read-only says so.
func TestViewerHostConfigIsTheHosts(t *testing.T) {
	p, err := supervisor.LookupPreset("claude", "--x", "")
	if err != nil {
		t.Fatal(err)
	}
	s := controlkit.Supervisor(t, func(c *supervisor.Config) {
		c.Preset, c.CommandShown, c.MaxAgents, c.Notes = p, "claude (preset)", 3, []string{"a note"}
	})
	srv, _ := controlkit.Serve(t, s)
	for _, readOnly := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		r, err := client.Attach(ctx, srv.Path(), "", readOnly)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		h := r.HostConfig()
		r.Detach()
		want := s.HostConfig()
		if h.Command != want.Command || h.MaxAgents != 3 || h.PresetName != "claude" || h.PresetArgs != "--x" || h.PresetFormat != "claude" ||
			h.Dir != want.Dir || h.ReadOnly != readOnly || !h.Has(proto.FeatureTextMessage) {
			t.Errorf("read-only %v: viewer's host config %+v, host's %+v", readOnly, h, want)
		}
		first := "attached to subdash host, pid "
		if readOnly {
			first = "read-only: attached to subdash host, pid "
		}
		if len(h.Notes) != 2 || !strings.HasPrefix(h.Notes[0], first) || h.Notes[1] != "a note" {
			t.Errorf("read-only %v: notes %q", readOnly, h.Notes)
		}
	}
}

// A viewer of a host of an older subdash, whose /v1/info lists no
// features, has none (SPEC §9: it hides what that host cannot do).
func TestViewerOfAnOlderHostHasNoFeatures(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "old.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/info", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"pid": 4242, "dir": "/src", "socket": "`+sock+`", "command": "memo --dangerous", "max_agents": 4, "protocol": 1, "kind": "serve", "viewers": 0}`) //nolint:errcheck // a failed answer fails the client under test
	})
	mux.HandleFunc("GET /v1/config", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"config": {"Command": "memo --dangerous", "MaxAgents": 4, "Dir": "/src", "Environ": null, "Runner": null, "Notes": ["memo is old"]}}`) //nolint:errcheck // a failed answer fails the client under test
	})
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "event: synced\ndata: {}\n\n") //nolint:errcheck // a failed answer fails the client under test
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	hs := &http.Server{Handler: mux}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := client.Attach(ctx, sock, "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Detach()
	h := r.HostConfig()
	if h.Has(proto.FeatureTextMessage) || len(h.Features) != 0 {
		t.Errorf("features of an older host: %v", h.Features)
	}
	if h.Command != "memo --dangerous" || h.MaxAgents != 4 || len(h.Notes) != 2 || h.Notes[1] != "memo is old" ||
		!strings.HasPrefix(h.Notes[0], "attached to subdash serve, pid 4242") {
		t.Errorf("host config %+v", h)
	}
}
