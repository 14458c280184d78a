package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/socket"
)

func TestCtlFindsTheSocketOfADirectory(t *testing.T) {
	w := newWorkspace(t)
	runtime := filepath.Join(w.base, "xdg")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	xdg := "XDG_RUNTIME_DIR=" + runtime
	// serve with the default socket of its --dir.
	startServeAt(t, w, socket.Default(w.dir, runtime, os.Getuid()), xdg)

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
	def := socket.Default(w.dir, runtime, os.Getuid())
	if r := runCtl(t, []string{"SUBDASH_SOCKET=" + def}, "", "list"); r.code != 0 {
		t.Fatalf("ctl list with SUBDASH_SOCKET: %+v", r)
	}
	none := filepath.Join(w.base, "none.sock")
	r := runCtl(t, []string{"SUBDASH_SOCKET=" + def}, "", "list", "--socket", none, "--dir", w.dir)
	if want := fmt.Sprintf("list_agents failed: no subdash is serving %s (socket %s); start subdash or subdash serve\n", w.dir, none); r.code != 1 || r.stderr != want {
		t.Fatalf("--socket over SUBDASH_SOCKET: %+v, want %q", r, want)
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
	defer os.RemoveAll(binDir) //nolint:errcheck // cleanup of a temp folder
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

// TestDifferentTMPDIRFindTheSameHost: a host, ctl and an MCP client started
// with different TMPDIR (and no XDG_RUNTIME_DIR) find each other on the
// default socket (SPEC §6).
func TestDifferentTMPDIRFindTheSameHost(t *testing.T) {
	w := newWorkspace(t)
	env := func() []string { return []string{"TMPDIR=" + t.TempDir(), "XDG_RUNTIME_DIR="} }
	serve := start(t, env(), "serve", "--command", attachCommand, "--dir", w.dir, "--state-dir", w.state)
	socket := socket.Default(w.dir, "", os.Getuid())
	waitListening(t, serve, socket)
	r := runCtl(t, env(), "", "spawn", "hello", "--dir", w.dir)
	if r.code != 0 {
		t.Fatalf("ctl with another TMPDIR: %s", r.stderr)
	}
	cs, _, stderr := startMCP(t, env(), "--dir", w.dir)
	var list proto.ListResult
	toolOK(t, cs, "list_agents", map[string]any{}, &list)
	if len(list.Agents) != 1 {
		t.Fatalf("MCP with another TMPDIR sees %d agents", len(list.Agents))
	}
	if want := fmt.Sprintf("driving the subdash (pid %d)", serve.cmd.Process.Pid); !strings.Contains(stderr.String(), want) {
		t.Errorf("subdash mcp: %q, want %q", stderr, want)
	}
}
