package client_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor/control/client"
)

// relinker is a Relinker whose answer the test chooses; meanwhile runs
// while "the link is down", before it answers.
type relinker struct {
	mu        sync.Mutex
	calls     int
	stopped   []bool
	again     bool
	err       error
	meanwhile func()
}

func (f *relinker) Relink(ctx context.Context, cause error, hostStopped bool, say func(string)) (bool, error) {
	f.mu.Lock()
	f.calls++
	f.stopped = append(f.stopped, hostStopped)
	again, err, meanwhile := f.again, f.err, f.meanwhile
	f.mu.Unlock()
	say("reconnecting to ssh://test/src (" + cause.Error() + ")")
	if meanwhile != nil {
		meanwhile()
	}
	return again, err
}

// TestAViewerOverALinkResyncs: a viewer of a host on another machine
// whose link drops asks its Relinker; once relinked, the new event stream
// resyncs it: an agent forgotten while the link was down leaves the table
// (a forget is published), the others stay, and the viewer says it
// reconnected. When the Relinker gives up, the viewer ends with its
// reason.
func TestAViewerOverALinkResyncs(t *testing.T) {
	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(2))
	srv, c := controlkit.Serve(t, s)
	ctx := t.Context()
	var ids []string
	for _, m := range []string{"first", "second"} {
		res, err := c.Spawn(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		controlkit.WaitFinal(t, c, res.AgentID)
		ids = append(ids, res.AgentID)
	}
	b := &client.Breakable{Socket: srv.Path()}
	f := &relinker{again: true, meanwhile: func() {
		if _, err := s.Forget(context.Background(), ids[1]); err != nil {
			t.Error(err)
		}
	}}
	via := client.NewClientVia("ssh://test/src", b.Dial)
	t.Cleanup(via.CloseIdleConnections)
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := client.AttachVia(actx, via, "ssh://test/src", false, f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Detach()
	if hc := r.HostConfig(); hc.Where != "ssh://test/src" || !strings.Contains(hc.Notes[0], "on ssh://test/src") {
		t.Fatalf("host config %+v: the viewer names the host's machine", hc)
	}
	sub := r.Subscribe()
	defer sub.Close()
	b.Cut()
	var forgot bool
	var links []string
	deadline, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	for !forgot || len(links) != 2 {
		cs, err := sub.Next(deadline)
		if err != nil {
			t.Fatalf("forgotten %v, link news %q: %v", forgot, links, err)
		}
		for _, ch := range cs {
			forgot = forgot || ch.AgentID == ids[1] && ch.Forgotten
			if ch.Link != "" {
				links = append(links, ch.Link)
				if strings.HasPrefix(ch.Link, "reconnected") != ch.LinkUp {
					t.Fatalf("%q with LinkUp %v", ch.Link, ch.LinkUp)
				}
			}
		}
	}
	if !strings.HasPrefix(links[0], "reconnecting to ssh://test/src (") || !strings.HasPrefix(links[1], "reconnected to ssh://test/src after ") {
		t.Fatalf("link news %q", links)
	}
	if as := r.Agents(); len(as) != 1 || as[0].AgentID != ids[0] {
		t.Fatalf("after the resync the viewer holds %d agents, want the first only", len(as))
	}
	if f.stopped[0] {
		t.Fatal("a cut link was taken for a host that stopped")
	}

	f.mu.Lock()
	f.again, f.err, f.meanwhile = false, errors.New("gave up reconnecting to ssh://test/src after 30s: Connection refused"), nil
	f.mu.Unlock()
	b.Cut()
	select {
	case <-r.Ended():
	case <-time.After(10 * time.Second):
		t.Fatal("the viewer did not end when the relinker gave up")
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "gave up reconnecting") {
		t.Fatalf("ended with %v", err)
	}
}
