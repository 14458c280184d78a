package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
)

// Several hosts in one dashboard (SPEC §9 "Several hosts"): `subdash
// attach` of two hosts here and one over ssh (a private sshd on
// 127.0.0.1), each serving the folder of a workspace of its own.

// serveDefault starts `subdash serve` for w on its folder's default
// socket with no XDG_RUNTIME_DIR (where a viewer given the folder looks,
// and the bridge over ssh too); it returns the process and the socket.
func serveDefault(t *testing.T, w workspace) (*process, string) {
	t.Helper()
	sock := socket.Default(w.dir, "", os.Getuid())
	p := start(t, []string{"XDG_RUNTIME_DIR="}, "serve", "--command", attachCommand, "--max-agents", "3", "--grace", "200ms",
		"--dir", w.dir, "--state-dir", w.state)
	waitListening(t, p, sock)
	return p, sock
}

// spawnOn spawns an agent named name with message on the host of sock and
// returns its id.
func spawnOn(t *testing.T, sock, name, message string) string {
	t.Helper()
	r := runCtl(t, nil, "", "--socket", sock, "spawn", "--task-name", name, message)
	if r.code != 0 {
		t.Fatalf("spawn on %s: exit %d, %s", sock, r.code, r.stderr)
	}
	i := strings.Index(r.stdout, `"agent_id": "`)
	if i < 0 {
		t.Fatalf("spawn on %s: %s", sock, r.stdout)
	}
	return r.stdout[i+len(`"agent_id": "`) : i+len(`"agent_id": "`)+36]
}

// statusOn returns agent id's status on the host of sock.
func statusOn(t *testing.T, sock, id string) proto.Status {
	t.Helper()
	r := runCtl(t, nil, "", "--socket", sock, "list")
	if r.code != 0 {
		t.Fatalf("list on %s: exit %d, %s", sock, r.code, r.stderr)
	}
	i := strings.Index(r.stdout, `"agent_id": "`+id+`"`)
	if i < 0 {
		t.Fatalf("agent %s not on %s", id, sock)
	}
	rest := r.stdout[i:]
	j := strings.Index(rest, `"status": "`)
	rest = rest[j+len(`"status": "`):]
	return proto.Status(rest[:strings.Index(rest, `"`)])
}

