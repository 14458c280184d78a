package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// A host whose --max-agents passes its open-files limit says so at start,
// by how much and what to do; a spawn that hits the limit (EMFILE) ends
// that agent errored with the limit named, nothing else fails or is lost,
// and once agents are closed spawns run again. The host runs
// under `prlimit --nofile=128:128` (Go raises the soft limit to the hard
// one, so both are lowered).
func TestSpawnPastTheOpenFilesLimit(t *testing.T) {
	prl := requireTool(t, "prlimit")
	w := newWorkspace(t)
	cmd := exec.Command(prl, append([]string{"--nofile=128:128", binPath, "serve", "--command", "exec sleep 600", "--max-agents", "100", "--grace", "1s"}, w.flags()...)...)
	cmd.Env = testEnv()
	host := startCmd(t, cmd)
	waitListening(t, host, w.socket)
	ctx := context.Background()
	c := client.NewClient(w.socket, "")

	var running, refused []string
	for i := range 40 {
		sp, err := c.Spawn(ctx, fmt.Sprintf("task %d", i))
		if err != nil {
			t.Fatalf("spawn %d: the host did not answer: %v", i, err)
		}
		switch sp.Status {
		case proto.StatusRunning:
			running = append(running, sp.AgentID)
		case proto.StatusErrored:
			refused = append(refused, sp.AgentID)
		default:
			t.Fatalf("spawn %d: status %s", i, sp.Status)
		}
	}
	if len(running) < 5 || len(refused) == 0 {
		t.Fatalf("with 128 open files: %d agents ran, %d failed to start; want some of each", len(running), len(refused))
	}
	ms := 1000 // they are final already
	wr, err := c.Wait(ctx, refused, &ms)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range refused {
		d := wr.Details[id]
		le := ""
		if d.LastError != nil {
			le = *d.LastError
		}
		for _, want := range []string{"too many open files", "open-files limit, ulimit -n 128", "lower --max-agents"} {
			if !strings.Contains(le, want) {
				t.Errorf("agent %s failed to start with %q: it does not say %q", id, le, want)
			}
		}
	}

	// Nothing lost: every agent is listed, those that started still run.
	ls, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]proto.Status{}
	for _, a := range ls.Agents {
		status[a.AgentID] = a.Status
	}
	if len(status) != 40 {
		t.Errorf("list has %d agents, want the 40 spawned", len(status))
	}
	for _, id := range running {
		if status[id] != proto.StatusRunning {
			t.Errorf("agent %s that started is %s", id, status[id])
		}
	}

	// The host goes on: closing agents frees their files.
	for _, id := range running[:5] {
		if _, err := c.Close(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := c.Spawn(ctx, "after the close")
	if err != nil || sp.Status != proto.StatusRunning {
		t.Errorf("a spawn after closing five agents: %s, %v; want it running", sp.Status, err)
	}

	_ = syscall.Kill(host.cmd.Process.Pid, syscall.SIGTERM)
	_, stderr := host.wait(t)
	for _, want := range []string{"--max-agents 100 needs about 564 open files", "the open-files limit (ulimit -n) is 128", "436 short", "raise it (ulimit -n 1024)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("serve's start does not say %q:\n%s", want, stderr)
		}
	}
}
