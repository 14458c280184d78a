package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// The tmux harness of the dashboard's end-to-end tests: a dashboard in a
// detached tmux session of its own server, keys in, screen out.

// dashWait bounds every wait for the screen.
const dashWait = 20 * time.Second

// dash is a dashboard running in a detached tmux session of its own tmux
// server. The pane runs `subdash …; echo SUBDASH-EXITED:$?` and then stays
// open, so the terminal state after exit can be inspected.
type dash struct {
	t                  *testing.T
	tmux, server       string
	dir, state, socket string
	w, h               int
	line               string // the pane's command line, for restart
	bin                string // the subdash binary run; "" is subdashFor(t)
}

// binary is the subdash binary d runs.
func (d *dash) binary() string {
	if d.bin != "" {
		return d.bin
	}
	return subdashFor(d.t)
}

// startDash starts the dashboard at w×h with args (plus --dir, --state-dir
// and --socket of a temporary workspace) and the extra environment env.
func startDash(t *testing.T, w, h int, env []string, args ...string) *dash {
	t.Helper()
	return startDashIn(t, w, h, nil, env, args...)
}

// startDashIn is startDash in a tmux whose options are set first (each a
// "set-option" argument list, e.g. {"-g", "window-style", "bg=white"}),
// before the dashboard starts and asks the terminal for its background.
func startDashIn(t *testing.T, w, h int, options [][]string, env []string, args ...string) *dash {
	t.Helper()
	base := t.TempDir()
	d := &dash{t: t, server: fmt.Sprintf("subdash-dash-%d-%d", os.Getpid(), time.Now().UnixNano()),
		dir: filepath.Join(base, "work"), state: filepath.Join(base, "state"), socket: filepath.Join(base, "s.sock"), w: w, h: h}
	if err := os.Mkdir(d.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d.run(options, env, append([]string{"--dir", d.dir, "--state-dir", d.state, "--socket", d.socket}, args...)...)
	return d
}

// startViewer runs `subdash args…` in a tmux session of its own server, at
// 160x45, as startDash does, without adding a workspace's flags.
func startViewer(t *testing.T, w workspace, args ...string) *dash {
	t.Helper()
	return startViewerOf(t, w, "", args...)
}

// startViewerOf is startViewer running the subdash binary bin ("":
// subdashFor(t)).
func startViewerOf(t *testing.T, w workspace, bin string, args ...string) *dash {
	t.Helper()
	return startViewerIn(t, w, bin, 160, 45, nil, args...)
}

// startViewerIn is startViewerOf at width×height with the extra
// environment env.
func startViewerIn(t *testing.T, w workspace, bin string, width, height int, env []string, args ...string) *dash {
	t.Helper()
	d := &dash{t: t, server: fmt.Sprintf("subdash-view-%d-%d", os.Getpid(), time.Now().UnixNano()),
		dir: w.dir, state: w.state, socket: w.socket, w: width, h: height, bin: bin}
	d.run(nil, env, args...)
	return d
}

// run starts `subdash args…` in d's own tmux server at d.w×d.h, with the
// tmux options set first and the extra environment env (the variables that
// would change what the tests expect emptied), and ends it all when the
// test ends.
func (d *dash) run(options [][]string, env []string, args ...string) {
	t := d.t
	t.Helper()
	d.tmux = requireTool(t, "tmux")
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	envs := []string{"TERM=xterm-256color", "SUBDASH_SOCKET=", "MEMO_SUBAGENT_MAX_AGENTS=", "SUBDASH_PRESET=", "MEMO_ENABLE_COLLAB_TOOLS="}
	envs = append(envs, env...)
	for i, e := range envs {
		envs[i] = shellQuote(e)
	}
	// The pane's shell runs without job control, so it shares the
	// dashboard's process group and gets the SIGINT of a ctrl+c typed into
	// the pager. dash (the /bin/sh of Debian, and tmux's shell when $SHELL
	// is unset or sh) would die of it and take the pane away; bash waits for
	// its child. The trap keeps the shell alive under both; a trapped
	// signal is reset to its default in children, so the dashboard and the
	// pager still get SIGINT as from any shell.
	line := fmt.Sprintf("trap : INT; env %s %s %s; echo SUBDASH-EXITED:$?; sleep 3600",
		strings.Join(envs, " "), shellQuote(d.binary()), strings.Join(quoted, " "))
	d.line = line
	first := line
	if len(options) > 0 {
		first = "sleep 3600"
	}
	if out, err := d.tm("new-session", "-d", "-s", "dash", "-x", strconv.Itoa(d.w), "-y", strconv.Itoa(d.h), first); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	if len(options) > 0 {
		for _, o := range options {
			if out, err := d.tm(append([]string{"set-option"}, o...)...); err != nil {
				t.Fatalf("tmux set-option %q: %v %s", o, err, out)
			}
		}
		if out, err := d.tm("respawn-pane", "-k", "-t", "dash", line); err != nil {
			t.Fatalf("tmux respawn-pane: %v %s", err, out)
		}
	}
	t.Cleanup(func() {
		if pid := d.dashPID(); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_, _ = d.tm("kill-server")
		_ = os.Remove(filepath.Join(os.TempDir(), fmt.Sprintf("tmux-%d", os.Getuid()), d.server))
		d.killLeftovers()
	})
}

// restart starts the dashboard again in the same pane, workspace and
// arguments, after it exited.
func (d *dash) restart() {
	d.t.Helper()
	if out, err := d.tm("respawn-pane", "-k", "-t", "dash", d.line); err != nil {
		d.t.Fatalf("tmux respawn-pane: %v %s", err, out)
	}
}

func (d *dash) tm(args ...string) (string, error) {
	out, err := exec.Command(d.tmux, append([]string{"-L", d.server, "-f", "/dev/null"}, args...)...).CombinedOutput()
	return string(out), err
}

// screen returns the pane's text.
func (d *dash) screen() string {
	out, err := d.tm("capture-pane", "-p", "-t", "dash")
	if err != nil {
		d.t.Fatalf("capture-pane: %v %s", err, out)
	}
	return out
}

// styledScreen returns the pane with its SGR attributes.
func (d *dash) styledScreen() string {
	out, err := d.tm("capture-pane", "-e", "-p", "-t", "dash")
	if err != nil {
		d.t.Fatalf("capture-pane: %v %s", err, out)
	}
	return out
}

// waitFor polls the screen until cond holds and returns it; it fails the
// test with the last screen after dashWait.
func (d *dash) waitFor(what string, cond func(screen string) bool) string {
	d.t.Helper()
	return testkit.Poll(d.t, dashWait, what+" on screen", func() (string, bool) {
		s := d.screen()
		if cond(s) {
			return s, true
		}
		if strings.Contains(s, "SUBDASH-EXITED") && !strings.Contains(what, "exit") {
			d.t.Fatalf("the dashboard exited while waiting for %s:\n%s", what, s)
		}
		return s, false
	})
}

// waitText waits until the screen shows every text.
func (d *dash) waitText(texts ...string) string {
	d.t.Helper()
	return d.waitFor(fmt.Sprintf("%q", texts), func(s string) bool {
		for _, t := range texts {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	})
}

// waitRow waits until the table row of agent id contains text.
func (d *dash) waitRow(id, text string) string {
	d.t.Helper()
	return d.waitFor(fmt.Sprintf("row of %s to show %q", id[:8], text), func(s string) bool {
		return strings.Contains(tableRow(s, id), text)
	})
}

// keys sends tmux key names ("j", "Enter", "Escape", "C-c", "PPage").
func (d *dash) keys(keys ...string) {
	d.t.Helper()
	if out, err := d.tm(append([]string{"send-keys", "-t", "dash"}, keys...)...); err != nil {
		d.t.Fatalf("send-keys: %v %s", err, out)
	}
}

// typeText types s literally.
func (d *dash) typeText(s string) {
	d.t.Helper()
	if out, err := d.tm("send-keys", "-t", "dash", "-l", s); err != nil {
		d.t.Fatalf("send-keys: %v %s", err, out)
	}
}

// resize resizes the tmux window.
func (d *dash) resize(w, h int) {
	d.t.Helper()
	if out, err := d.tm("resize-window", "-t", "dash", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h)); err != nil {
		d.t.Fatalf("resize-window: %v %s", err, out)
	}
	d.w, d.h = w, h
}

// pipePane starts piping what the dashboard writes to its pane from now on
// into a file and returns a function reading what arrived so far.
func (d *dash) pipePane() func() string {
	d.t.Helper()
	path := filepath.Join(d.t.TempDir(), "pane.out")
	if out, err := d.tm("pipe-pane", "-t", "dash", "-o", "cat >> "+shellQuote(path)); err != nil {
		d.t.Fatalf("pipe-pane: %v %s", err, out)
	}
	return func() string { b, _ := os.ReadFile(path); return string(b) }
}

// capture is pipePane once bytes arrive (the spinner redraws while agents
// run).
func (d *dash) capture() func() string {
	d.t.Helper()
	read := d.pipePane()
	testkit.Eventually(d.t, dashWait, "pipe-pane to capture what the dashboard writes", func() bool { return len(read()) > 0 })
	return read
}

// waitExit waits until the dashboard exited and returns its exit status.
func (d *dash) waitExit() int {
	d.t.Helper()
	s := d.waitFor("the dashboard to exit", func(s string) bool { return strings.Contains(s, "SUBDASH-EXITED:") })
	i := strings.Index(s, "SUBDASH-EXITED:")
	code, _ := strconv.Atoi(strings.Fields(s[i+len("SUBDASH-EXITED:"):])[0])
	return code
}

// checkRestored checks that the terminal was given back (checkTerminalBack),
// no agent process is left and the dashboard did not panic.
func (d *dash) checkRestored() {
	d.t.Helper()
	d.checkTerminalBack()
	if left := d.leftovers(); len(left) > 0 {
		d.t.Errorf("processes left after the dashboard exited: %s", strings.Join(left, "; "))
	}
	if s := d.screen(); strings.Contains(s, "panic") {
		d.t.Errorf("the dashboard panicked:\n%s", s)
	}
}

// checkTerminalBack checks that the dashboard or viewer left the alternate
// screen and showed the cursor again.
func (d *dash) checkTerminalBack() {
	d.t.Helper()
	out, err := d.tm("display", "-p", "-t", "dash", "#{alternate_on} #{cursor_flag}")
	if err != nil {
		d.t.Fatalf("display: %v %s", err, out)
	}
	if strings.TrimSpace(out) != "0 1" {
		d.t.Errorf("terminal not restored: alternate_on cursor_flag = %q, want \"0 1\"", strings.TrimSpace(out))
	}
}

// waitServing waits until the dashboard's control socket answers `subdash
// ctl list`: it hosts its folder (SPEC §6).
func (d *dash) waitServing() {
	d.t.Helper()
	testkit.Poll(d.t, dashWait, "the dashboard to serve "+d.socket, func() (string, bool) {
		if exec.Command(binPath, "ctl", "list", "--socket", d.socket).Run() == nil {
			return "", true
		}
		return d.screen(), false
	})
}

// shellQuote quotes s for the pane's sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