// tickOf returns the tick number the row of the agent named by tick
// message text (e.g. "stream one") shows, -1 when none.
func tickOf(screen, message string) int {
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, "tick "); i >= 0 && strings.Contains(l, " of "+message) {
			n, err := strconv.Atoi(strings.Fields(l[i+len("tick "):])[0])
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// TestSeveralHostsInOneViewer: `subdash attach @all` of the config
// file's [[hosts]], two here and one over ssh, shows every host's agents
// in one table under a row per host, a path two hosts have as
// HOST:/root/x; an interrupt goes to the selected agent's host; a host
// killed with SIGKILL says "✗ host lost" on its row and in the status
// line while the others go on, and comes back when it serves again; q
// detaches with exit 0.
func TestSeveralHostsInOneViewer(t *testing.T) {
	sshd := testkit.StartSSHD(t, testkit.SSHDOptions{})
	one, two, far := newWorkspace(t), newWorkspace(t), newWorkspace(t)
	_, oneSock := serveDefault(t, one)
	twoProc, twoSock := serveDefault(t, two)
	_, farSock := serveDefault(t, far)
	ids := map[string]string{}
	for name, sock := range map[string]string{"one": oneSock, "two": twoSock, "far": farSock} {
		ids[name] = spawnOn(t, sock, "review", "stream "+name)
	}
	home, _ := configHome(t, fmt.Sprintf("[[hosts]]\nname = \"one\"\ntarget = %q\n\n[[hosts]]\nname = \"two\"\ntarget = %q\n\n[[hosts]]\nname = \"far\"\ntarget = %q\n",
		one.dir, two.dir, "ssh://"+sshd.Host+far.dir))
	env := append(sshEnv(t, sshd), home, "XDG_RUNTIME_DIR=")
	v := startViewerIn(t, one, "", 160, 45, env, "attach", "@all")
	s := v.waitFor("every host's agent ticking", func(s string) bool {
		return tickOf(s, "stream one") > 0 && tickOf(s, "stream two") > 0 && tickOf(s, "stream far") > 0
	})
	rows := []string{"one ", "└─ review", "two ", "└─ review", "far ", "└─ review"}
	at := 0
	for _, l := range strings.Split(s, "\n") {
		if at < len(rows) && strings.HasPrefix(strings.TrimLeft(strings.TrimPrefix(l, "│"), " ›"), rows[at]) {
			at++
		}
	}
	if at < len(rows) {
		t.Fatalf("want the rows %q in order (found %d):\n%s", rows, at, s)
	}
	for _, want := range []string{"agents 3 · 3 hosts", "ssh://" + sshd.Host + far.dir, "│ 3 hosts", "╭─ one:/root/review"} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}

	v.keys("j", "j") // two's review
	v.waitText("╭─ two:/root/review")
	v.keys("i")
	testkit.Eventually(t, dashWait, "two's agent interrupted", func() bool { return statusOn(t, twoSock, ids["two"]) == proto.StatusErrored })
	for _, name := range []string{"one", "far"} {
		if st := statusOn(t, map[string]string{"one": oneSock, "far": farSock}[name], ids[name]); st != proto.StatusRunning {
			t.Errorf("%s's agent is %s after an interrupt of two's", name, st)
		}
	}

	if err := twoProc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s = v.waitText("✗ host lost: two")
	if !strings.Contains(strings.Join(strings.Fields(s), " "), "│ two ✗ host lost: ") {
		t.Errorf("two's row does not say it is lost:\n%s", s)
	}
	before := tickOf(s, "stream one")
	v.waitFor("one's agent still ticking", func(s string) bool { return tickOf(s, "stream one") > before })

	serveDefault(t, two)
	v.waitFor("two back", func(s string) bool {
		return !strings.Contains(s, "host lost") && strings.Contains(s, "host two is back")
	})

	v.keys("q")
	if code := v.waitExit(); code != 0 {
		t.Errorf("q: exit %d", code)
	}
	v.checkTerminalBack()
}

// TestSeveralHostsReadOnlyAndStopped: --socket twice, the second
// ?read-only: an operation on its agent is refused naming it, the other
// host's is done; a host stopped with SIGSTOP is lost after the host's
// deadline while the other goes on; q quits at once.
func TestSeveralHostsReadOnlyAndStopped(t *testing.T) {
	a, b := newWorkspace(t), newWorkspace(t)
	aProc, aSock := serveDefault(t, a)
	_, bSock := serveDefault(t, b)
	idA := spawnOn(t, aSock, "lint", "stream a")
	spawnOn(t, bSock, "audit", "stream b")
	v := startViewerIn(t, a, "", 120, 40, []string{"XDG_RUNTIME_DIR="}, "attach", "--socket", aSock, "--socket", bSock+"?read-only")
	v.waitFor("both agents ticking", func(s string) bool { return tickOf(s, "stream a") > 0 && tickOf(s, "stream b") > 0 })
	v.keys(">") // b's audit, the last row
	v.waitText("audit · #1/1")
	v.keys("i")
	v.waitText("read-only viewer of ")
	v.keys("<", "j") // a's lint
	v.waitText("lint · #1/1")
	v.keys("c")
	v.waitText("Close lint? It is running and will be stopped.")
	v.keys("y")
	testkit.Eventually(t, dashWait, "a's agent closed", func() bool { return statusOn(t, aSock, idA) == proto.StatusClosed })

	if err := syscall.Kill(aProc.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(aProc.cmd.Process.Pid, syscall.SIGCONT) })
	s := v.waitText("✗ host lost: ")
	before := tickOf(s, "stream b")
	v.waitFor("b's agent still ticking", func(s string) bool { return tickOf(s, "stream b") > before })
	start := time.Now()
	v.keys("q")
	if code := v.waitExit(); code != 0 {
		t.Errorf("q: exit %d", code)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("q took %s with a host stopped", took.Round(time.Millisecond))
	}
	v.checkTerminalBack()
}
