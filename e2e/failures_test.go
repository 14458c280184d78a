package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/subdash/subdash/supervisor/proto"
)

// limitFileSize gives process pid a file size limit of n bytes
// (RLIMIT_FSIZE, as `prlimit --fsize` does): Go ignores SIGXFSZ, so a
// write past it fails with EFBIG, as on a full disk.
func limitFileSize(t *testing.T, pid int, n uint64) {
	t.Helper()
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: n, Max: n}, nil); err != nil {
		t.Skipf("cannot set RLIMIT_FSIZE of %d: %v", pid, err)
	}
}

// floodAfterGo waits for a file named go in its working directory, then
// writes about 110 KB and a last line.
const floodAfterGo = `read m; while [ ! -e go ]; do sleep 0.05; done; seq 1 20000; echo after-limit`

// TestLogFileFailureIsSeenByPrograms: a log file that cannot be written is
// named, with its path and why, in list and wait details (SPEC §5); the
// agent's outcome is still its own.
func TestLogFileFailureIsSeenByPrograms(t *testing.T) {
	w := newWorkspace(t)
	p := serveWith(t, w, nil, "--command", floodAfterGo)
	limitFileSize(t, p.cmd.Process.Pid, 32<<10)
	var a proto.SpawnResult
	ctlOK(t, w, &a, "spawn", "x")
	if err := os.WriteFile(filepath.Join(w.dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var res proto.WaitResult
	ctlOK(t, w, &res, "wait", a.AgentID, "--timeout-ms", "60000")
	d := res.Details[a.AgentID]
	if d.Status != proto.StatusCompleted || !strings.Contains(d.Failure, "log file could not be written (file too large): "+w.state) {
		t.Fatalf("wait details: status %s, failure %q; want completed and the log file's path and why", d.Status, d.Failure)
	}
	var list struct{ Agents []proto.Summary }
	ctlOK(t, w, &list, "list")
	if len(list.Agents) != 1 || list.Agents[0].Failure != d.Failure {
		t.Fatalf("list: %+v; want the failure %q", list.Agents, d.Failure)
	}
}

// TestLogFileFailureIsSeenOnScreen: the row, the log pane's footer, the
// status line and the message line say so; the output still reaches the
// screen.
func TestLogFileFailureIsSeenOnScreen(t *testing.T) {
	d := startDash(t, 160, 45, nil, "--command", floodAfterGo, "--spawn", "x")
	d.waitText("running")
	limitFileSize(t, d.dashPID(), 32<<10)
	if err := os.WriteFile(filepath.Join(d.dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := d.waitText("✓ completed", "✗ no log · after-limit", "✗ 1 failing to log", "log file could not be written (file too large): "+d.state)
	d.checkFrame(s)
	d.keys("?")
	d.waitText("Notes", "output from here on is on screen only")
}

// startWithFileLimit starts `subdash args…` under `prlimit --fsize=n`, as
// start does: every file it writes stops at n bytes (EFBIG).
func startWithFileLimit(t *testing.T, n string, args ...string) *process {
	t.Helper()
	prlimit := requireTool(t, "prlimit")
	cmd := exec.Command(prlimit, append([]string{"--fsize=" + n, "--", binPath}, args...)...)
	cmd.Env = testEnv()
	return startCmd(t, cmd)
}

// TestJournalFailureBeforeAnyAgentIsSeen: a host whose journal cannot be
// written from the start (a 100-byte file size limit: its first line is
// longer) has no agent to show it on; it is said anyway, with the path
// (SPEC §5): on serve's stderr, in ctl info and list, and as a note on a
// viewer's screen and on a dashboard host's own.
func TestJournalFailureBeforeAnyAgentIsSeen(t *testing.T) {
	w := newWorkspace(t)
	p := startWithFileLimit(t, "100", append([]string{"serve", "--command", e2eCommand}, w.flags()...)...)
	waitListening(t, p, w.socket)
	var info proto.Info
	ctlOK(t, w, &info, "info")
	want := "journal could not be written (file too large): " + filepath.Join(info.RunDir, "journal.jsonl") + "; this run's records may not be restored"
	if info.Failure != want {
		t.Errorf("ctl info: failure %q, want %q", info.Failure, want)
	}
	var list proto.ListResult
	ctlOK(t, w, &list, "list")
	if len(list.Agents) != 0 || list.Failure != want {
		t.Errorf("ctl list: %+v, want no agent and the failure %q", list, want)
	}
	v := startViewer(t, w, "attach", "--socket", w.socket)
	v.waitText("journal could not be written (file too large)")
	v.keys("?")
	v.waitText("Notes", "journal could not be written (file too large): "+info.RunDir, "this run's records may not be restored")
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if _, stderr := p.wait(t); !strings.Contains(stderr, "subdash serve: "+want) {
		t.Errorf("serve's stderr %q does not say %q", stderr, want)
	}

	// The dashboard host: the pane runs `env VARS… subdash ARGS…`, so the
	// words after the variables run first: prlimit sets the limit and
	// executes subdash.
	d := startDash(t, 160, 45, []string{requireTool(t, "prlimit"), "--fsize=100", "--"}, "--command", e2eCommand)
	d.waitText("journal could not be written (file too large)")
	d.keys("?")
	d.waitText("Notes", "journal could not be written (file too large): "+d.state, "this run's records may not be restored")
}

// TestLogFileFailureIsSeenInAViewer: a viewer of serve shows the failure
// on the row and in the status line while the agent still runs, as the
// host dashboard does (the summary's change is pushed at once).
func TestLogFileFailureIsSeenInAViewer(t *testing.T) {
	w := newWorkspace(t)
	p := serveWith(t, w, nil, "--command", floodAfterGo+"; sleep 60")
	limitFileSize(t, p.cmd.Process.Pid, 32<<10)
	var a proto.SpawnResult
	ctlOK(t, w, &a, "spawn", "x")
	v := startViewer(t, w, "attach", "--socket", w.socket)
	v.waitRow(a.AgentID, "running")
	if err := os.WriteFile(filepath.Join(w.dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	v.waitRow(a.AgentID, "running")
	v.waitText("✗ no log · after-limit", "✗ 1 failing to log")
}
