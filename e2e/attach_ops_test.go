package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestViewerSendsAndResendsOnTheHost: the host serves three agents (one
// streaming, one finished, and a claude-preset agent it restored, whose
// transcript it reads back from its log); a viewer shows that transcript,
// s continues the claude conversation on the host (--resume with its
// session id), R resends the finished agent's message, and s to the
// streaming agent asks interrupt/queue/cancel and i interrupts it and
// sends. Each is checked with ctl list.
func TestViewerSendsAndResendsOnTheHost(t *testing.T) {
	raceChecked(t)
	w := newWorkspace(t)
	env, calls := fakeCLIs(t, w.base)
	first := serveWith(t, w, env, "--preset", "claude")
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "first message: remember the word PINEAPPLE")
	claude := sp.AgentID
	ctlOK(t, w, nil, "wait", claude, "--timeout-ms", "60000")
	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	first.wait(t)

	serveWith(t, w, env, "--command", attachCommand, "--max-agents", "3", "--grace", "200ms")
	ctlOK(t, w, &sp, "spawn", "stream one")
	streaming := sp.AgentID
	ctlOK(t, w, &sp, "spawn", "hello")
	hello, helloFirst := sp.AgentID, sp.SubmissionID
	waitAgent(t, w, hello, "completed", func(a proto.Summary) bool { return a.Status == proto.StatusCompleted })

	d := startViewer(t, w, "--dir", w.dir, "--socket", w.socket)
	d.waitRow(claude, "completed")
	d.waitRow(streaming, "running")
	// The restored claude agent is selected (oldest first): its transcript.
	d.waitText("✓ result", "STUB-REPLY #10")

	d.keys("s")
	d.typeText("second message: what was the word?")
	d.keys("Enter")
	waitAgent(t, w, claude, "answered again", func(a proto.Summary) bool {
		return a.Status == proto.StatusCompleted && strings.HasPrefix(a.LastMessage, "second message")
	})
	d.waitText("STUB-REPLY #12")
	log, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if want := "claude\t-p --output-format stream-json --verbose --resume " + claude + " --input-format stream-json --replay-user-messages --permission-prompt-tool stdio\tsecond message: what was the word?"; !strings.Contains(string(log), want) {
		t.Fatalf("the host did not continue the conversation; the fake claude ran as\n%s\nwant a line %q", log, want)
	}

	d.keys("j", "j") // the finished agent
	d.waitText("got: hello")
	d.keys("R")
	waitAgent(t, w, hello, "resent", func(a proto.Summary) bool {
		return a.Status == proto.StatusCompleted && a.LastSubmissionID != helloFirst && a.LastMessage == "hello"
	})
	d.waitText(hello[:8] + " · #2/2")

	d.keys("k") // the streaming agent: a send asks first
	d.waitText("tick ")
	d.keys("s")
	d.typeText("after the stream")
	d.keys("Enter")
	d.waitText("interrupt it and send")
	d.keys("i")
	waitAgent(t, w, streaming, "interrupted and sent", func(a proto.Summary) bool {
		return a.Status == proto.StatusCompleted && a.LastMessage == "after the stream"
	})
	d.waitText("got: after the stream")
}

// TestAttachToAHostOfAnotherUser (SPEC §6, the rule of trust): a viewer of
// uid 65534 cannot even look at root's socket folder, and root attaching
// to a host of uid 65534 refuses that host's folder; each says so before
// any screen is drawn and exits non-zero.
func TestAttachToAHostOfAnotherUser(t *testing.T) {
	requireRoot(t)
	// A copy of the binary the other user may run, in a folder of theirs.
	theirs, err := os.MkdirTemp("/tmp", "subdash-other-user-") // every folder above it searchable by them
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(theirs) })
	if err := os.Chmod(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(theirs, "subdash")
	copyFile(t, binPath, bin)
	for _, d := range []string{"work", "state", "run"} {
		if err := os.Mkdir(filepath.Join(theirs, d), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(theirs, d), nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	asNobody := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(testEnv(), "HOME="+theirs, "XDG_RUNTIME_DIR=")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		return cmd
	}
	run := func(cmd *exec.Cmd) (int, string) {
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}

	// Their viewer, root's host.
	w := newWorkspace(t)
	startAttachServe(t, w)
	code, out := run(asNobody("attach", "--socket", w.socket))
	if want := fmt.Sprintf("cannot look at control socket folder %s (permission denied), so it is not known to be yours; pass --socket with a path in a private folder of yours", filepath.Dir(w.socket)); code == 0 || !strings.Contains(out, want) {
		t.Errorf("uid %d attaching to root's host: exit %d, %q; want %q", nobody, code, out, want)
	}

	// Their host, root's viewer: root may open the socket, and refuses it.
	socket := filepath.Join(theirs, "run", "s.sock")
	host := asNobody("serve", "--command", "cat", "--dir", filepath.Join(theirs, "work"),
		"--state-dir", filepath.Join(theirs, "state"), "--socket", socket)
	hostErr, err := os.Create(filepath.Join(t.TempDir(), "host.err"))
	if err != nil {
		t.Fatal(err)
	}
	host.Stderr = hostErr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Process.Signal(syscall.SIGTERM); _ = host.Wait() })
	testkit.Poll(t, dashWait, fmt.Sprintf("the host of uid %d to serve", nobody), func() (string, bool) {
		if asNobody("ctl", "list", "--socket", socket).Run() == nil {
			return "", true
		}
		b, _ := os.ReadFile(hostErr.Name())
		return "its stderr: " + string(b), false
	})
	cmd := exec.Command(binPath, "attach", "--socket", socket)
	cmd.Env = testEnv()
	code, out = run(cmd)
	if want := fmt.Sprintf("control socket folder %s belongs to uid %d (nobody), not to you (uid 0), so a socket there may be theirs", filepath.Dir(socket), nobody); code == 0 || !strings.Contains(out, want) {
		t.Errorf("root attaching to the host of uid %d: exit %d, %q; want %q", nobody, code, out, want)
	}
}

