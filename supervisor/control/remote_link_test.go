package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// breakable dials socket and can cut every connection it made, as a
// dropped ssh link cuts its channels.
type breakable struct {
	socket string
	mu     sync.Mutex
	conns  []net.Conn
}

func (b *breakable) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", b.socket)
	if err == nil {
		b.mu.Lock()
		b.conns = append(b.conns, c)
		b.mu.Unlock()
	}
	return c, err
}

func (b *breakable) cut() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		_ = c.Close()
	}
	b.conns = nil
}

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
	s := newSupervisor(t, 2)
	srv, c := serve(t, s)
	ctx := t.Context()
	var ids []string
	for _, m := range []string{"first", "second"} {
		res, err := c.Spawn(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		waitFinal(t, c, res.AgentID)
		ids = append(ids, res.AgentID)
	}
	b := &breakable{socket: srv.Path()}
	f := &relinker{again: true, meanwhile: func() {
		if _, err := s.Forget(context.Background(), ids[1]); err != nil {
			t.Error(err)
		}
	}}
	via := NewClientVia("ssh://test/src", b.dial)
	t.Cleanup(via.http.CloseIdleConnections)
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := AttachVia(actx, via, "ssh://test/src", false, f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Detach()
	if hc := r.HostConfig(); hc.Where != "ssh://test/src" || !strings.Contains(hc.Notes[0], "on ssh://test/src") {
		t.Fatalf("host config %+v: the viewer names the host's machine", hc)
	}
	sub := r.Subscribe()
	defer sub.Close()
	b.cut()
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
	b.cut()
	select {
	case <-r.Ended():
	case <-time.After(10 * time.Second):
		t.Fatal("the viewer did not end when the relinker gave up")
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "gave up reconnecting") {
		t.Fatalf("ended with %v", err)
	}
}

// TestAClientOverALinkNamesTheHostsPidThere: a client over a link takes
// no pid from its connections (their peer is ssh), so its errors name the
// pid the host said it has there (WithHostInfo, Info), and never what
// /proc of this machine says of that number: a call left unanswered says
// how to look there; a host that ended its stream and answers no more is
// named with its pid. Without a pid known, "the process serving …".
func TestAClientOverALinkNamesTheHostsPidThere(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "silent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()    //nolint:errcheck // a listener the test only holds
	var held []net.Conn // accepted, never answered: a host stopped there
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	b := &breakable{socket: sock}
	pid := os.Getpid() // a pid that runs here too: its /proc must not be read
	for _, c := range []struct {
		known int
		want  string
	}{
		{0, "the process serving ssh://test/src accepted the connection but did not answer within 300ms; it is stopped, hung, or not a subdash"},
		{pid, fmt.Sprintf("subdash (pid %d there) serving ssh://test/src accepted the connection but did not answer within 300ms; it is hung or stopped: there, ps -o stat= -p %d shows T when stopped and kill -CONT %d resumes it", pid, pid, pid)},
	} {
		via := NewClientVia("ssh://test/src", b.dial).WithHostInfo(proto.Info{PID: c.known})
		via.limit = 300 * time.Millisecond
		_, err := via.List(t.Context())
		var na *NoAnswerError
		if !errors.As(err, &na) || !na.Remote || na.PID != c.known || na.Program != "" || err.Error() != c.want {
			t.Errorf("a host there that does not answer, pid %d known: %v (%+v)\nwant %q", c.known, err, na, c.want)
		}
	}

	h := startScriptHost(t, scriptStream{[]string{"a"}, "end"})
	via := NewClientVia("ssh://test/src", (&breakable{socket: h.socket}).dial)
	via.limit = 300 * time.Millisecond
	if _, err := via.Info(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.set(func(h *scriptHost) { h.infoSilent = true })
	close(h.end)
	err = via.SSE(t.Context(), func(Event) error { return nil })
	var se *StoppedError
	if want := fmt.Sprintf("the subdash host (pid %d) stopped serving ssh://test/src", pid); !errors.As(err, &se) || err.Error() != want {
		t.Fatalf("a host there that ended its stream: %v, want %q", err, want)
	}
}
