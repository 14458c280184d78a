package client_test

import (
	"context"
	"errors"
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

// TestAnotherProtocolSaysWhichSideToUpgrade: a client (ctl's, the MCP
// server's) and a viewer that meet a host of another control protocol
// refuse it, saying which side to upgrade: a host of protocol 1 (no
// header, its answers otherwise alike), an error answer of one, and a
// host newer than this subdash.
func TestAnotherProtocolSaysWhichSideToUpgrade(t *testing.T) {
	older := "speaks control protocol 1, older than this subdash's 2: upgrade the host (quit it and start it again with this subdash), or use the subdash that started it"
	newer := "speaks control protocol 3, newer than this subdash's 2: upgrade this subdash to the host's version, or use the subdash that started the host"
	for _, c := range []struct {
		host int
		want string
	}{{1, older}, {3, newer}} {
		sock, _ := controlkit.ProtocolHost(t, c.host)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cl := client.NewClient(sock, "")
		_, listErr := cl.List(ctx)
		_, closeErr := cl.Close(ctx, "a1")
		_, attachErr := client.Attach(ctx, sock, "", false)
		cl.CloseIdleConnections()
		cancel()
		for what, err := range map[string]error{"list": listErr, "close": closeErr, "attach": attachErr} {
			var pe *client.ProtocolError
			if !errors.As(err, &pe) || pe.Host != c.host || !strings.HasSuffix(err.Error(), c.want) || !strings.Contains(err.Error(), sock) {
				t.Errorf("%s on a host of protocol %d: %v\nwant it to end %q", what, c.host, err, c.want)
			}
		}
	}
}
