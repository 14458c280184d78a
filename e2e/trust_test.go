package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/socket"
)

// TestClientsRefuseASocketAnotherUserCouldHold (SPEC §6, the rule of
// trust): another user's HTTP server listens where a client looks for
// subdash: in a folder of theirs, in a folder of root's that anyone may
// write in, in root's default folder that they made (XDG_RUNTIME_DIR), or
// in a private folder of root's (a socket left there). ctl spawn, mcp,
// attach and the dashboard each exit 1 with the refusal, which names the
// folder and its owner or mode, or the process, and what to do; serve
// refuses to take the socket; and the server receives no request: the
// task never reaches it.
func TestClientsRefuseASocketAnotherUserCouldHold(t *testing.T) {
	requireRoot(t)
	bin := helperBinary(t)
	w := newWorkspace(t)
	for _, p := range []string{filepath.Dir(w.base), w.base} {
		if err := os.Chmod(p, 0o755); err != nil { // searchable by the other user
			t.Fatal(err)
		}
	}
	folder := func(name string, mode os.FileMode, owner int) string {
		dir := filepath.Join(w.base, name)
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, owner, owner); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	xdg := filepath.Join(w.base, "xdg")
	for _, c := range []struct {
		name   string
		socket func() string // makes the folder, returns the socket
		env    []string      // no --socket when set: the default socket of w.dir
		want   func(s *otherServer) string
	}{
		{"a folder of theirs", func() string { return filepath.Join(folder("theirs", 0o777, nobody), "s.sock") }, nil,
			func(s *otherServer) string {
				return fmt.Sprintf("control socket folder %s belongs to uid %d (nobody), not to you (uid 0), so a socket there may be theirs; remove it or pass --socket with a path in a private folder of yours",
					filepath.Dir(s.socket), nobody)
			}},
		{"a folder of root's that others may write in", func() string { return filepath.Join(folder("open", 0o777, 0), "s.sock") }, nil,
			func(s *otherServer) string {
				dir := filepath.Dir(s.socket)
				return fmt.Sprintf("control socket folder %s has mode 0777: its group and every other user can write in it, and so put a socket of their own there; run chmod go-w %s, or remove it, or pass --socket with a path in a private folder of yours", dir, dir)
			}},
		{"root's default folder, made by them", func() string {
			folder("xdg/subdash", 0o777, nobody)
			return socket.Default(w.dir, xdg, 0)
		}, []string{"XDG_RUNTIME_DIR=" + xdg},
			func(s *otherServer) string {
				dir := filepath.Dir(s.socket)
				return fmt.Sprintf("control socket folder %s belongs to uid %d (nobody), not to you (uid 0): another user made subdash's default folder, and a socket there would hand your tasks to them; have it removed (rm -r %s, as root or as its owner), or set XDG_RUNTIME_DIR to a private folder of yours, or pass --socket with a path in one", dir, nobody, dir)
			}},
		{"a private folder of root's", func() string { return filepath.Join(folder("private", 0o777, 0), "s.sock") }, nil,
			func(s *otherServer) string {
				return fmt.Sprintf("control socket %s is served by pid %d of uid %d (nobody), not by you (uid 0): it is not your subdash; remove the socket (rm %s) or pass --socket with a path in a private folder of yours",
					s.socket, s.pid, nobody, s.socket)
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := serveAsNobody(t, bin, c.socket())
			if c.name == "a private folder of root's" {
				if err := os.Chmod(filepath.Dir(srv.socket), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			want := c.want(srv)
			where := []string{"--socket", srv.socket}
			if c.env != nil {
				where = []string{"--dir", w.dir}
			}
			r := runCtl(t, c.env, "", append([]string{"spawn", "SECRET"}, where...)...)
			if r.code != 1 || r.stdout != "" || r.stderr != "spawn_agent failed: "+want+"\n" {
				t.Errorf("ctl spawn: exit %d, stdout %q, stderr %q; want exit 1 and %q", r.code, r.stdout, r.stderr, want)
			}
			for _, args := range [][]string{
				{"mcp"},
				{"attach"},
				{"--command", "cat", "--state-dir", w.state}, // the dashboard: it attaches where a host serves
				{"serve", "--command", "cat", "--state-dir", w.state},
			} {
				cmd := exec.Command(binPath, append(args, where...)...)
				cmd.Dir, cmd.Env = w.dir, append(testEnv(), c.env...)
				out, _ := cmd.CombinedOutput()
				if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "subdash: "+want+"\n") {
					t.Errorf("subdash %s: exit %d, %q; want exit 1 and %q", strings.Join(args, " "), code, out, "subdash: "+want)
				}
			}
			for _, line := range srv.settle(t) {
				if line != "accepted" || c.name != "a private folder of root's" {
					// Only in a private folder does a client connect, to
					// learn who serves it; elsewhere it refuses first.
					t.Errorf("uid nobody's server got %q", line)
				}
			}
		})
	}
}
