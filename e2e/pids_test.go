package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// pidsCommand is the agent command of TestSpawnPastThePidsLimit:
// "stream…" waits until the fifo named go in its working directory is
// opened for writing, then prints "<message> <n>" for n = 1, 2, … (shell
// builtins only, no process per line) until a file named stop is there,
// then "<message> end <n>"; anything else sleeps (one process).
const pidsCommand = `read m; case "$m" in stream*) read x < go; i=0; while [ ! -e stop ] && [ $i -lt 3000000 ]; do i=$((i+1)); echo "$m $i"; done; echo "$m end $i";; *) exec sleep 600;; esac`

// pidsCgroup makes a pids cgroup (v1) of its own for the test with
// pids.max limit, and removes it at the end once its processes are gone;
// it skips the test with the reason when it cannot.
func pidsCgroup(t *testing.T, limit int) string {
	t.Helper()
	root := "/sys/fs/cgroup/pids"
	if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
		t.Skipf("no pids cgroup (v1) at %s: %v", root, err)
	}
	dir := filepath.Join(root, fmt.Sprintf("subdash-e2e-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("the pids cgroup is not writable here (%v): a host under a pids.max cannot be made", err)
	}
	t.Cleanup(func() {
		// Runs after the host's cleanup (registered later): its agents
		// end with it; a cgroup is removed once it holds no process.
		testkit.Eventually(t, dashWait, "the processes of "+dir+" to end", func() bool {
			b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			return err != nil || len(bytes.TrimSpace(b)) == 0
		})
		if err := os.Remove(dir); err != nil {
			t.Errorf("removing the test's cgroup: %v", err)
		}
	})
	setPidsMax(t, dir, strconv.Itoa(limit))
	return dir
}

