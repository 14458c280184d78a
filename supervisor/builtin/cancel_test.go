package builtin

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// cancelOnWrite records what is written and cancels a context on the first
// write. It has no WriteString method, so every write comes through Write.
type cancelOnWrite struct {
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.cancel()
	return w.buf.Write(p)
}

func (w *cancelOnWrite) String() string { return w.buf.String() }

// runWithin runs the agent and fails the test if it has not returned
// within a generous bound; the bound only guards against a hang, nothing
// waits for it to pass.
func runWithin(t *testing.T, ctx context.Context, dir, message string, stdout *cancelOnWrite, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, strings.NewReader(message), stdout, &stderr, dir, args)
	}()
	select {
	case status := <-done:
		return status, stderr.String()
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
		return 0, ""
	}
}

func TestPaceStopsWhenContextIsCancelled(t *testing.T) {
	dir := newFixture(t)
	for _, message := range []string{"audit .", "summarize ."} {
		t.Run(message, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stdout := &cancelOnWrite{cancel: cancel}
			// An hour between lines: only the cancelled context can end
			// the pause after the first line.
			status, stderr := runWithin(t, ctx, dir, message, stdout, "--pace", "1h")
			if status != StatusError {
				t.Errorf("status = %d, want %d", status, StatusError)
			}
			if n := strings.Count(stdout.String(), "\n"); n != 1 {
				t.Errorf("wrote %d lines, want 1:\n%s", n, stdout.String())
			}
			if stderr != "stopped: context canceled\n" {
				t.Errorf("stderr = %q", stderr)
			}
		})
	}
}

func TestCancelledContextStopsTheWalk(t *testing.T) {
	dir := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stdout := &cancelOnWrite{cancel: cancel}
	status, stderr := runWithin(t, ctx, dir, "audit .", stdout)
	if status != StatusError || stdout.buf.Len() != 0 || stderr != "stopped: context canceled\n" {
		t.Errorf("got status %d, stdout %q, stderr %q; want 1, nothing, stopped", status, stdout.String(), stderr)
	}
}

func TestPaceFlag(t *testing.T) {
	tests := []struct {
		args   []string
		run    bool // the task goes on
		status int  // when it does not
		pace   time.Duration
	}{
		{nil, true, 0, 0},
		{[]string{"--pace", "50ms"}, true, 0, 50 * time.Millisecond},
		{[]string{"-pace=2s"}, true, 0, 2 * time.Second},
		{[]string{"--pace", "fast"}, false, StatusUsage, 0},
		{[]string{"--pace", "-5ms"}, false, StatusUsage, 0},
		{[]string{"--speed", "1"}, false, StatusUsage, 0},
		{[]string{"-h"}, false, StatusOK, 0},
	}
	for _, tt := range tests {
		cfg, status, ok := parseFlags(tt.args, &bytes.Buffer{})
		if ok != tt.run || (!ok && status != tt.status) || (ok && cfg.pace != tt.pace) {
			t.Errorf("parseFlags(%q) = pace %v, status %d, go on %v; want %v, %d, %v",
				tt.args, cfg.pace, status, ok, tt.pace, tt.status, tt.run)
		}
	}
}
