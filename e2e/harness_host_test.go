package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// e2eCommand is the agent command of the end-to-end tests: it reads its
// message; "sleep…" records its process group in <agent-id>.pid in the
// working directory and sleeps, "fail…" fails with exit code 3, anything
// else is answered "got: <message>".
const e2eCommand = `read m; case "$m" in sleep*) echo $$ > "$SUBDASH_AGENT_ID.pid"; exec sleep 60;; fail*) echo oops >&2; exit 3;; esac; echo "got: $m"`

// attachCommand is the host's agent command in the attach tests: "stream…"
// records its process group in <agent-id>.pid and prints a numbered line
// every 50 ms until stopped; anything else is
// answered "got: <message>".
const attachCommand = `read m; case "$m" in stream*) echo $$ > "$SUBDASH_AGENT_ID.pid"; i=0; while :; do i=$((i+1)); echo "tick $i of $m"; sleep 0.05; done;; esac; echo "got: $m"`

// workspace is a temporary working directory, state directory and control
// socket path for one subdash.
type workspace struct{ base, dir, state, socket string }

func newWorkspace(t *testing.T) workspace {
	t.Helper()
	base := t.TempDir()
	w := workspace{base: base, dir: filepath.Join(base, "work"), state: filepath.Join(base, "state"), socket: filepath.Join(base, "run", "s.sock")}
	if err := os.Mkdir(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// flags returns the subdash flags that select w.
func (w workspace) flags() []string {
	return []string{"--dir", w.dir, "--state-dir", w.state, "--socket", w.socket}
}

// process is a running subdash whose stderr is kept.
type process struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan struct{}
}

// wait waits for the process to end and returns its exit status and
// stderr.
func (p *process) wait(t *testing.T) (int, string) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%v did not exit", p.cmd.Args)
	}
	return p.cmd.ProcessState.ExitCode(), p.stderr.String()
}

// start starts the subdash binary with args and env (added to this
// process's environment without SUBDASH_SOCKET), killed at the end of the
// test if still running.
func start(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(subdashFor(t), args...)
	cmd.Env = append(testEnv(), env...)
	return startCmd(t, cmd)
}

// startCmd starts cmd with its stderr collected, sent SIGTERM and waited
// for at the end of the test if still running.
func startCmd(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			p.wait(t)
		}
	})
	return p
}

// serveWith starts `subdash serve args… --dir … --state-dir … --socket …`
// for w with env and waits until its socket answers.
func serveWith(t *testing.T, w workspace, env []string, args ...string) *process {
	t.Helper()
	p := start(t, env, append(append([]string{"serve"}, args...), w.flags()...)...)
	waitListening(t, p, w.socket)
	return p
}

// startServe starts `subdash serve` for w with e2eCommand and at most two
// running agents, and waits until its socket answers.
func startServe(t *testing.T, w workspace, env ...string) *process {
	t.Helper()
	return serveWith(t, w, env, "--command", e2eCommand, "--max-agents", "2", "--grace", "200ms")
}

// startAttachServe starts `subdash serve` for w with attachCommand and at
// most three running agents.
func startAttachServe(t *testing.T, w workspace) *process {
	t.Helper()
	return serveWith(t, w, nil, "--command", attachCommand, "--max-agents", "3", "--grace", "200ms")
}

// startServeAt starts `subdash serve` for w on socket (no --socket flag
// when it is the default) with env.
func startServeAt(t *testing.T, w workspace, socket string, env ...string) *process {
	t.Helper()
	p := start(t, env, "serve", "--command", e2eCommand, "--dir", w.dir, "--state-dir", w.state)
	waitListening(t, p, socket)
	return p
}

// waitListening polls until something accepts connections on socket.
func waitListening(t *testing.T, p *process, socket string) {
	t.Helper()
	testkit.Eventually(t, dashWait, "something to listen on "+socket, func() bool {
		select {
		case <-p.done:
			t.Fatalf("%v exited: %s", p.cmd.Args, p.stderr)
		default:
		}
		c, err := net.Dial("unix", socket)
		if err == nil {
			c.Close() //nolint:errcheck // a probe that sent nothing: its Close cannot lose data
		}
		return err == nil
	})
}

// ctlRun is one run of `subdash ctl`.
type ctlRun struct {
	code           int
	stdout, stderr string
}

// runCtl runs `subdash ctl args…` with env and stdin and returns what it
// printed and its exit status.
func runCtl(t *testing.T, env []string, stdin string, args ...string) ctlRun {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"ctl"}, args...)...) // a client: a race-built one starts in a second
	cmd.Env = append(testEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return ctlRun{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

// ctlOK runs ctl, requires exit status 0 and nothing on stderr, and
// decodes its JSON output into out (unless out is nil).
func ctlOK(t *testing.T, w workspace, out any, args ...string) string {
	t.Helper()
	r := runCtl(t, nil, "", append(args, "--socket", w.socket)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("ctl %q: exit %d, stderr %q", args, r.code, r.stderr)
	}
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero() // decode into a fresh value, not merged maps
		if err := json.Unmarshal([]byte(r.stdout), out); err != nil {
			t.Fatalf("ctl %q: %v in %q", args, err, r.stdout)
		}
	}
	return r.stdout
}

// ctlFails runs ctl and requires exit status 1, nothing on stdout, and
// exactly "<want>\n" on stderr.
func ctlFails(t *testing.T, w workspace, want string, args ...string) {
	t.Helper()
	r := runCtl(t, nil, "", append(args, "--socket", w.socket)...)
	if r.code != 1 || r.stdout != "" || r.stderr != want+"\n" {
		t.Errorf("ctl %q: exit %d, stdout %q, stderr %q; want exit 1 and %q", args, r.code, r.stdout, r.stderr, want)
	}
}

// listAgents returns the host's agents by id (ctl list).
func listAgents(t *testing.T, w workspace) map[string]proto.Summary {
	t.Helper()
	var res proto.ListResult
	ctlOK(t, w, &res, "list")
	out := map[string]proto.Summary{}
	for _, a := range res.Agents {
		out[a.AgentID] = a
	}
	return out
}

// waitAgent polls ctl list until agent id satisfies cond.
func waitAgent(t *testing.T, w workspace, id, what string, cond func(proto.Summary) bool) {
	t.Helper()
	testkit.Poll(t, dashWait, "agent "+id[:8]+" to become "+what, func() (proto.Summary, bool) {
		a, ok := listAgents(t, w)[id]
		return a, ok && cond(a)
	})
}

// waitDone waits (up to 5 minutes, wait's own bound) until agent id is
// final.
func waitDone(t *testing.T, w workspace, id string) proto.WaitResult {
	t.Helper()
	var wr proto.WaitResult
	ctlOK(t, w, &wr, "wait", id, "--timeout-ms", "300000")
	if wr.TimedOut {
		t.Fatalf("agent %s not final within 5 minutes", id)
	}
	return wr
}

// readPID waits until the agent's "sleep" submission recorded its process
// group.
func readPID(t *testing.T, w workspace, id string) int {
	t.Helper()
	return testkit.Poll(t, dashWait, "agent "+id+" to write its pid file", func() (int, bool) {
		b, err := os.ReadFile(filepath.Join(w.dir, id+".pid"))
		pid, err2 := strconv.Atoi(strings.TrimSpace(string(b)))
		return pid, err == nil && err2 == nil
	})
}

// copyFile copies the file from to the file to (mode 0755).
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close() //nolint:errcheck // read only: its Close cannot lose data (dst's Close is checked)
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

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
