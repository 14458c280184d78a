package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor"
)

// TestSubagentCannotSpawnWithoutAllowNested runs an agent that calls
// `subdash ctl spawn` on its own dashboard, as a subagent might: without
// --allow-nested the control socket refuses it (SPEC §2: subagents do not
// spawn subagents of their own), with it the nested agent appears.
func TestSubagentCannotSpawnWithoutAllowNested(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow-nested=%v", allow), func(t *testing.T) {
			w := newWorkspace(t)
			// the agent runs ctl with its message as the nested message,
			// unless the message says it is the nested one
			command := fmt.Sprintf(`read m; case "$m" in nested*) echo nested-ran;; *) %q ctl --socket %q spawn "nested $m" 2>&1;; esac`,
				binPath, w.socket)
			args := append([]string{"serve", "--command", command}, w.flags()...)
			if allow {
				args = append(args, "--allow-nested")
			}
			p := start(t, nil, args...)
			waitListening(t, p, w.socket)
			var res supervisor.SpawnResult
			ctlOK(t, w, &res, "spawn", "outer")
			var wr supervisor.WaitResult
			ctlOK(t, w, &wr, "wait", res.AgentID, "--timeout-ms", "60000")
			out := *wr.Details[res.AgentID].LastOutput
			var list struct{ Agents []supervisor.Summary }
			ctlOK(t, w, &list, "list")
			if allow {
				if len(list.Agents) != 2 || !strings.Contains(out, `"agent_id"`) {
					t.Fatalf("with --allow-nested: %d agents; the outer agent printed %q", len(list.Agents), out)
				}
				return
			}
			want := "spawn_agent failed: agent " + res.AgentID + " may not start or instruct agents"
			if len(list.Agents) != 1 || !strings.Contains(out, want) || !strings.Contains(out, "--allow-nested") {
				t.Fatalf("without --allow-nested: %d agents; the outer agent printed %q, want %q", len(list.Agents), out, want)
			}
		})
	}
}
