package mcpserver

import (
	"errors"
	"io"
	"sync"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// Backend is where the tools' operations go: a supervisor of this
// process, or the client of the host serving the socket, which both
// implement these roles of package proto.
type Backend interface {
	proto.Operator
	proto.Waiter
	proto.Lister
	proto.MultiAgent
	proto.Answerer
}

// Backends gives each tool call its backend.
type Backends interface {
	// Do runs op on the current backend and returns op's error. A
	// failover runs op once more, on a new backend, when the current one
	// could not be reached at all (*client.NotServingError), so no
	// operation runs twice.
	Do(op func(Backend) error) error
}

// One returns the Backends of b alone: every call goes to b.
func One(b Backend) Backends { return one{b} }

type one struct{ b Backend }

// Do runs op on the one backend.
func (o one) Do(op func(Backend) error) error { return op(o.b) }

// failover is the Backends of `subdash mcp`: it drives the subdash that
// serves the directory's control socket, or its own supervisor when none
// does, and when the one it drives goes away (its dashboard quit) it
// attaches again: to whoever serves the socket now, or to a supervisor of
// its own that serves it. A call is retried on the new backend only when
// the old one could not be reached at all, so no operation runs twice. The
// agents of the subdash that went away went with it.
type failover struct {
	attach func() (backend, error)
	stderr io.Writer

	mu  sync.Mutex
	cur backend
}

func newFailover(b backend, attach func() (backend, error), stderr io.Writer) *failover {
	return &failover{cur: b, attach: attach, stderr: stderr}
}

func (f *failover) current() Backend {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur.b
}

// takeOver replaces old, the backend that could not be reached, unless
// another call already did, and returns the backend to use.
func (f *failover) takeOver(old Backend) (Backend, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur.b != old {
		return f.cur.b, nil
	}
	logf(f.stderr, "subdash mcp: the subdash this server drove stopped serving; attaching again\n")
	b, err := f.attach()
	if err != nil {
		return nil, err
	}
	f.cur.close()
	f.cur = b
	return b.b, nil
}

// close lets go of the current backend.
func (f *failover) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur.close()
}

// Do runs op on the current backend, and once more on a new one when the
// current one could not be reached; the error is op's first one when no
// new backend could be had.
func (f *failover) Do(op func(Backend) error) error {
	b := f.current()
	err := op(b)
	var notServing *client.NotServingError
	if !errors.As(err, &notServing) {
		return err
	}
	b, aerr := f.takeOver(b)
	if aerr != nil {
		return err
	}
	return op(b)
}
