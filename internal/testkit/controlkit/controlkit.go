// Package controlkit serves real hosts on a control socket for the tests
// of the packages on the far side of it, the client's and ctl's: a
// supervisor (hostkit), its server on a socket of the test's own, a
// client and a viewer of it. The server's own tests keep theirs, since
// the server's package cannot import what imports it. Only tests import
// it.
package controlkit

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/server"
	"github.com/subdash/subdash/supervisor/proto"
)

// Command is the agent command of these tests: it reads its message and
// sleeps for "sleep…", fails with exit code 3 for "fail…", and otherwise
// answers "got: <message>".
const Command = `read m; case "$m" in sleep*) exec sleep 30;; fail*) echo oops >&2; exit 3;; esac; echo "got: $m"`

// Supervisor returns a host running Command in a temporary working
// directory DIR, at most 2 agents at once, with its socket at
// DIR/subdash/s.sock, its configuration then changed by edits; it is
// shut down when the test ends (hostkit.Supervisor).
func Supervisor(t *testing.T, edits ...func(*supervisor.Config)) *supervisor.Supervisor {
	t.Helper()
	return hostkit.Supervisor(t, Command, append([]func(*supervisor.Config){func(c *supervisor.Config) {
		c.MaxAgents = 2
		c.Socket = filepath.Join(c.Dir, "subdash", "s.sock")
	}}, edits...)...)
}

// Serve serves s's control socket until the test ends (the server is
// closed before the supervisor shuts down) and returns the server with a
// client of it. A failure to serve or to close fails the test.
func Serve(t *testing.T, s *supervisor.Supervisor) (*server.Server, *client.Client) {
	t.Helper()
	srv, err := server.Listen(s)
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

// Attach serves s (Serve) and attaches a viewer to it, detached when the
// test ends; it returns the viewer and Serve's client.
func Attach(t *testing.T, s *supervisor.Supervisor) (*client.Remote, *client.Client) {
	t.Helper()
	srv, c := Serve(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := client.Attach(ctx, srv.Path(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Detach)
	return r, c
}

// SpecError fails the test unless err is a *proto.Error with code and
// message.
func SpecError(t *testing.T, err error, code proto.ErrorCode, message string) {
	t.Helper()
	var se *proto.Error
	if !errors.As(err, &se) {
		t.Fatalf("error = %v (%T), want *proto.Error %q", err, err, message)
	}
	if se.Code != code || se.Message != message {
		t.Fatalf("error = {%s %q}, want {%s %q}", se.Code, se.Message, code, message)
	}
}

// WaitFinal waits through c until agent id is final and returns its
// detail.
func WaitFinal(t *testing.T, c proto.Waiter, id string) proto.WaitDetail {
	t.Helper()
	ms := proto.MaxWaitTimeoutMS
	res, err := c.Wait(context.Background(), []string{id}, &ms)
	if err != nil || res.TimedOut {
		t.Fatalf("wait %s: %+v %v", id, res, err)
	}
	return res.Details[id]
}

// SpawnFinal spawns an agent with message through c, waits until it is
// final and returns what the spawn answered.
func SpawnFinal(t *testing.T, c *client.Client, message string) proto.SpawnResult {
	t.Helper()
	sp, err := c.Spawn(context.Background(), message)
	if err != nil {
		t.Fatal(err)
	}
	WaitFinal(t, c, sp.AgentID)
	return sp
}

// Seen waits, over the changes r publishes, until cond holds; after 10 s
// it fails the test saying what never happened.
func Seen(t *testing.T, r *client.Remote, what string, cond func() bool) {
	t.Helper()
	sub := r.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for !cond() {
		if _, err := sub.Next(ctx); err != nil {
			t.Fatalf("%s: never happened (%v)", what, err)
		}
	}
}

// AgentOf returns agent id's snapshot in r's table.
func AgentOf(r *client.Remote, id string) (proto.AgentInfo, bool) {
	for _, a := range r.Agents() {
		if a.AgentID == id {
			return a, true
		}
	}
	return proto.AgentInfo{}, false
}
