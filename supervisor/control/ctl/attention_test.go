package ctl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// The operations of SPEC §11 over the socket and `subdash ctl`: send
// --queue, cancel-queue, seen, and needs_you in list.
func TestQueueAndSeenOverTheSocket(t *testing.T) {
	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(4))
	srv, c := controlkit.Serve(t, s)
	ctx := context.Background()
	env := map[string]string{"SUBDASH_SOCKET": srv.Path()}

	busy, err := c.Spawn(ctx, "sleep")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCtl(t, env, "", "send", busy.AgentID[:8], "next task", "--queue")
	var sr proto.SendResult
	if code != ExitOK || json.Unmarshal([]byte(out), &sr) != nil || !sr.Queued || sr.Status != proto.StatusRunning {
		t.Fatalf("send --queue: exit %d, %q, %q", code, out, errOut)
	}
	list, err := c.List(ctx)
	if err != nil || len(list.Agents) != 1 || list.Agents[0].QueuedMessage != "next task" {
		t.Fatalf("list after queue: %+v %v", list, err)
	}
	// The MCP tool's send keeps Memo's busy error.
	if _, err := c.Send(ctx, busy.AgentID, "x", false); proto.CodeOf(err) != proto.CodeBusy {
		t.Fatalf("send without queue on a running agent: %v", err)
	}
	code, out, errOut = runCtl(t, env, "", "send", busy.AgentID, "x", "--queue", "--interrupt")
	if code != ExitUsage || !strings.Contains(errOut, "--interrupt and --queue exclude each other") {
		t.Fatalf("both flags: exit %d, %q, %q", code, out, errOut)
	}
	code, out, errOut = runCtl(t, env, "", "cancel-queue", busy.AgentID)
	if code != ExitOK || !strings.Contains(out, `"dropped_queued_message": true`) {
		t.Fatalf("cancel-queue: exit %d, %q, %q", code, out, errOut)
	}
	code, _, errOut = runCtl(t, env, "", "cancel-queue", busy.AgentID)
	if code != ExitError || errOut != "cancel-queue failed: agent "+busy.AgentID+" has no queued message\n" {
		t.Fatalf("second cancel-queue: exit %d, %q", code, errOut)
	}

	done, err := c.Spawn(ctx, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, []string{done.AgentID}, nil); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCtl(t, env, "", "list")
	if code != ExitOK || !strings.Contains(out, `"needs_you": {`) || !strings.Contains(out, `"reason": "completed"`) {
		t.Fatalf("list: needs_you missing: %s", out)
	}
	code, out, errOut = runCtl(t, env, "", "seen", done.AgentID)
	if code != ExitOK || !strings.Contains(out, `"status": "completed"`) {
		t.Fatalf("seen: exit %d, %q, %q", code, out, errOut)
	}
	list, _ = c.List(ctx)
	for _, a := range list.Agents {
		if a.NeedsYou != nil {
			t.Fatalf("agent %s still needs you after seen: %+v", a.AgentID, a.NeedsYou)
		}
	}
	if _, err := c.MarkSeen(ctx, "nope"); proto.CodeOf(err) != proto.CodeNotFound {
		t.Fatalf("seen unknown: %v", err)
	}
}
