package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testCommand is the agent command of these tests: it reads its message and
// sleeps for "sleep…", fails with exit code 3 for "fail…", and otherwise
// answers "got: <message>".
const testCommand = `read m; case "$m" in sleep*) exec sleep 30;; fail*) echo oops >&2; exit 3;; esac; echo "got: $m"`

// newSupervisor returns a supervisor running testCommand in a temporary
// working directory with its socket at <tmp>/subdash/s.sock, shut down when
// the test ends (hostkit.Supervisor).
func newSupervisor(t *testing.T, maxAgents int) *supervisor.Supervisor {
	t.Helper()
	return newSupervisorWith(t, func(c *supervisor.Config) { c.MaxAgents = maxAgents })
}

// newSupervisorWith is newSupervisor with a maximum of 2 agents and the
// configuration changed by edit.
func newSupervisorWith(t *testing.T, edit func(*supervisor.Config)) *supervisor.Supervisor {
	t.Helper()
	return hostkit.Supervisor(t, testCommand, func(c *supervisor.Config) {
		c.MaxAgents = 2
		c.Socket = filepath.Join(c.Dir, "subdash", "s.sock")
	}, edit)
}

// serve starts a control socket server for s, closed when the test ends
// (before the supervisor shuts down), and returns it with a client.
func serve(t *testing.T, s *supervisor.Supervisor) (*Server, *client.Client) {
	t.Helper()
	srv, err := Listen(s)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	c := client.NewClient(srv.Path(), s.Config().Dir)
	t.Cleanup(c.CloseIdleConnections)
	return srv, c
}

// specError asserts that err is a *proto.Error with code and message.
func specError(t *testing.T, err error, code proto.ErrorCode, message string) {
	t.Helper()
	var se *proto.Error
	if !errors.As(err, &se) {
		t.Fatalf("error = %v (%T), want *proto.Error %q", err, err, message)
	}
	if se.Code != code || se.Message != message {
		t.Fatalf("error = {%s %q}, want {%s %q}", se.Code, se.Message, code, message)
	}
}

// waitFinal waits through c until agent id is final and returns its detail.
func waitFinal(t *testing.T, c *client.Client, id string) proto.WaitDetail {
	t.Helper()
	ms := proto.MaxWaitTimeoutMS
	res, err := c.Wait(context.Background(), []string{id}, &ms)
	if err != nil || res.TimedOut {
		t.Fatalf("wait %s: %+v %v", id, res, err)
	}
	return res.Details[id]
}

// spawnFinal spawns an agent with message through c, waits until it is
// final and returns what the spawn answered.
func spawnFinal(t *testing.T, c *client.Client, message string) proto.SpawnResult {
	t.Helper()
	sp, err := c.Spawn(context.Background(), message)
	if err != nil {
		t.Fatal(err)
	}
	waitFinal(t, c, sp.AgentID)
	return sp
}

// mustList returns s's list (SPEC §3).
func mustList(t *testing.T, s *supervisor.Supervisor) proto.ListResult {
	t.Helper()
	res, err := s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// rawHTTP returns an HTTP client of c's socket, for requests the client
// never makes (bad bodies, raw answers); its connections close when the
// test ends.
func rawHTTP(t *testing.T, c *client.Client) *http.Client {
	t.Helper()
	var d net.Dialer
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "unix", c.Socket())
	}}}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}