// setPidsMax writes v ("max" or a number) to the cgroup's pids.max.
func setPidsMax(t *testing.T, dir, v string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A host in a pids cgroup shares its pids.max with its own threads, its
// agents and their children (root is bound by it, as by no ulimit -u).
// Spawns past it end errored naming the cgroup, its limit and what to
// do; the host does not abort (Go aborts a process that cannot start a
// thread: seen as "runtime/cgo: pthread_create failed" with flooding
// agents at pids.max 30 before the host kept threads ready), the agents
// already running go on and none of their output is lost, list answers,
// and once the limit is raised a spawn runs.
func TestSpawnPastThePidsLimit(t *testing.T) {
	cg := pidsCgroup(t, 40)
	w := newWorkspace(t)
	args := append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg, binPath, "serve", "--command", pidsCommand, "--max-agents", "100", "--grace", "1s"}, w.flags()...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.Env = testEnv()
	host := startCmd(t, cmd)
	waitListening(t, host, w.socket)
	ctx := context.Background()
	c := client.NewClient(w.socket, "")

	// Agents that will flood once the limit is reached: more floods than
	// the host then reads on threads of their own.
	if err := syscall.Mkfifo(filepath.Join(w.dir, "go"), 0o600); err != nil {
		t.Fatal(err)
	}
	names := []string{"stream-a", "stream-b", "stream-c", "stream-d", "stream-e", "stream-f"}
	var streams []string
	for _, m := range names {
		sp, err := c.Spawn(ctx, m)
		if err != nil || sp.Status != proto.StatusRunning {
			t.Fatalf("spawn %s: %s, %v", m, sp.Status, err)
		}
		streams = append(streams, sp.AgentID)
	}
	var running []string
	refused := ""
	for i := 0; i < 40 && refused == ""; i++ {
		sp, err := c.Spawn(ctx, fmt.Sprintf("sleeper %d", i))
		if err != nil {
			t.Fatalf("spawn %d: the host did not answer: %v\n%s", i, err, host.stderr)
		}
		switch sp.Status {
		case proto.StatusRunning:
			running = append(running, sp.AgentID)
		case proto.StatusErrored:
			refused = sp.AgentID
		default:
			t.Fatalf("spawn %d: status %s", i, sp.Status)
		}
	}
	if refused == "" || len(running) < 3 {
		t.Fatalf("at pids.max 40: %d sleepers ran, refused %q; want some to run, then one refused", len(running), refused)
	}
	ms := 10000
	wr, err := c.Wait(ctx, []string{refused}, &ms)
	if err != nil {
		t.Fatal(err)
	}
	le := ""
	if d := wr.Details[refused]; d.LastError != nil {
		le = *d.LastError
	}
	for _, want := range []string{"cannot start submission", "no process could be made", "the pids cgroup " + cg, "allows 40 processes and threads (pids.max)", "raise pids.max or lower --max-agents"} {
		if !strings.Contains(le, want) {
			t.Errorf("the refused spawn's error %q does not say %q", le, want)
		}
	}

	// The floods start at the limit.
	fifo, err := os.OpenFile(filepath.Join(w.dir, "go"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fifo.WriteString(strings.Repeat("go\n", len(names))); err != nil {
		t.Fatal(err)
	}
	if err := fifo.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, dashWait, "every stream to print", func() bool {
		ls, err := c.List(ctx)
		if err != nil {
			t.Fatalf("list while the streams flood at the limit: %v\n%s", err, host.stderr)
		}
		printing := 0
		for _, a := range ls.Agents {
			if slices.Contains(streams, a.AgentID) && a.OutputRate != nil {
				printing++
			}
		}
		return printing == len(streams)
	})

	// The host answers; the agents that started go on.
	ls, err := c.List(ctx)
	if err != nil {
		t.Fatalf("list after the limit: %v\n%s", err, host.stderr)
	}
	status := map[string]proto.Status{}
	for _, a := range ls.Agents {
		status[a.AgentID] = a.Status
	}
	if len(status) != len(running)+len(streams)+1 {
		t.Errorf("list has %d agents, want the %d spawned", len(status), len(running)+len(streams)+1)
	}
	for _, id := range append(append([]string{}, streams...), running...) {
		if status[id] != proto.StatusRunning {
			t.Errorf("agent %s that started is %s", id, status[id])
		}
	}

	// The streams end when told; every line they printed is in their logs.
	if err := os.WriteFile(filepath.Join(w.dir, "stop"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ms = 60000
	for _, id := range streams {
		if _, err := c.Wait(ctx, []string{id}, &ms); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range streams {
		var log bytes.Buffer
		gaps, err := c.WriteRawLog(ctx, &log, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(gaps) != 0 {
			t.Errorf("%s's log has gaps: %+v", id, gaps)
		}
		checkStream(t, names[i], log.String())
	}

	// Raised, the limit lets a spawn run.
	setPidsMax(t, cg, "max")
	sp, err := c.Spawn(ctx, "after the limit was raised")
	if err != nil || sp.Status != proto.StatusRunning {
		t.Errorf("a spawn after pids.max was raised: %s, %v; want it running", sp.Status, err)
	}
	_ = syscall.Kill(host.cmd.Process.Pid, syscall.SIGTERM)
	if _, stderr := host.wait(t); strings.Contains(stderr, "pthread_create") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("serve aborted:\n%s", stderr)
	}
}

// checkStream requires log to be a stream agent's whole output: "<m> 1"
// to "<m> n", each once and in order, then "<m> end n".
func checkStream(t *testing.T, m, log string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	last := lines[len(lines)-1]
	n, err := strconv.Atoi(strings.TrimPrefix(last, m+" end "))
	if err != nil || n != len(lines)-1 || n == 0 {
		t.Fatalf("%s's log (%d lines) does not end with %q and as many lines before: it ends %q", m, len(lines), m+" end <n>", last)
	}
	for i, l := range lines[:n] {
		if want := m + " " + strconv.Itoa(i+1); l != want {
			t.Fatalf("%s's log line %d is %q, want %q: output was lost", m, i+1, l, want)
		}
	}
	t.Logf("%s printed %d lines, all in its log", m, n)
}
