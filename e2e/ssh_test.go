package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
	"github.com/subdash/subdash/supervisor/sshlink"
)

// Hosts on another machine over the user's own ssh (SPEC §9),
// against a real sshd on 127.0.0.1 (testkit.StartSSHD): "the other
// machine" is this one through sshd, with no environment of the test's
// (ssh passes none), so the bridge there finds the host as on any machine.

// sshEnv is the environment of a subdash of test t that reaches s: its
// ssh command, and the binary under test as the subdash there (on no ssh
// PATH).
func sshEnv(t testing.TB, s testkit.SSHD) []string {
	return []string{"SUBDASH_SSH_COMMAND=" + s.Command, "SUBDASH_REMOTE_COMMAND=" + subdashFor(t)}
}

// serveThere starts `subdash serve` for w on the default socket of its
// folder with no XDG_RUNTIME_DIR (as a host started from an ssh session
// or cron), so the bridge finds it by SPEC §6's /tmp path; it returns the
// socket.
func serveThere(t *testing.T, w workspace, command string, maxAgents int) string {
	t.Helper()
	sock := socket.Default(w.dir, "", os.Getuid())
	p := start(t, []string{"XDG_RUNTIME_DIR="}, "serve", "--command", command, "--max-agents", strconv.Itoa(maxAgents), "--grace", "200ms",
		"--dir", w.dir, "--state-dir", w.state)
	waitListening(t, p, sock)
	return sock
}

// startSSHViewer runs `subdash attach args…` in tmux with env, as
// startViewer does.
func startSSHViewer(t *testing.T, w workspace, env []string, args ...string) *dash {
	t.Helper()
	d := &dash{t: t, server: fmt.Sprintf("subdash-ssh-%d-%d", os.Getpid(), time.Now().UnixNano()),
		dir: w.dir, state: w.state, socket: w.socket, w: 160, h: 45}
	d.run(nil, env, append([]string{"attach"}, args...)...)
	return d
}

// sshOf returns the ssh process of the viewer's link (the master: the
// sh of SUBDASH_SSH_COMMAND exec'd into ssh, or a child of it), 0 when
// there is none.
func (d *dash) sshOf() int {
	if s := d.sshesOf(); len(s) > 0 {
		return s[0]
	}
	return 0
}

// sshesOf returns every ssh process below the viewer, nearest first.
func (d *dash) sshesOf() []int {
	var found []int
	var walk func(pid int)
	walk = func(pid int) {
		// A Go process forks from any of its threads: each lists its own.
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		var kids []string
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			kids = append(kids, strings.Fields(string(b))...)
		}
		for _, f := range kids {
			c, _ := strconv.Atoi(f)
			if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", c)); filepath.Base(exe) == "ssh" {
				found = append(found, c)
			}
			walk(c)
		}
	}
	if pid := d.dashPID(); pid > 0 {
		walk(pid)
	}
	return found
}

// ctlHost runs `subdash ctl --host target args…` with env, requires exit
// 0, and decodes its JSON into out (unless nil).
func ctlHost(t *testing.T, env []string, target string, out any, args ...string) {
	t.Helper()
	r := runCtl(t, env, "", append([]string{"--host", target}, args...)...)
	if r.code != 0 {
		t.Fatalf("ctl --host %s %q: exit %d, stderr %q", target, args, r.code, r.stderr)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(r.stdout), out); err != nil {
			t.Fatalf("ctl --host %q: %v in %q", args, err, r.stdout)
		}
	}
}

