package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

	"github.com/subdash/subdash/supervisor"
)

// e2eCommand is the agent command of the end-to-end tests: it reads its
// message; "sleep…" records its process group in <agent-id>.pid in the
// working directory and sleeps, "fail…" fails with exit code 3, anything
// else is answered "got: <message>".
const e2eCommand = `read m; case "$m" in sleep*) echo $$ > "$SUBDASH_AGENT_ID.pid"; exec sleep 60;; fail*) echo oops >&2; exit 3;; esac; echo "got: $m"`

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
	cmd := exec.Command(binPath, args...)
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

// testEnv is this process's environment without the variables that would
// change what the tests expect.
func testEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "SUBDASH_SOCKET", "MEMO_ENABLE_COLLAB_TOOLS", "MEMO_SUBAGENT_MAX_AGENTS", "SUBDASH_PRESET":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// startServe starts `subdash serve` for w with e2eCommand and at most two
// running agents, and waits until its socket answers.
func startServe(t *testing.T, w workspace, env ...string) *process {
	t.Helper()
	args := append([]string{"serve", "--command", e2eCommand, "--max-agents", "2", "--grace", "200ms"}, w.flags()...)
	p := start(t, env, args...)
	waitListening(t, p, w.socket)
	return p
}

// waitListening polls until something accepts connections on socket.
func waitListening(t *testing.T, p *process, socket string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("unix", socket); err == nil {
			c.Close()
			return
		}
		select {
		case <-p.done:
			t.Fatalf("%v exited: %s", p.cmd.Args, p.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s", socket)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
	cmd := exec.Command(binPath, append([]string{"ctl"}, args...)...)
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

// readPID waits until the agent's "sleep" submission recorded its process
// group.
func readPID(t *testing.T, w workspace, id string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(w.dir, id+".pid"))
		if pid, err2 := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && err2 == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %s wrote no pid file", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupGone reports whether no process of group pgid is left.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

func TestCtlDrivesServeThroughEveryOperation(t *testing.T) {
	w := newWorkspace(t)
	serve := startServe(t, w)

	if out := ctlOK(t, w, nil, "list"); out != "{\n  \"agents\": []\n}\n" {
		t.Fatalf("list of none = %q", out)
	}
	var hello supervisor.SpawnResult
	ctlOK(t, w, &hello, "spawn", "hello")
	if hello.Status != "running" || hello.LastMessage != "hello" || hello.SubmissionID == "" || hello.CreatedAt.IsZero() {
		t.Fatalf("spawn = %+v", hello)
	}
	var wr supervisor.WaitResult
	ctlOK(t, w, &wr, "wait", hello.AgentID, "--timeout-ms", "300000")
	if d := wr.Details[hello.AgentID]; wr.TimedOut || wr.Status[hello.AgentID] != "completed" || *d.LastOutput != "got: hello" || d.LastError != nil {
		t.Fatalf("wait = %+v", wr)
	}
	if out := ctlOK(t, w, nil, "logs", hello.AgentID); out != "got: hello\n" {
		t.Fatalf("logs = %q", out)
	}

	// A message of "-" is read from stdin.
	r := runCtl(t, nil, "from stdin\n", "spawn", "-", "--socket", w.socket)
	var fromStdin supervisor.SpawnResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &fromStdin) != nil || fromStdin.LastMessage != "from stdin" {
		t.Fatalf("spawn -: %+v", r)
	}

	// send to a final agent; the logs of each submission.
	var sent supervisor.SendResult
	ctlOK(t, w, &sent, "send", hello.AgentID, "fail please")
	if sent.Status != "running" || sent.SubmissionID == hello.SubmissionID {
		t.Fatalf("send = %+v", sent)
	}
	ctlOK(t, w, &wr, "wait", hello.AgentID)
	if d := wr.Details[hello.AgentID]; d.Status != "errored" || *d.LastError != "submission failed with exit code 3" {
		t.Fatalf("wait after failing send = %+v", d)
	}
	if out := ctlOK(t, w, nil, "logs", "--submission", "1", hello.AgentID); out != "got: hello\n" {
		t.Fatalf("logs --submission 1 = %q", out)
	}
	if out := ctlOK(t, w, nil, "logs", hello.AgentID, "--submission=2"); out != "oops\n" {
		t.Fatalf("logs --submission 2 = %q", out)
	}

	// A running agent: busy, send with interrupt, interrupt.
	var a supervisor.SpawnResult
	ctlOK(t, w, &a, "spawn", "sleep a")
	firstGroup := readPID(t, w, a.AgentID)
	ctlFails(t, w, "send_input failed: agent "+a.AgentID+" is busy; set interrupt=true to cancel current submission", "send", a.AgentID, "x")
	ctlOK(t, w, &sent, "send", "--interrupt", a.AgentID, "sleep again")
	if sent.Status != "running" || sent.SubmissionID == a.SubmissionID || !groupGone(firstGroup) {
		t.Fatalf("send --interrupt = %+v; first group gone: %v", sent, groupGone(firstGroup))
	}
	var st supervisor.StatusResult
	ctlOK(t, w, &st, "interrupt", a.AgentID)
	if st.AgentID != a.AgentID || st.Status != "errored" {
		t.Fatalf("interrupt = %+v", st)
	}
	ctlFails(t, w, "interrupt failed: agent "+a.AgentID+" is not running", "interrupt", a.AgentID)
	ctlOK(t, w, &wr, "wait", a.AgentID)
	if d := wr.Details[a.AgentID]; *d.LastError != "interrupted" {
		t.Fatalf("after interrupt: %+v", d)
	}

	// The concurrency limit (2), then close of a running agent, resume.
	var b, c supervisor.SpawnResult
	ctlOK(t, w, &b, "spawn", "sleep b")
	ctlOK(t, w, &c, "spawn", "sleep c")
	ctlFails(t, w, "spawn_agent failed: subagent concurrency limit reached (2)", "spawn", "one too many")
	for range 2 {
		ctlOK(t, w, &st, "close", b.AgentID)
		if st.Status != "closed" {
			t.Fatalf("close = %+v", st)
		}
	}
	ctlFails(t, w, "send_input failed: agent "+b.AgentID+" is closed; run resume_agent first", "send", b.AgentID, "x")
	ctlOK(t, w, &st, "resume", b.AgentID)
	if st.Status != "errored" {
		t.Fatalf("resume of an agent closed while running = %+v, want errored", st)
	}

	// Errors of unknown ids and bad arguments.
	ctlFails(t, w, "spawn_agent failed: message must not be empty", "spawn", "  ")
	ctlFails(t, w, "send_input failed: message must not be empty", "send", a.AgentID, "")
	ctlFails(t, w, "send_input failed: agent not found: nope", "send", "nope", "x")
	ctlFails(t, w, "interrupt failed: agent not found: nope", "interrupt", "nope")
	ctlFails(t, w, "close_agent failed: agent not found: nope", "close", "nope")
	ctlFails(t, w, "resume_agent failed: agent not found: nope", "resume", "nope")
	// Too short to be a prefix: SPEC §3's text first, then why.
	ctlFails(t, w, "send_input failed: agent not found: "+a.AgentID[:3]+"; an id prefix needs at least 4 characters", "send", a.AgentID[:3], "hi")
	ctlFails(t, w, "logs failed: agent not found: nope", "logs", "nope")
	ctlFails(t, w, "logs failed: agent "+a.AgentID+" has no submission 9; it has 2", "logs", a.AgentID, "--submission", "9")
	// A missing id or a bad --timeout-ms is a usage error (SPEC §6: 2).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"wait"}, "wait: missing argument; usage: subdash ctl wait ID..."},
		{[]string{"wait", "x", "--timeout-ms", "0"}, "wait: --timeout-ms must be greater than zero, not 0"},
		{[]string{"wait", "x", "--timeout-ms=-5"}, "wait: --timeout-ms must be greater than zero, not -5"},
	} {
		if r := runCtl(t, nil, "", append(c.args, "--socket", w.socket)...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("ctl %q: exit %d, stderr %q; want exit 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	ctlOK(t, w, &wr, "wait", "ghost", c.AgentID)
	if wr.Status["ghost"] != "not_found" || len(wr.Status) != 1 || wr.Details["ghost"].LastMessage != nil {
		t.Fatalf("wait with an unknown id = %+v", wr)
	}
	// A timeout beyond int's range is clamped like any other (SPEC §3).
	ctlOK(t, w, &wr, "wait", "ghost", "--timeout-ms", "99999999999999999999")
	if wr.Status["ghost"] != "not_found" {
		t.Fatalf("wait with a huge timeout = %+v", wr)
	}
	if r := runCtl(t, nil, "", "wait", "x", "--timeout-ms=-99999999999999999999", "--socket", w.socket); r.code != 2 || !strings.Contains(r.stderr, "--timeout-ms must be greater than zero") {
		t.Errorf("wait with a hugely negative timeout: exit %d, %q; want a usage error", r.code, r.stderr)
	}

	// A wait that times out: 1 ms is clamped to 10 s.
	began := time.Now()
	out := ctlOK(t, w, &wr, "wait", c.AgentID, "--timeout-ms", "1")
	if took := time.Since(began); !wr.TimedOut || len(wr.Status) != 0 || took < 10*time.Second {
		t.Fatalf("wait with timeout: %q after %s", out, took)
	}
	if !strings.Contains(out, "\"status\": {},\n  \"details\": {},\n  \"timed_out\": true") {
		t.Errorf("timed-out wait printed %q", out)
	}

	var list struct{ Agents []supervisor.Summary }
	ctlOK(t, w, &list, "list")
	var ids []string
	for _, s := range list.Agents {
		ids = append(ids, s.AgentID)
	}
	if want := []string{hello.AgentID, fromStdin.AgentID, a.AgentID, b.AgentID, c.AgentID}; strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("list = %v, want %v (oldest first)", ids, want)
	}

	// SIGTERM terminates every running submission and removes the socket;
	// a wait in progress gets the final status, not an error.
	cGroup := readPID(t, w, c.AgentID)
	waiting := exec.Command(binPath, "ctl", "wait", c.AgentID, "--timeout-ms", "60000", "--socket", w.socket)
	waiting.Env = testEnv()
	var waitOut, waitErr bytes.Buffer
	waiting.Stdout, waiting.Stderr = &waitOut, &waitErr
	if err := waiting.Start(); err != nil {
		t.Fatal(err)
	}
	waitForConnection(t, waiting.Process.Pid)
	_ = serve.cmd.Process.Signal(syscall.SIGTERM)
	if code, stderr := serve.wait(t); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("serve exited %d after SIGTERM, want %d (128+15, after stopping its agents): %s", code, 128+int(syscall.SIGTERM), stderr)
	}
	if err := waiting.Wait(); err != nil || !strings.Contains(waitOut.String(), `"last_error": "interrupted"`) {
		t.Errorf("ctl wait across serve's SIGTERM: %v, stdout %q, stderr %q; want the final status", err, waitOut.String(), waitErr.String())
	}
	if !groupGone(cGroup) {
		t.Errorf("process group %d of a running agent survived serve", cGroup)
	}
	if _, err := os.Lstat(w.socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	// The socket was given (--socket): the message names it, not the
	// current folder.
	ctlFails(t, w, "list_agents failed: no subdash is serving on socket "+w.socket+"; start subdash or subdash serve with --socket "+w.socket, "list")
}

// waitForConnection waits until process pid (a client of one Unix socket)
// holds a connected Unix socket: one of its fds is socket:[inode], and
// /proc/net/unix lists that inode in state 03 (connected).
func waitForConnection(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		inodes := map[string]bool{}
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
		b, err := os.ReadFile("/proc/net/unix")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 7 && f[5] == "03" && inodes[f[6]] {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d connected to no Unix socket", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustWd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func TestCtlUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"frob"}, {"send", "id"}, {"spawn"}, {"list", "--bogus"}, {"close", "a", "b"}, {"wait", "x", "--timeout-ms", "soon"}} {
		r := runCtl(t, nil, "", args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "usage: subdash ctl") {
			t.Errorf("ctl %q: exit %d, stdout %q, stderr %q; want exit 2 with a usage line", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := runCtl(t, nil, "", "help"); r.code != 0 || !strings.Contains(r.stdout, "wait ID... [--timeout-ms N]") {
		t.Errorf("ctl help: %+v", r)
	}
}
