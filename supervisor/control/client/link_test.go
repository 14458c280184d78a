package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// breakable dials socket and can cut every connection it made (Cut), as
// a dropped ssh link cuts its channels.
type breakable struct {
	Socket string
	mu     sync.Mutex
	conns  []net.Conn
}

func (b *breakable) Dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", b.Socket)
	if err == nil {
		b.mu.Lock()
		b.conns = append(b.conns, c)
		b.mu.Unlock()
	}
	return c, err
}

func (b *breakable) Cut() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		_ = c.Close()
	}
	b.conns = nil
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
	b := &breakable{Socket: sock}
	pid := os.Getpid() // a pid that runs here too: its /proc must not be read
	for _, c := range []struct {
		known int
		want  string
	}{
		{0, "the process serving ssh://test/src accepted the connection but did not answer within 300ms; it is stopped, hung, or not a subdash"},
		{pid, fmt.Sprintf("subdash (pid %d there) serving ssh://test/src accepted the connection but did not answer within 300ms; it is hung or stopped: there, ps -o stat= -p %d shows T when stopped and kill -CONT %d resumes it", pid, pid, pid)},
	} {
		via := NewClientVia("ssh://test/src", b.Dial).WithHostInfo(proto.Info{PID: c.known})
		via.limit = 300 * time.Millisecond
		_, err := via.List(t.Context())
		var na *NoAnswerError
		if !errors.As(err, &na) || !na.Remote || na.PID != c.known || na.Program != "" || err.Error() != c.want {
			t.Errorf("a host there that does not answer, pid %d known: %v (%+v)\nwant %q", c.known, err, na, c.want)
		}
	}

	h := startScriptHost(t, scriptStream{[]string{"a"}, "end"})
	via := NewClientVia("ssh://test/src", (&breakable{Socket: h.socket}).Dial)
	via.limit = 300 * time.Millisecond
	if _, err := via.Info(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.set(func(h *scriptHost) { h.infoSilent = true })
	close(h.end)
	err = via.SSE(t.Context(), nil, func(Event) error { return nil })
	var se *StoppedError
	if want := fmt.Sprintf("the subdash host (pid %d) stopped serving ssh://test/src", pid); !errors.As(err, &se) || err.Error() != want {
		t.Fatalf("a host there that ended its stream: %v, want %q", err, want)
	}
}
