package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/subdash/subdash/supervisor/control"
	"github.com/subdash/subdash/supervisor/proto"
)

// failover is the Operations of `subdash mcp`: it drives the subdash that
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

func (f *failover) current() control.Operations {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur.ops
}

// takeOver replaces old, the backend that could not be reached, unless
// another call already did, and returns the backend to use.
func (f *failover) takeOver(old control.Operations) (control.Operations, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur.ops != old {
		return f.cur.ops, nil
	}
	fmt.Fprintln(f.stderr, "subdash mcp: the subdash this server drove stopped serving; attaching again")
	b, err := f.attach()
	if err != nil {
		return nil, err
	}
	f.cur.close()
	f.cur = b
	return b.ops, nil
}

// close lets go of the current backend.
func (f *failover) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur.close()
}

// viaFailover runs op on the current backend, and once more on a new one when the
// current one could not be reached.
func viaFailover[T any](f *failover, op func(control.Operations) (T, error)) (T, error) {
	o := f.current()
	v, err := op(o)
	var notServing *control.NotServingError
	if !errors.As(err, &notServing) {
		return v, err
	}
	o, aerr := f.takeOver(o)
	if aerr != nil {
		return v, err
	}
	return op(o)
}

// Spawn calls Spawn on the current backend.
func (f *failover) Spawn(ctx context.Context, message string) (proto.SpawnResult, error) {
	return viaFailover(f, func(o control.Operations) (proto.SpawnResult, error) { return o.Spawn(ctx, message) })
}

// Send calls Send on the current backend.
func (f *failover) Send(ctx context.Context, id, message string, interrupt bool) (proto.SendResult, error) {
	return viaFailover(f, func(o control.Operations) (proto.SendResult, error) { return o.Send(ctx, id, message, interrupt) })
}

// Interrupt calls Interrupt on the current backend.
func (f *failover) Interrupt(ctx context.Context, id string) (proto.StatusResult, error) {
	return viaFailover(f, func(o control.Operations) (proto.StatusResult, error) { return o.Interrupt(ctx, id) })
}

// Close calls Close on the current backend.
func (f *failover) Close(ctx context.Context, id string) (proto.StatusResult, error) {
	return viaFailover(f, func(o control.Operations) (proto.StatusResult, error) { return o.Close(ctx, id) })
}

// Resume calls Resume on the current backend.
func (f *failover) Resume(ctx context.Context, id string) (proto.StatusResult, error) {
	return viaFailover(f, func(o control.Operations) (proto.StatusResult, error) { return o.Resume(ctx, id) })
}

// Wait calls Wait on the current backend.
func (f *failover) Wait(ctx context.Context, ids []string, timeoutMS *int) (proto.WaitResult, error) {
	return viaFailover(f, func(o control.Operations) (proto.WaitResult, error) { return o.Wait(ctx, ids, timeoutMS) })
}

// List calls List on the current backend.
func (f *failover) List(ctx context.Context) (proto.ListResult, error) {
	return viaFailover(f, func(o control.Operations) (proto.ListResult, error) { return o.List(ctx) })
}

// Logs calls Logs on the current backend.
func (f *failover) Logs(ctx context.Context, id string, seq int, raw bool, w io.Writer) error {
	_, err := viaFailover(f, func(o control.Operations) (struct{}, error) { return struct{}{}, o.Logs(ctx, id, seq, raw, w) })
	return err
}
