// Package testkit holds the helpers that the tests of every package share,
// instead of a copy in each: waiting for a condition with a deadline
// (Eventually, Poll) and a buffer that a process or a goroutine writes while
// the test reads it (SyncBuffer). Only tests import it; it imports no
// subdash package, so the tests of any package can.
//
// The house rule it serves: a test never sleeps and hopes. It polls what
// the user would see (a screen, a socket, a file, a status) until it holds
// or a deadline passes, and then fails saying what it waited for and what
// it saw last.
package testkit

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"
)

// pollFirst and pollMax bound the pause between two looks at a condition:
// the first look is at once, the pause doubles from pollFirst up to
// pollMax, so a condition that holds within a millisecond costs about one,
// and one that takes seconds (a screen in tmux, a process starting) is
// not looked at more than about 60 times a second.
const (
	pollFirst = time.Millisecond
	pollMax   = 16 * time.Millisecond
)

// Eventually looks at cond until it holds and fails the test (t.Fatalf,
// from the goroutine running the test) with "what: not within d" when it
// does not within d.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	Poll(t, d, what, func() (struct{}, bool) { return struct{}{}, cond() })
}

// Poll calls get until it reports true and returns the value it returned
// then: a screen, a pid, a status. When it does not within d, it fails the
// test with what and the last value get returned (formatted with %v), so
// the failure shows where things stood.
func Poll[T any](t testing.TB, d time.Duration, what string, get func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(d)
	pause := pollFirst
	for {
		v, ok := get()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last: %s", what, d, describe(v))
			return v
		}
		time.Sleep(pause)
		pause = min(2*pause, pollMax)
	}
}

// describe formats a polled value for a failure: nothing for the empty
// struct of Eventually, strings on a line of their own.
func describe(v any) string {
	switch v := v.(type) {
	case struct{}:
		return "the condition was false"
	case string:
		return "\n" + v
	}
	return fmt.Sprintf("%+v", v)
}

// SyncBuffer is a bytes.Buffer that one writer (a process's stderr, a
// program's output) and concurrent readers may use at once. The zero
// SyncBuffer is empty and ready to use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
