package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestWindowsAnswersEachWindow: POST /v1/windows (follow-many) answers
// every window asked in its order, a bad one with its own error while the
// others still come; more than wire.MaxWindows are refused with the
// limit named.
func TestWindowsAnswersEachWindow(t *testing.T) {
	f := &fakeEngine{}
	dir := t.TempDir()
	ln, err := listenUnix(filepath.Join(dir, "s.sock"), dir, os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(f, ln)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	defer func() {
		if err := srv.Close(); err != nil || <-done != nil {
			t.Errorf("close: %v", err)
		}
	}()
	c := client.NewClient(srv.Path(), dir)
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, err := c.Windows(ctx, []proto.WindowRequest{
		{AgentID: "a1", Submission: 1, From: -1, N: 5},
		{AgentID: "a1", Submission: 0, From: -1, N: 5},
		{AgentID: "a2", Submission: 1, Transcript: true, From: 0, N: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 3 {
		t.Fatalf("%d answers, want 3", len(ws))
	}
	if ws[0].Err != nil || len(ws[0].Window.Lines) != 1 || ws[0].Window.Lines[0].Text != "a line" {
		t.Errorf("first window: %+v", ws[0])
	}
	if ws[1].Err == nil || proto.CodeOf(ws[1].Err) != proto.CodeInvalid || !strings.Contains(ws[1].Err.Error(), "submission must be") {
		t.Errorf("a window of submission 0 answered %+v, want its own invalid error", ws[1])
	}
	if ws[2].Err != nil || !ws[2].Structured {
		t.Errorf("transcript window: %+v", ws[2])
	}
	if got := f.took(); strings.Join(got, ";") != "Window(a1, 1, -1, 5);Transcript(a2, 1, 0, 3)" {
		t.Errorf("the engine got %q", got)
	}
	many := make([]proto.WindowRequest, wire.MaxWindows+1)
	for i := range many {
		many[i] = proto.WindowRequest{AgentID: "a1", Submission: 1, From: -1, N: 1}
	}
	if _, err := c.Windows(ctx, many); err == nil || !strings.Contains(err.Error(), "at most 64 windows") {
		t.Errorf("%d windows answered %v, want a refusal naming the limit", len(many), err)
	}
}
