package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestLogCapSixtyMegabytes: a 61 MB flood under `serve --max-log-size
// 10MiB` leaves log files under 10 MiB that end with the flood's last
// line; `ctl logs` marks the cut with the count `ctl list` reports, and
// `ctl logs --raw` gives only the child's bytes, the cut said on stderr
// (SPEC §5).
func TestLogCapSixtyMegabytes(t *testing.T) {
	w := newWorkspace(t)
	serveWith(t, w, nil, "--command", "head -c 45600000 /dev/zero | base64 -w 76; echo THE-LAST-LINE", "--max-log-size", "10MiB")
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "flood")
	if d := waitDone(t, w, sp.AgentID).Details[sp.AgentID]; d.Status != proto.StatusCompleted || !strings.HasSuffix(*d.LastOutput, "THE-LAST-LINE") {
		t.Fatalf("%s %q", d.Status, *d.LastOutput)
	}
	paths, _ := filepath.Glob(filepath.Join(w.state, "runs", "*", sp.AgentID, "1-*.log*"))
	var size int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		size += fi.Size()
	}
	if size > 10<<20 || len(paths) < 2 {
		t.Fatalf("log files %v hold %d bytes", paths, size)
	}
	var list proto.ListResult
	ctlOK(t, w, &list, "list")
	dropped := list.Agents[0].LogDropped
	const total int64 = 800000*77 + int64(len("THE-LAST-LINE\n"))
	if size+dropped != total {
		t.Errorf("files %d + log_dropped %d != %d bytes of output", size, dropped, total)
	}
	text := ctlOK(t, w, nil, "logs", sp.AgentID)
	if !strings.Contains(text, "subdash: "+itoa(dropped)+" bytes (") || !strings.HasSuffix(text, "\nTHE-LAST-LINE\n") {
		t.Errorf("ctl logs: no marker of %d bytes, or not the last line", dropped)
	}
	r := runCtl(t, nil, "", "logs", sp.AgentID, "--raw", "--socket", w.socket)
	if r.code != 0 || int64(len(r.stdout)) != size || !strings.HasSuffix(r.stdout, "\nTHE-LAST-LINE\n") ||
		!strings.HasPrefix(r.stderr, "subdash: "+itoa(dropped)+" bytes (") || !strings.Contains(r.stderr, "after byte 5242") {
		t.Errorf("ctl logs --raw: exit %d, %d bytes, stderr %q", r.code, len(r.stdout), r.stderr)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestFloodOnASmallDisk runs two flooding agents with the state directory
// on a 50 MB tmpfs (as root; skipped where mount is not allowed): logging
// pauses before the disk is full, serve says so on stderr, the agents keep
// running and stop when interrupted, the journal records it.
func TestFloodOnASmallDisk(t *testing.T) {
	w := newWorkspace(t)
	if err := os.MkdirAll(w.state, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=50m", "tmpfs", w.state).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", w.state).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", w.state, err, out)
		}
	})
	p := serveWith(t, w, nil, "--command", "yes a-flooding-agent-writes-this-line", "--grace", "200ms")
	var a, b proto.SpawnResult
	ctlOK(t, w, &a, "spawn", "one")
	ctlOK(t, w, &b, "spawn", "two")
	var st syscall.Statfs_t
	testkit.Eventually(t, 60*time.Second, "logging paused", func() bool {
		var list proto.ListResult
		ctlOK(t, w, &list, "list")
		return len(list.Agents) == 2 && list.Agents[0].LogDropped > 0 && list.Agents[1].LogDropped > 0
	})
	if err := syscall.Statfs(w.state, &st); err != nil {
		t.Fatal(err)
	}
	if free := st.Bavail * uint64(st.Bsize); free < 2<<20 {
		t.Errorf("%d bytes free on the 50 MB disk: logging did not stop at the floor", free)
	}
	var list proto.ListResult
	ctlOK(t, w, &list, "list")
	for _, ag := range list.Agents {
		if ag.Status != proto.StatusRunning || ag.Failure != "" {
			t.Errorf("agent %s: %s, failure %q", ag.AgentID, ag.Status, ag.Failure)
		}
	}
	ctlOK(t, w, nil, "interrupt", a.AgentID)
	ctlOK(t, w, nil, "interrupt", b.AgentID)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_, stderr := p.wait(t)
	if !strings.Contains(stderr, "subdash serve: logging paused: the filesystem of "+w.state) {
		t.Errorf("serve's stderr does not say logging paused:\n%s", stderr)
	}
	journals, _ := filepath.Glob(filepath.Join(w.state, "runs", "*", "journal.jsonl"))
	if len(journals) != 1 {
		t.Fatalf("journals %v", journals)
	}
	j, _ := os.ReadFile(journals[0])
	if n := strings.Count(string(j), `"event":"submission_ended"`); n != 2 || !strings.Contains(string(j), `"event":"run_ended"`) {
		t.Errorf("the journal has %d submission_ended events and no run_ended: the journal stopped writing", n)
	}
}