// TestViewerActsOnAnAgentAnotherClientClosed: ctl closes (then forgets)
// the agent a viewer has selected just before the viewer acts on it; the
// viewer shows the host's answer or its own refusal in words, never hangs
// or panics, and its terminal stays usable.
func TestViewerActsOnAnAgentAnotherClientClosed(t *testing.T) {
	raceChecked(t)
	w := newWorkspace(t)
	startAttachServe(t, w)
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "hello")
	id := sp.AgentID
	waitAgent(t, w, id, "completed", func(a proto.Summary) bool { return a.Status == proto.StatusCompleted })
	d := startViewer(t, w, "attach", "--socket", w.socket)
	d.waitRow(id, "completed")

	d.keys("s")
	d.typeText("too late")
	ctlOK(t, w, nil, "close", id)
	d.keys("Enter")
	d.waitFor("the close to be said", func(s string) bool {
		s = strings.ReplaceAll(s, "\n", "")
		return strings.Contains(s, "agent "+id+" is closed; run resume_agent first") ||
			strings.Contains(s, "agent "+id[:8]+" is closed; press r to reopen it first")
	})
	if a := listAgents(t, w)[id]; a.Status != proto.StatusClosed || a.LastMessage != "hello" {
		t.Fatalf("the send reached a closed agent: %+v", a)
	}

	ctlOK(t, w, nil, "forget", id)
	d.keys("r")
	d.waitFor("the forgotten agent to leave the table", func(s string) bool { return tableRow(s, id) == "" })
	d.keys("q")
	if code := d.waitExit(); code != 0 {
		t.Fatalf("viewer exit status %d:\n%s", code, d.screen())
	}
	d.checkTerminalBack()
}

// TestHostDashboardQuitsWithTwoViewers: the host dashboard quits (q, then
// yes to the question that names the viewers) while two viewers are
// attached; each says the host stopped and exits with its terminal
// restored, and the host's agent is gone.
func TestHostDashboardQuitsWithTwoViewers(t *testing.T) {
	raceChecked(t)
	host := startDash(t, 160, 45, nil, "--command", attachCommand, "--grace", "200ms", "--spawn", "stream x")
	w := workspace{dir: host.dir, state: host.state, socket: host.socket}
	host.waitText("tick ")
	ids, pgids := host.groups()
	a := startViewer(t, w, "attach", "--socket", w.socket)
	b := startViewer(t, w, "attach", "--socket", w.socket)
	a.waitText("tick ")
	b.waitText("tick ")
	pid := host.dashPID()
	host.keys("q")
	host.waitText("2 viewers are attached and will be closed")
	host.keys("y")
	if code := host.waitExit(); code != 0 {
		t.Fatalf("host exit status %d", code)
	}
	want := fmt.Sprintf("the subdash host (pid %d) stopped serving %s; the viewer closed", pid, w.socket)
	for _, d := range []*dash{a, b} {
		if code := d.waitExit(); code != 1 {
			t.Errorf("viewer exit status %d", code)
		}
		if s := strings.ReplaceAll(d.screen(), "\n", ""); !strings.Contains(s, want) {
			t.Errorf("viewer says:\n%s\nwant %q", d.screen(), want)
		}
		d.checkTerminalBack()
	}
	// leftovers counts the group's live members: its zombies wait only for
	// init to reap them once the host is gone (kill(2) would count them).
	if left := host.leftovers(); len(left) > 0 || len(ids) != 1 || len(pgids) != 1 {
		t.Fatalf("after the host quit: %v (agents %v, groups %v)", left, ids, pgids)
	}
}
