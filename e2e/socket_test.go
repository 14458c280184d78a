package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// TestConnectionOfAnotherUserIsRefused (SPEC §6): another user's ctl
// refuses root's socket, whose folder is not theirs (the rule of trust),
// and a connection of theirs that gets through anyway is refused by the
// host, which checks who connected.
func TestConnectionOfAnotherUserIsRefused(t *testing.T) {
	requireRoot(t)
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
	for _, p := range []string{binDir, bin, filepath.Dir(w.base), w.base} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(cmd *exec.Cmd) ctlRun {
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run()
		return ctlRun{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
	}

	r := run(asNobody(exec.Command(bin, "ctl", "spawn", "hello", "--socket", w.socket)))
	want := fmt.Sprintf("spawn_agent failed: control socket folder %s belongs to uid 0 (root), not to you (uid %d), so a socket there may be theirs; remove it or pass --socket with a path in a private folder of yours\n",
		filepath.Dir(w.socket), nobody)
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Fatalf("ctl as uid %d: %+v, want stderr %q", nobody, r, want)
	}
	// Made reachable, a connection of theirs gets through to the host,
	// which checks the peer's credentials and refuses it.
	for p, mode := range map[string]os.FileMode{filepath.Dir(w.socket): 0o755, w.socket: 0o666} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	args, _ := json.Marshal([]string{"post", w.socket, "/v1/agents", `{"message":"hello"}`})
	r = run(asNobody(exec.Command(helperBinary(t)), helperEnv+"="+string(args)))
	want = fmt.Sprintf(`403 Forbidden {"error":"connection refused: this subdash control socket belongs to uid 0; uid %d may not use it","code":"forbidden"}`, nobody)
	if r.code != 0 || strings.TrimSpace(r.stdout) != want {
		t.Fatalf("a request of uid %d: %+v, want %q", nobody, r, want)
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
