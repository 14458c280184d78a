package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/supervisor"
)

func TestCtlFindsTheSocketOfADirectory(t *testing.T) {
	w := newWorkspace(t)
	runtime := filepath.Join(w.base, "xdg")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	xdg := "XDG_RUNTIME_DIR=" + runtime
	// serve with the default socket of its --dir.
	startServeAt(t, w, supervisor.DefaultSocketPath(w.dir, runtime, os.Getuid()), xdg)

	// ctl in that directory, and with --dir from elsewhere.
	cmd := exec.Command(binPath, "ctl", "list")
	cmd.Dir, cmd.Env = w.dir, append(testEnv(), xdg)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `"agents": []`) {
		t.Fatalf("ctl list in %s: %v %s", w.dir, err, out)
	}
	if r := runCtl(t, []string{xdg}, "", "list", "--dir", w.dir); r.code != 0 {
		t.Fatalf("ctl list --dir: %+v", r)
	}
	// SUBDASH_SOCKET names a socket; --socket wins over it.
	def := supervisor.DefaultSocketPath(w.dir, runtime, os.Getuid())
	if r := runCtl(t, []string{"SUBDASH_SOCKET=" + def}, "", "list"); r.code != 0 {
		t.Fatalf("ctl list with SUBDASH_SOCKET: %+v", r)
	}
	none := filepath.Join(w.base, "none.sock")
	r := runCtl(t, []string{"SUBDASH_SOCKET=" + def}, "", "list", "--socket", none, "--dir", w.dir)
	if want := fmt.Sprintf("list_agents failed: no subdash is serving %s (socket %s); start subdash or subdash serve\n", w.dir, none); r.code != 1 || r.stderr != want {
		t.Fatalf("--socket over SUBDASH_SOCKET: %+v, want %q", r, want)
	}
}

// startServeAt starts `subdash serve` for w on socket (no --socket flag
// when it is the default) with env.
func startServeAt(t *testing.T, w workspace, socket string, env ...string) *process {
	t.Helper()
	p := start(t, env, "serve", "--command", e2eCommand, "--dir", w.dir, "--state-dir", w.state)
	waitListening(t, p, socket)
	return p
}

func TestSecondServeIsRefusedAndAStaleSocketReplaced(t *testing.T) {
	w := newWorkspace(t)
	first := startServe(t, w)
	second := start(t, nil, append([]string{"serve", "--command", "true"}, w.flags()...)...)
	code, stderr := second.wait(t)
	want := fmt.Sprintf("another subdash (pid %d) is serving %s on %s;", first.cmd.Process.Pid, w.dir, w.socket)
	if code == 0 || !strings.Contains(stderr, want) {
		t.Fatalf("second serve: exit %d, stderr %q; want an error containing %q", code, stderr, want)
	}
	if r := runCtl(t, nil, "", "list", "--socket", w.socket); r.code != 0 {
		t.Fatalf("the first serve stopped answering: %+v", r)
	}

	// Killed without a chance to clean up, the first leaves its socket file.
	_ = first.cmd.Process.Kill()
	first.wait(t)
	if fi, err := os.Lstat(w.socket); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("no stale socket file after SIGKILL: %v", err)
	}
	startServe(t, w)
	if r := runCtl(t, nil, "", "list", "--socket", w.socket); r.code != 0 {
		t.Fatalf("serve on a stale socket: %+v", r)
	}
}

func TestSocketModes(t *testing.T) {
	w := newWorkspace(t)
	startServe(t, w)
	for path, want := range map[string]os.FileMode{filepath.Dir(w.socket): os.ModeDir | 0o700, w.socket: os.ModeSocket | 0o600} {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want mode %v", path, fi.Mode(), err, want)
		}
	}
}

func TestConnectionOfAnotherUserIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	const nobody = 65534
	w := newWorkspace(t)
	startServe(t, w)
	// A copy of the binary the other user may run.
	binDir, err := os.MkdirTemp("", "subdash-bin-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(binDir)
	bin := filepath.Join(binDir, "subdash")
	copyFile(t, binPath, bin)
	for _, p := range []string{binDir, bin} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	asNobody := func() ctlRun {
		cmd := exec.Command(bin, "ctl", "spawn", "hello", "--socket", w.socket)
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run()
		return ctlRun{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
	}

	// As created, the socket is out of the other user's reach.
	for _, p := range []string{filepath.Dir(w.base), w.base} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := asNobody()
	if r.code != 1 || !strings.Contains(r.stderr, "spawn_agent failed: cannot connect to control socket "+w.socket+": permission denied") {
		t.Fatalf("as uid %d with the socket's own modes: %+v", nobody, r)
	}
	// Made reachable, the connection gets through to the server, which
	// checks the peer's credentials and refuses it.
	for p, mode := range map[string]os.FileMode{filepath.Dir(w.socket): 0o755, w.socket: 0o666} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	r = asNobody()
	want := fmt.Sprintf("spawn_agent failed: connection refused: this subdash control socket belongs to uid 0; uid %d may not use it\n", nobody)
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Fatalf("as uid %d with the socket reachable: %+v, want stderr %q", nobody, r, want)
	}
	if out := ctlOK(t, w, nil, "list"); out != "{\n  \"agents\": []\n}\n" {
		t.Fatalf("a refused connection changed something: %q", out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestShellSyntaxInAMessageReachesStdinLiterally(t *testing.T) {
	w := newWorkspace(t)
	marker := filepath.Join(w.base, "pwned")
	p := start(t, nil, append([]string{"serve", "--command", "cat"}, w.flags()...)...)
	waitListening(t, p, w.socket)
	message := fmt.Sprintf("$(touch %s); ; | && `touch %s` > %s", marker, marker, marker)

	var sp supervisor.SpawnResult
	ctlOK(t, w, &sp, "spawn", message)
	var wr supervisor.WaitResult
	ctlOK(t, w, &wr, "wait", sp.AgentID)
	if d := wr.Details[sp.AgentID]; d.Status != "completed" || *d.LastOutput != message {
		t.Fatalf("the child got %q, want %q", *d.LastOutput, message)
	}
	if out := ctlOK(t, w, nil, "logs", sp.AgentID); out != message+"\n" {
		t.Fatalf("log = %q, want the message and a newline", out)
	}
	if _, err := os.Lstat(marker); !os.IsNotExist(err) {
		t.Fatalf("%s exists: the message was executed (%v)", marker, err)
	}
}

// TestSecondHostOnAnotherSocketIsRefused (SPEC §1, §10): a host started in
// the same folder with the same state directory but another socket (a
// different XDG_RUNTIME_DIR) would keep the folder's records beside the
// first and show its running agents as ended; it is refused, naming the
// first host and its socket. Once that host ends, a start succeeds.
func TestSecondHostOnAnotherSocketIsRefused(t *testing.T) {
	w := newWorkspace(t)
	first := startServe(t, w)
	other := filepath.Join(w.base, "other", "s.sock")
	second := start(t, nil, "serve", "--command", e2eCommand, "--dir", w.dir, "--state-dir", w.state, "--socket", other)
	code, stderr := second.wait(t)
	want := fmt.Sprintf("another subdash (pid %d) hosts %s with state directory %s on control socket %s", first.cmd.Process.Pid, w.dir, w.state, w.socket)
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "subdash attach --socket "+w.socket) {
		t.Fatalf("second host on another socket: exit %d, %q; want 1 and %q", code, stderr, want)
	}
	_ = first.cmd.Process.Signal(syscall.SIGTERM)
	first.wait(t)
	third := start(t, nil, "serve", "--command", e2eCommand, "--dir", w.dir, "--state-dir", w.state, "--socket", other)
	waitListening(t, third, other)
}