// TestSSHViewer: `subdash attach ssh://there/DIR` is the whole dashboard
// of the host serving DIR there: the title and the note name the target
// and the host's pid there, n spawns and its output shows, i interrupts,
// o opens the pager and q of the pager comes back; the agents ctl --host
// spawns show. When the link's ssh is killed, it says it reconnects and
// does; when sshd goes away it says "reconnecting to ssh://…" with each
// failed try, and reconnects once sshd is back; when sshd stays away it
// gives up after about 30 s saying why, with the terminal restored.
func TestSSHViewer(t *testing.T) {
	t.Parallel()
	sshd := testkit.StartSSHD(t, testkit.SSHDOptions{Own: true})
	env := append(sshEnv(t, sshd), "PAGER=less -R")
	w := newWorkspace(t)
	serveThere(t, w, attachCommand, 3)
	target := "ssh://" + sshd.Host + w.dir
	var info proto.Info
	ctlHost(t, env, target, &info, "info")
	d := startSSHViewer(t, w, env, target)
	d.waitText("agents 0 · "+target, fmt.Sprintf("attached to subdash serve, pid %d on %s", info.PID, target))

	d.keys("n")
	d.typeText("hello over ssh")
	d.keys("Enter")
	d.waitText("got: hello over ssh", "✓ completed")

	var sp proto.SpawnResult
	ctlHost(t, env, target, &sp, "spawn", "stream one")
	d.waitRow(sp.AgentID, "running")
	d.keys("j") // the streaming agent (oldest first)
	d.waitFor("the streaming agent selected", func(s string) bool { return strings.Contains(tableRow(s, sp.AgentID), "›") })
	d.waitText("tick 3 of stream one")
	d.keys("i")
	d.waitRow(sp.AgentID, "interrupted")
	d.keys("o")
	d.waitFor("less to show the log", func(s string) bool {
		return strings.Contains(s, "tick 1 of stream one") && !strings.Contains(s, "╭─ agents")
	})
	d.keys("q")
	d.waitText("╭─ agents 2 · "+target, "q quit")

	// The link's ssh killed: a new link, said.
	ssh := d.sshOf()
	if ssh == 0 {
		t.Fatalf("no ssh under the viewer:\n%s", d.screen())
	}
	if err := syscall.Kill(ssh, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.waitText("reconnected to " + target)
	ctlHost(t, env, target, &sp, "spawn", "after the relink")
	d.waitRow(sp.AgentID, "completed")

	// sshd gone: tries fail and say so; sshd back: reconnected.
	sshd.Down(t)
	d.waitText("reconnecting to "+target, "failed")
	sshd.Up(t)
	d.waitText("reconnected to " + target)
	ctlHost(t, env, target, &sp, "spawn", "after sshd came back")
	d.waitRow(sp.AgentID, "completed")

	// sshd gone for good: the viewer gives up after RelinkFor, saying why.
	sshd.Down(t)
	down := time.Now()
	s := testkit.Poll(t, sshlink.RelinkFor+dashWait, "the viewer to give up", func() (string, bool) {
		s := d.screen()
		return s, strings.Contains(s, "SUBDASH-EXITED:")
	})
	t.Logf("gave up %s after sshd went away", time.Since(down).Round(100*time.Millisecond))
	s = strings.ReplaceAll(s, "\n", "") // the pane wraps the message
	if !strings.Contains(s, "gave up reconnecting to "+target+" after 30s") || !strings.Contains(s, "Connection refused") ||
		!strings.Contains(s, "SUBDASH-EXITED:1") || strings.Contains(s, "panic") {
		t.Errorf("the viewer's end:\n%s", s)
	}
	d.checkTerminalBack()
}

// TestSSHViewerKilledLeavesNoSSH: a viewer killed with SIGKILL (no Close
// runs) leaves no ssh running, whatever the shape of SUBDASH_SSH_COMMAND:
// a plain command, one with an assignment first (exec'd after it), a
// list (run by a shell that passes the signal to its process group).
// Before, the last two left the link's ssh master under init.
func TestSSHViewerKilledLeavesNoSSH(t *testing.T) {
	t.Parallel()
	sshd := testkit.StartSSHD(t, testkit.SSHDOptions{})
	w := newWorkspace(t)
	serveThere(t, w, attachCommand, 3)
	target := "ssh://" + sshd.Host + w.dir
	left := "" // the folder of sockets of the viewer killed last: it goes at the next link's start
	for _, sc := range []string{sshd.Command, "SUBDASH_TEST_SSH=1 " + sshd.Command, ": ; " + sshd.Command} {
		env := []string{"SUBDASH_SSH_COMMAND=" + sc, "SUBDASH_REMOTE_COMMAND=" + binPath}
		d := startSSHViewer(t, w, env, target)
		d.waitText("attached to subdash serve", target)
		if _, err := os.Stat(left); left != "" && err == nil {
			t.Errorf("the next viewer's start left %s, the folder of sockets of the viewer killed before", left)
		}
		viewer := d.dashPID()
		if viewer == 0 {
			t.Fatalf("%s: no viewer process:\n%s", sc, d.screen())
		}
		// The link's ssh processes and the folder of sockets their command
		// lines name, read while they run: a process just forked (the sh of
		// a list, an ssh before its exec) names none yet, and a killed one
		// names nothing.
		var sshes []int
		left = testkit.Poll(t, 15*time.Second, sc+": the viewer's ssh naming its folder of sockets", func() (string, bool) {
			sshes = d.sshesOf()
			f := linkFolder(sshes)
			return f, f != ""
		})
		if err := syscall.Kill(viewer, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		d.waitText("SUBDASH-EXITED:137")
		testkit.Eventually(t, 15*time.Second, fmt.Sprintf("%s: the viewer's ssh %v to end with it", sc, sshes), func() bool {
			for _, pid := range sshes {
				if !testkit.Ended(pid) {
					return false
				}
			}
			return true
		})
	}
	var r ctlRun
	if left != "" { // one more link's start, for the last viewer's folder
		r = runCtl(t, []string{"SUBDASH_SSH_COMMAND=" + sshd.Command, "SUBDASH_REMOTE_COMMAND=" + binPath}, "", "--host", target, "list")
	}
	if _, err := os.Stat(left); left != "" && (r.code != 0 || err == nil) {
		t.Errorf("ctl --host list (exit %d, %s) left %s, the folder of sockets of the viewer killed before", r.code, r.stderr, left)
	}
}

// linkFolder returns the folder of the link's sockets (sshlink: the
// folder of the master's control socket, <folder>/cm) from the command
// lines of its ssh processes; "" when none names it.
func linkFolder(sshes []int) string {
	for _, pid := range sshes {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		// ssh -S <cm> …, or as the master retitles itself: "ssh: <cm> [mux]"
		for _, w := range strings.Fields(strings.ReplaceAll(string(b), "\x00", " ")) {
			if strings.HasPrefix(w, "/") && filepath.Base(w) == "cm" {
				return filepath.Dir(w)
			}
		}
	}
	return "" // the sh of a list, its ssh not started yet, or gone
}

// TestSSHCtlAndMCP: ctl --host and mcp --host drive the host there as a
// local one (a spawn, its answer, the list); a read-only viewer over ssh
// refuses operations; every bad target ends with a message naming it and
// what to do, in seconds: no folder there, no host there (naming `cd D &&
// subdash serve`, and mcp never starting a host here), no subdash there,
// a server that refuses socket forwarding, a refused key, nothing
// listening.
func TestSSHCtlAndMCP(t *testing.T) {
	t.Parallel()
	sshd := testkit.StartSSHD(t, testkit.SSHDOptions{})
	env := sshEnv(t, sshd)
	w := newWorkspace(t)
	serveThere(t, w, attachCommand, 3)
	target := "ssh://" + sshd.Host + w.dir

	var sp proto.SpawnResult
	ctlHost(t, env, target, &sp, "spawn", "from the laptop")
	var wr proto.WaitResult
	ctlHost(t, env, target, &wr, "wait", sp.AgentID)
	if dt, ok := wr.Details[sp.AgentID]; !ok || dt.LastOutput == nil || !strings.Contains(*dt.LastOutput, "got: from the laptop") {
		t.Fatalf("wait over ssh: %+v", wr)
	}

	cs, _, stderr := startMCP(t, env, "--host", target)
	var list struct{ Agents []proto.Summary }
	toolOK(t, cs, "list_agents", map[string]any{}, &list)
	if len(list.Agents) != 1 || list.Agents[0].AgentID != sp.AgentID {
		t.Fatalf("list_agents over ssh: %+v", list)
	}
	if !strings.Contains(stderr.String(), "driving the subdash (pid ") || !strings.Contains(stderr.String(), target) {
		t.Errorf("mcp --host said: %q", stderr)
	}

	ro := startSSHViewer(t, w, env, "--read-only", target)
	ro.waitText("read-only: attached to subdash serve", target)
	ro.keys("c")
	ro.waitText("read-only viewer: close refused")
	ro.keys("q")
	if code := ro.waitExit(); code != 0 {
		t.Errorf("q of the read-only viewer: exit %d", code)
	}

	empty := t.TempDir()
	nokey := strings.Replace(target, "//"+sshd.Host, "//"+sshd.Host+"-nokey", 1)
	down := strings.Replace(target, "//"+sshd.Host, "//"+sshd.Host+"-down", 1)
	for _, c := range []struct{ target, want string }{
		{"ssh://" + sshd.Host + empty + "/nope", "no folder " + empty + "/nope on "},
		{"ssh://" + sshd.Host + empty, "start one there: cd " + empty + " && subdash serve"},
		{target + "?subdash=/nonexistent/subdash", "subdash=/nonexistent/subdash could not be run there"},
		{nokey, "Permission denied (publickey); ssh may not ask for a passphrase or password here (BatchMode): load the key into ssh-agent"},
		{down, "Connection refused"},
	} {
		start := time.Now()
		r := runCtl(t, env, "", "--host", c.target, "list")
		took := time.Since(start)
		if r.code != 1 || !strings.Contains(r.stderr, "list_agents failed: "+strings.SplitN(c.target, "?", 2)[0]) || !strings.Contains(r.stderr, c.want) || took > 15*time.Second {
			t.Errorf("ctl --host %s: exit %d in %s, stderr %q; want %q", c.target, r.code, took, r.stderr, c.want)
		}
	}

	// mcp --host with no host there: an error naming the command to run
	// there, and no host of its own here.
	r := runMCPOnce(t, env, "--host", "ssh://"+sshd.Host+empty)
	if r.code != 1 || !strings.Contains(r.stderr, "start one there: cd "+empty+" && subdash serve") {
		t.Errorf("mcp --host with no host there: exit %d, stderr %q", r.code, r.stderr)
	}
	if fileExists(socket.Default(empty, "", os.Getuid())) || fileExists(socket.Default(empty, os.Getenv("XDG_RUNTIME_DIR"), os.Getuid())) {
		t.Errorf("mcp --host started a host here")
	}

	// A viewer of a remote without that subdash: the reason, the terminal
	// back.
	v := startSSHViewer(t, w, env, target+"?subdash=/nonexistent/subdash")
	if code := v.waitExit(); code != 1 {
		t.Errorf("attach to a remote without subdash: exit %d", code)
	}
	v.waitText("could not be run there")
	v.checkTerminalBack()

	// A server that refuses Unix-socket forwarding (AllowTcpForwarding no).
	hard := testkit.StartSSHD(t, testkit.SSHDOptions{NoForwarding: true})
	r = runCtl(t, sshEnv(t, hard), "", "--host", "ssh://"+hard.Host+w.dir, "list")
	if r.code != 1 || !strings.Contains(r.stderr, "refuses to forward Unix sockets") || !strings.Contains(r.stderr, "AllowTcpForwarding local") {
		t.Errorf("ctl --host through a server without forwarding: exit %d, stderr %q", r.code, r.stderr)
	}
}

// runMCPOnce runs `subdash mcp args…` with env and stdin closed, and
// returns its exit status and stderr.
func runMCPOnce(t *testing.T, env []string, args ...string) ctlRun {
	t.Helper()
	p := start(t, env, append([]string{"mcp"}, args...)...)
	code, stderr := p.wait(t)
	return ctlRun{code: code, stderr: stderr}
}
