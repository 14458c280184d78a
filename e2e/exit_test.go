package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestExitStatus: 2 only for a mistake in the command line, 1 for a
// failure at run time, 128+n when a signal ended the command (SPEC §6).
func TestExitStatus(t *testing.T) {
	w := newWorkspace(t)
	blocker := filepath.Join(w.base, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"unknown flag", []string{"serve", "--bogus"}, 2, "unknown flag: --bogus; see subdash serve --help"},
		{"unknown single-dash flag", []string{"serve", "-bogus"}, 2, "unknown flag: -bogus; see subdash serve --help"},
		{"single-dash long flag", []string{"serve", "-max-agents", "0"}, 2, "invalid --max-agents 0"},
		{"bad flag value", []string{"serve", "--max-agents", "0"}, 2, "invalid --max-agents 0"},
		{"missing --dir", []string{"serve", "--dir", filepath.Join(w.base, "nowhere")}, 2, "does not exist"},
		{"mcp bad setting", []string{"mcp", "--preset", "claude", "--command", "x"}, 2, "--preset"},
		{"socket not creatable", []string{"serve", "--dir", w.dir, "--state-dir", w.state, "--socket", filepath.Join(blocker, "s.sock")}, 1, blocker},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := start(t, nil, c.args...)
			code, stderr := p.wait(t)
			if code != c.code || !strings.Contains(stderr, c.says) {
				t.Errorf("exit status %d, stderr %q; want %d and %q", code, stderr, c.code, c.says)
			}
		})
	}
	t.Run("another host serves", func(t *testing.T) {
		w := newWorkspace(t)
		startServe(t, w)
		p := start(t, nil, append([]string{"serve"}, w.flags()...)...)
		if code, stderr := p.wait(t); code != 1 || !strings.Contains(stderr, w.socket) {
			t.Errorf("second serve: exit status %d, stderr %q; want 1 naming the socket", code, stderr)
		}
	})
	t.Run("SIGINT", func(t *testing.T) {
		p := startServe(t, newWorkspace(t))
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		if code, stderr := p.wait(t); code != 128+int(syscall.SIGINT) {
			t.Errorf("serve exited %d after SIGINT, want 130: %s", code, stderr)
		}
	})
}

// TestAgentSignals: SIGINT, SIGTERM and SIGHUP (a terminal that hung up)
// stop `subdash agent` mid-task as its host's interrupt does: it says so
// and exits 128+n (SPEC §6).
func TestAgentSignals(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte("TODO: one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for sig, name := range map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"} {
		t.Run(name, func(t *testing.T) {
			out, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close() //nolint:errcheck // the read end of a pipe the test only reads
			cmd := exec.Command(subdashFor(t), "agent", "--pace", "1s")
			cmd.Env, cmd.Dir, cmd.Stdin, cmd.Stdout = testEnv(), dir, strings.NewReader("audit ."), w
			p := startCmd(t, cmd)
			_ = w.Close()
			// Its first line says the task runs, signals taken.
			if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
				t.Fatalf("no first line: %v", err)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code, stderr := p.wait(t)
			if want := "stopped: " + name + " received"; code != 128+int(sig) || !strings.Contains(stderr, want) {
				t.Errorf("exit status %d, stderr %q after %v; want %d and %q", code, stderr, sig, 128+int(sig), want)
			}
		})
	}
}

// subdash --version prints the version on stdout and exits 0: devel (with
// the commit when Go stamped one) for a plain build, never "(devel)".
func TestVersionFlag(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		out, err := exec.Command(binPath, arg).Output()
		if err != nil {
			t.Fatalf("subdash %s: %v", arg, err)
		}
		if !regexp.MustCompile(`^subdash (devel( [0-9a-f]{12}(\+dirty)?)?|v\S+)\n$`).Match(out) {
			t.Errorf("subdash %s printed %q", arg, out)
		}
	}
}
