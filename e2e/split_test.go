package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestBuiltinSplitSpawnsChildrenOfItsOwn runs the built-in agent's split
// through the binary: on a host with --allow-nested (and a socket of its
// own, which the agent only knows from SUBDASH_SOCKET) it spawns one child
// per subfolder under itself in the tree and reports what they found;
// without --allow-nested it fails saying what to do and spawns nothing.
func TestBuiltinSplitSpawnsChildrenOfItsOwn(t *testing.T) {
	for _, allow := range []bool{true, false} {
		name := "allow-nested"
		if !allow {
			name = "no allow-nested"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorkspace(t)
			for file, body := range map[string]string{
				"a/x.go":  "// TODO: in a\n",
				"b/y.py":  "# FIXME: in b\n",
				"top.txt": "HACK: the folder's own\n",
			} {
				p := filepath.Join(w.dir, file)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"--preset", "builtin", "--max-agents", "2"}
			if allow {
				args = append(args, "--allow-nested")
			}
			serveWith(t, w, nil, args...)
			var sp proto.SpawnResult
			ctlOK(t, w, &sp, "spawn", "split .", "--task-name", "lead")
			var wr proto.WaitResult
			ctlOK(t, w, &wr, "wait", sp.AgentID, "--timeout-ms", "60000")
			logs := ctlOK(t, w, nil, "logs", sp.AgentID)
			agents := listAgents(t, w)
			if !allow {
				if wr.Status[sp.AgentID] != proto.StatusErrored || !strings.Contains(logs, "--allow-nested") || len(agents) != 1 {
					t.Fatalf("without --allow-nested: status %s, %d agents, log:\n%s", wr.Status[sp.AgentID], len(agents), logs)
				}
				return
			}
			if wr.Status[sp.AgentID] != proto.StatusCompleted {
				t.Fatalf("split ended %s, log:\n%s", wr.Status[sp.AgentID], logs)
			}
			// two slots: the second child waited for the first one's end
			for _, want := range []string{
				"→ spawned /root/lead/a: audit a", "✓ /root/lead/a: scanned 1 file in a",
				"→ spawned /root/lead/b: audit b", "✓ /root/lead/b: scanned 1 file in b",
				"TODO: 1, FIXME: 1, XXX: 0, HACK: 1 in . (2 child agents and my own files)",
			} {
				if !strings.Contains(logs, want) {
					t.Fatalf("the split's log lacks %q:\n%s", want, logs)
				}
			}
			children := 0
			for _, a := range agents {
				if a.AgentID == sp.AgentID {
					continue
				}
				children++
				if a.ParentID != sp.AgentID || (a.AgentPath != "/root/lead/a" && a.AgentPath != "/root/lead/b") || a.Status != proto.StatusCompleted {
					t.Errorf("child %s: parent %s, status %s; want a completed child of %s", a.AgentPath, a.ParentID, a.Status, sp.AgentID)
				}
			}
			if children != 2 {
				t.Fatalf("%d children, want 2: %+v", children, agents)
			}
			if tree := ctlOK(t, w, nil, "list", "--tree"); !strings.Contains(tree, "└─ lead") || !strings.Contains(tree, "   ├─ a ") || !strings.Contains(tree, "   └─ b ") {
				t.Fatalf("ctl list --tree:\n%s", tree)
			}
		})
	}
}

// TestBuiltinSplitWaitsForASlot: on a host of two slots where another
// agent runs, the built-in agent's split of a folder of three subfolders
// says in its log that it waits for a slot, spawns each child as soon as
// a slot frees (the other agent's, then its own children's), and audits
// every subfolder. The other agent holds its slot until the test
// interrupts it, once the split said it waits.
func TestBuiltinSplitWaitsForASlot(t *testing.T) {
	w := newWorkspace(t)
	for _, sub := range []string{"a", "b", "c"} {
		p := filepath.Join(w.dir, "tree", sub, "x.go")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("// TODO: in "+sub+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// "hold" runs until stopped; anything else is a task of the built-in
	// agent, as --preset builtin runs it
	command := `read m; case "$m" in hold) echo holding; exec sleep 60;; esac; printf '%s\n' "$m" | exec ` + shellQuote(binPath) + ` agent`
	serveWith(t, w, nil, "--command", command, "--allow-nested", "--max-agents", "2", "--grace", "200ms")
	var other, sp proto.SpawnResult
	ctlOK(t, w, &other, "spawn", "hold", "--task-name", "other")
	ctlOK(t, w, &sp, "spawn", "split tree", "--task-name", "lead")
	logs := testkit.Poll(t, dashWait, "the split to say it waits for a slot, or to end", func() (string, bool) {
		logs := ctlOK(t, w, nil, "logs", sp.AgentID)
		return logs, strings.Contains(logs, "waiting for a slot") || listAgents(t, w)[sp.AgentID].Status != proto.StatusRunning
	})
	if !strings.Contains(logs, "waiting for a slot: 2/2 running") {
		t.Fatalf("the split did not wait for a slot; its log:\n%s", logs)
	}
	ctlOK(t, w, nil, "interrupt", other.AgentID)
	wr := waitDone(t, w, sp.AgentID)
	logs = ctlOK(t, w, nil, "logs", sp.AgentID)
	if wr.Status[sp.AgentID] != proto.StatusCompleted {
		t.Fatalf("split ended %s, log:\n%s", wr.Status[sp.AgentID], logs)
	}
	for _, want := range []string{
		"→ spawned /root/lead/a: audit tree/a", "✓ /root/lead/a: scanned 1 file in tree/a",
		"→ spawned /root/lead/b: audit tree/b", "✓ /root/lead/b: scanned 1 file in tree/b",
		"→ spawned /root/lead/c: audit tree/c", "✓ /root/lead/c: scanned 1 file in tree/c",
		"TODO: 3, FIXME: 0, XXX: 0, HACK: 0 in tree (3 child agents and my own files)",
	} {
		if !strings.Contains(logs, want) {
			t.Fatalf("the split's log lacks %q:\n%s", want, logs)
		}
	}
}
