package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// gateCommand is the agent command of the progress tests: "until PATH"
// runs until the file PATH exists, then every message is answered
// "got: <message>", so a test ends each agent when it chooses.
const gateCommand = `read m; case "$m" in until*) f="${m#until }"; while [ ! -e "$f" ]; do sleep 0.05; done;; esac; echo "got: $m"`

// progressRule is how long a waiting call with a progress token may stay
// silent (SPEC §6).
const progressRule = 5 * time.Second

// progressNote is a notifications/progress the client handled, and when.
type progressNote struct {
	mcpsdk.ProgressNotificationParams
	at time.Time
}

// progressLog keeps what a client heard of progress.
type progressLog struct {
	mu    sync.Mutex
	notes []progressNote
}

func (l *progressLog) options() *mcpsdk.ClientOptions {
	return &mcpsdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcpsdk.ProgressNotificationClientRequest) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.notes = append(l.notes, progressNote{*req.Params, time.Now()})
	}}
}

// await waits until a notification's message starts with prefix and
// returns every notification up to it.
func (l *progressLog) await(t *testing.T, prefix string) []progressNote {
	t.Helper()
	return testkit.Poll(t, 30*time.Second, fmt.Sprintf("a progress notification saying %q", prefix), func() ([]progressNote, bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, n := range l.notes {
			if strings.HasPrefix(n.Message, prefix) {
				return append([]progressNote(nil), l.notes[:i+1]...), true
			}
		}
		return append([]progressNote(nil), l.notes...), false
	})
}

// TestMCPProgressWhileWaiting: an orchestrator's wait (the seed family,
// `subdash mcp` hosting its agents) and wait_agent (the multi-agent
// family, driving `subdash serve`) with a progress token, over agents
// that end when the test says, hear at the real rule: nothing for the
// first 5 s, then "0 of 2 ended; waited 5s of 30s" within 5 s of
// silence (and a margin for a busy machine), then "1 of 2 ended: <path>
// completed" when the first agent ends, total 2 and progress increasing
// throughout, and then the result.
func TestMCPProgressWhileWaiting(t *testing.T) {
	for _, family := range []string{"seed", "multi-agent"} {
		t.Run(family, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			flags := append([]string{"--tools", family, "--command", gateCommand, "--max-agents", "4", "--grace", "200ms"}, w.flags()...)
			if family == "multi-agent" {
				serveWith(t, w, nil, "--command", gateCommand, "--max-agents", "4", "--grace", "200ms")
			}
			heard := &progressLog{}
			cs, _, stderr := startMCPWith(t, heard.options(), []string{"SUBDASH_MCP_SESSION=progress-e2e"}, flags...)
			gate := func(name string) string { return filepath.Join(w.base, name) }
			defer func() { _ = os.WriteFile(gate("long"), nil, 0o644) }()

			args := map[string]any{"timeout_ms": 30000}
			tool, first := "wait", ""
			if family == "seed" {
				var short, long proto.SpawnResult
				toolOK(t, cs, "spawn_agent", map[string]any{"message": "until " + gate("short")}, &short)
				toolOK(t, cs, "spawn_agent", map[string]any{"message": "until " + gate("long")}, &long)
				args["ids"] = []string{short.AgentID, long.AgentID}
				first = short.AgentPath
			} else {
				tool, first = "wait_agent", "/root/short"
				for _, name := range []string{"short", "long"} {
					res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "spawn_agent",
						Arguments: map[string]any{"message": "until " + gate(name), "task_name": name}})
					if err != nil || res.IsError {
						t.Fatalf("spawn_agent %s: %v %+v; stderr %s", name, err, res, stderr)
					}
				}
			}
			p := &mcpsdk.CallToolParams{Name: tool, Arguments: args}
			p.SetProgressToken("e2e-" + family)
			start := time.Now()
			done := make(chan *mcpsdk.CallToolResult, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), p)
				if err != nil {
					t.Errorf("%s: %v", tool, err)
				}
				done <- res
			}()

			beat := heard.await(t, "0 of 2 ended; waited ")
			if after := beat[0].at.Sub(start); after < progressRule || after > progressRule+3*time.Second {
				t.Errorf("the first heartbeat came %v after the call; due after %v of silence", after, progressRule)
			}
			if err := os.WriteFile(gate("short"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			notes := heard.await(t, "1 of 2 ended: ")
			var res *mcpsdk.CallToolResult
			select {
			case res = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("no result after the end; stderr %s", stderr)
			}
			if res == nil || res.IsError {
				t.Fatalf("%s: %+v", tool, res)
			}
			if end := notes[len(notes)-1]; end.Message != "1 of 2 ended: "+first+" completed" || end.Progress != 1 {
				t.Errorf("the end: %q, progress %v", end.Message, end.Progress)
			}
			last := -1.0
			for _, n := range notes {
				if n.ProgressToken != "e2e-"+family || n.Total != 2 || n.Progress <= last {
					t.Errorf("%q: token %v, total %v, progress %v after %v", n.Message, n.ProgressToken, n.Total, n.Progress, last)
				}
				last = n.Progress
			}
			text := res.Content[0].(*mcpsdk.TextContent).Text
			if family == "seed" && !strings.Contains(text, `"completed"`) || family == "multi-agent" && !strings.Contains(text, "Wait completed.") {
				t.Errorf("%s's result: %s", tool, text)
			}
		})
	}
}
