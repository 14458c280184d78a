package builtin

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// stopGrace is how long runStoppable waits, once its context is cancelled,
// for the task to stop by itself before leaving it behind.
const stopGrace = 500 * time.Millisecond

// errLeftBehind is what a task's writes return once runStoppable has given
// up on it.
var errLeftBehind = errors.New("the agent has stopped")

// runStoppable reads the task from stdin and runs it (see readAndRun) in a
// goroutine, and returns its status. Once ctx is cancelled the task has
// stopGrace to return; a task still blocked then (reading a file that never
// answers, or stdin) is left behind: runStoppable prints the "stopped:"
// line the task would have printed and returns StatusError. Either way
// nothing reaches stdout or stderr after runStoppable returns.
func runStoppable(ctx context.Context, cfg config, stdin io.Reader, stdout, stderr io.Writer) int {
	h := &handover{done: make(chan struct{})}
	go func() {
		h.finish(readAndRun(ctx, cfg, stdin, h.writer(stdout), h.writer(stderr)))
	}()
	select {
	case <-h.done:
		return h.status
	case <-ctx.Done():
	}
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-h.done:
		return h.status
	case <-timer.C:
	}
	if status, finished := h.leave(); finished {
		return status // it returned between the timer and leave
	}
	warnf(stderr, "stopped: %v\n", context.Cause(ctx))
	return StatusError
}

// handover decides, under one lock, between a task that finishes and a
// runStoppable that stops waiting for it: either the task has returned
// after all its writes, or it will write nothing more.
type handover struct {
	mu     sync.Mutex
	done   chan struct{} // closed when the task has returned
	status int           // the task's status, once done is closed
	left   bool          // runStoppable gave up: writes are dropped
}

// writer returns w as seen by the task: each Write holds h's lock and
// fails with errLeftBehind once h.leave has been called.
func (h *handover) writer(w io.Writer) io.Writer {
	return handoverWriter{h: h, w: w}
}

// finish records the task's status; the caller is the task's goroutine,
// after its last write.
func (h *handover) finish(status int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.left {
		return
	}
	h.status = status
	close(h.done)
}

// leave stops the task's writes and reports the task's status if it has
// finished all the same.
func (h *handover) leave() (status int, finished bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.done:
		return h.status, true
	default:
	}
	h.left = true
	return 0, false
}

// handoverWriter is a writer of the task, see handover.writer.
type handoverWriter struct {
	h *handover
	w io.Writer
}

// Unwrap returns the underlying writer (waitTaken asks what it is).
func (hw handoverWriter) Unwrap() io.Writer { return hw.w }

// Write writes p to the underlying writer unless the task was left behind.
func (hw handoverWriter) Write(p []byte) (int, error) {
	hw.h.mu.Lock()
	defer hw.h.mu.Unlock()
	if hw.h.left {
		return 0, errLeftBehind
	}
	return hw.w.Write(p)
}
