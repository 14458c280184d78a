package steer

import (
	"io"
	"sync"
)

// Stdin writes lines to a child's stdin in order from one goroutine (Run),
// so that no caller ever blocks on a child that does not read; Close ends
// it once everything queued was written. It carries the stream-json of
// approvals (SPEC §12) and of agents that take messages while they run.
type Stdin struct {
	mu      sync.Mutex
	lines   [][]byte
	closing bool
	wake    chan struct{}
}

// NewStdin returns an empty, open Stdin.
func NewStdin() *Stdin { return &Stdin{wake: make(chan struct{}, 1)} }

// Write queues line (with its newline) and reports whether it was queued:
// after Close it is dropped and Write reports false.
func (q *Stdin) Write(line []byte) bool {
	q.mu.Lock()
	ok := !q.closing
	if ok {
		q.lines = append(q.lines, line)
	}
	q.mu.Unlock()
	q.signal()
	return ok
}

// Close closes stdin once the queued lines are written. Safe to call more
// than once.
func (q *Stdin) Close() {
	q.mu.Lock()
	q.closing = true
	q.mu.Unlock()
	q.signal()
}

func (q *Stdin) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Run writes the queued lines to w until Close, then closes w. A write
// error (the child closed its stdin or exited) drops the rest.
func (q *Stdin) Run(w io.WriteCloser) {
	defer w.Close() //nolint:errcheck // the child's stdin: closing it flushes nothing, and a child gone is no error of ours (SPEC §4)
	for range q.wake {
		q.mu.Lock()
		lines, closing := q.lines, q.closing
		q.lines = nil
		q.mu.Unlock()
		for _, l := range lines {
			if _, err := w.Write(l); err != nil {
				q.Close()
				return
			}
		}
		if closing {
			q.mu.Lock()
			done := len(q.lines) == 0
			q.mu.Unlock()
			if done {
				return
			}
			q.signal()
		}
	}
}
