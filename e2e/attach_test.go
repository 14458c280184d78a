package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestViewerOfServe: `subdash serve` with a streaming and a finished
// agent; `subdash` in the same folder attaches, shows the host's table and
// streaming log, acts on the host with i, c, r and n (checked with ctl
// list), and q detaches at once while the agents keep running.
func TestViewerOfServe(t *testing.T) {
	raceChecked(t)
	w := newWorkspace(t)
	serve := startAttachServe(t, w)
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "stream one")
	streaming := sp.AgentID
	ctlOK(t, w, &sp, "spawn", "hello")
	done := sp.AgentID
	waitAgent(t, w, done, "completed", func(a proto.Summary) bool { return a.Status == proto.StatusCompleted })

	d := startViewer(t, w, "--dir", w.dir, "--socket", w.socket)
	d.waitText(fmt.Sprintf("attached to subdash serve, pid %d", serve.cmd.Process.Pid))
	d.waitRow(streaming, "running")
	d.waitRow(done, "completed")
	// The streaming log follows the host: a later tick replaces an earlier one.
	first := d.waitText("tick ")
	d.waitFor("newer ticks", func(s string) bool { return lastTick(s) > lastTick(first)+5 })

	d.keys("i")
	s := d.waitFor("interrupt to be asked or done", func(s string) bool {
		return strings.Contains(s, "Interrupt") || strings.Contains(s, "interrupted")
	})
	if !strings.Contains(s, "interrupted") {
		d.keys("y")
	}
	waitAgent(t, w, streaming, "interrupted", func(a proto.Summary) bool { return a.Status == proto.StatusErrored })
	d.waitText("interrupted " + streaming[:8])

	d.keys("j") // the finished agent
	d.waitText("got: hello")
	d.keys("c")
	waitAgent(t, w, done, "closed", func(a proto.Summary) bool { return a.Status == proto.StatusClosed })
	d.waitRow(done, "closed")
	d.keys("r")
	waitAgent(t, w, done, "resumed", func(a proto.Summary) bool { return a.Status == proto.StatusCompleted })

	d.keys("n")
	d.typeText("from the viewer")
	d.keys("Enter")
	d.waitText("spawned ")
	testkit.Poll(t, dashWait, "the host to have a third agent", func() (map[string]proto.Summary, bool) {
		l := listAgents(t, w)
		return l, len(l) == 3
	})

	d.keys("q") // detaches at once: no question
	if code := d.waitExit(); code != 0 {
		t.Fatalf("viewer exit status %d:\n%s", code, d.screen())
	}
	d.checkTerminalBack()
	if _, err := os.Stat(w.socket); err != nil || len(listAgents(t, w)) != 3 {
		t.Fatalf("the host did not go on after the viewer detached: %v", err)
	}
}

// lastTick returns the highest "tick N" on the screen.
func lastTick(s string) int {
	best := 0
	for _, f := range strings.Split(s, "tick ")[1:] {
		if n, err := strconv.Atoi(strings.Fields(f)[0]); err == nil && n > best {
			best = n
		}
	}
	return best
}

// TestTwoViewersAndReadOnly: an operation from one viewer (and one from
// ctl) shows in the other; a --read-only viewer says so and refuses every
// operation with a clear message.
func TestTwoViewersAndReadOnly(t *testing.T) {
	raceChecked(t)
	w := newWorkspace(t)
	startAttachServe(t, w)
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "hello")
	v1 := startViewer(t, w, "attach", "--socket", w.socket)
	v2 := startViewer(t, w, "attach", "--socket", w.socket, "--read-only")
	v1.waitRow(sp.AgentID, "completed")
	v2.waitText("read-only: attached to subdash serve")
	v2.waitRow(sp.AgentID, "completed")

	v1.keys("c")
	v2.waitRow(sp.AgentID, "closed")
	ctlOK(t, w, nil, "resume", sp.AgentID)
	v1.waitRow(sp.AgentID, "completed")
	v2.waitRow(sp.AgentID, "completed")

	// Refused at the key: no input or question opens first, and the help
	// line offers only what a read-only viewer can do.
	v2.keys("c")
	v2.waitText("read-only viewer: close refused; attach without --read-only to change anything")
	v2.keys("n")
	if s := v2.waitText("read-only viewer: spawn refused", "/ search"); strings.Contains(s, "n spawn") {
		t.Errorf("a read-only viewer's help line offers spawn:\n%s", s)
	}
	v2.keys("x")
	if s := v2.waitText("read-only viewer: forget refused"); strings.Contains(s, "Forget ") {
		t.Errorf("a read-only viewer asked whether to forget:\n%s", s)
	}
	v2.keys("i")
	v2.waitText("read-only viewer: interrupt refused")
	if n := len(listAgents(t, w)); n != 1 {
		t.Fatalf("a read-only viewer changed the host: %d agents", n)
	}
}

// TestViewerSignals: SIGINT, SIGTERM and SIGHUP end a viewer as q does,
// detaching with the terminal restored while the host goes on, and it
// exits 128+n as shells expect (SPEC §6).
func TestViewerSignals(t *testing.T) {
	raceChecked(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			// A workspace each: a viewer's harness ends what runs in its
			// folder when its test ends.
			w := newWorkspace(t)
			startAttachServe(t, w)
			var sp proto.SpawnResult
			ctlOK(t, w, &sp, "spawn", "stream x")
			d := startViewer(t, w, "attach", "--socket", w.socket)
			d.waitText("tick ")
			pid := d.dashPID()
			if pid == 0 {
				t.Fatal("no viewer process")
			}
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatal(err)
			}
			if code := d.waitExit(); code != 128+int(sig) {
				t.Errorf("viewer exit status %d after %v, want %d", code, sig, 128+int(sig))
			}
			d.checkTerminalBack()
			if a := listAgents(t, w)[sp.AgentID]; a.Status != proto.StatusRunning {
				t.Errorf("the host's agent is %s after its viewer ended, want running", a.Status)
			}
		})
	}
}

// TestHostEndsWithTwoViewers: the host ends (SIGTERM, then a fresh host
// SIGKILLed) while two viewers are attached; each says so and exits with the
// terminal restored.
func TestHostEndsWithTwoViewers(t *testing.T) {
	raceChecked(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			w := newWorkspace(t)
			serve := startAttachServe(t, w)
			var sp proto.SpawnResult
			ctlOK(t, w, &sp, "spawn", "stream x")
			pgid := readPID(t, w, sp.AgentID)
			a := startViewer(t, w, "attach", "--socket", w.socket)
			b := startViewer(t, w, "attach", "--socket", w.socket)
			a.waitText("tick ")
			b.waitText("tick ")
			if err := serve.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("the subdash host (pid %d) stopped serving %s; the viewer closed", serve.cmd.Process.Pid, w.socket)
			for _, d := range []*dash{a, b} {
				if code := d.waitExit(); code != 1 {
					t.Errorf("viewer exit status %d", code)
				}
				if s := d.screen(); !strings.Contains(strings.ReplaceAll(s, "\n", ""), want) {
					t.Errorf("viewer says:\n%s\nwant %q", s, want)
				}
				d.checkTerminalBack()
			}
			if sig == syscall.SIGKILL {
				// The agents' process groups outlived their host; the next
				// host's orphan sweep is theirs. Here: kill what is left.
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		})
	}
}

// TestAttachBadInput: a socket that is not a subdash, a host of another
// protocol, host-only flags that differ from the host's, and no host at all
// each get a clear message, before any screen is drawn.
func TestAttachBadInput(t *testing.T) {
	raceChecked(t)
	w := newWorkspace(t)
	run := func(args ...string) (int, string) {
		cmd := exec.Command(subdashFor(t), args...)
		cmd.Env = testEnv()
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := run("attach", "--socket", w.socket); code == 0 || !strings.Contains(out, "no subdash is serving on socket "+w.socket) {
		t.Errorf("no host: exit %d, %q", code, out)
	}
	gone := filepath.Join(w.base, "gone")
	if code, out := run("attach", "--dir", gone); code != 2 || !strings.Contains(out, "--dir "+gone+" is not a directory: give the folder whose host to attach to") {
		t.Errorf("attach --dir of no folder: exit %d, %q", code, out)
	}

	// Any listener answering 404 to /v1/info: not a subdash host.
	other := filepath.Join(w.base, "other.sock")
	ln, err := net.Listen("unix", other)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() //nolint:errcheck // cleanup of a listener the test only holds
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close() //nolint:errcheck // the fake peer's connection: its answer is written before, and the client under test judges it
				buf := make([]byte, 4096)
				_, _ = c.Read(buf)
				_, _ = c.Write([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot here\n"))
			}()
		}
	}()
	if code, out := run("attach", "--socket", other); code == 0 || !strings.Contains(out, "does not answer as a subdash host (GET /v1/info answered: ") {
		t.Errorf("not a subdash: exit %d, %q", code, out)
	}

	serve := startAttachServe(t, w)
	code, out := run("--dir", w.dir, "--socket", w.socket, "--max-agents", "2")
	want := fmt.Sprintf("subdash (pid %d) serves %s with --max-agents 3; this command line says --max-agents 2", serve.cmd.Process.Pid, w.dir)
	if code == 0 || !strings.Contains(out, want) {
		t.Errorf("differing --max-agents: exit %d, %q, want %q", code, out, want)
	}
	code, out = run("--dir", w.dir, "--socket", w.socket, "--command", "echo other")
	if code == 0 || !strings.Contains(out, "with --command "+attachCommand) {
		t.Errorf("differing --command: exit %d, %q", code, out)
	}
	code, out = run("--dir", w.dir, "--socket", w.socket, "--notify-command", "notify-send done")
	if code == 0 || !strings.Contains(out, "with --notify-command (none); this command line says --notify-command notify-send done") {
		t.Errorf("differing --notify-command: exit %d, %q", code, out)
	}
	code, out = run("attach", "--socket", w.socket, "--max-agents=3")
	if code != 2 || !strings.Contains(out, "--max-agents is a host setting, and subdash attach takes the host as it is: leave it out, or run `subdash --max-agents …` in the folder") {
		t.Errorf("attach with a host setting: exit %d, %q", code, out)
	}
	// A host running a preset has no --command: the message names the preset.
	wp := newWorkspace(t)
	serveWith(t, wp, nil, "--preset", "builtin", "--preset-args", "--pace 1ms")
	code, out = run(append([]string{"--command", "echo hi"}, wp.flags()...)...)
	if want := "serves " + wp.dir + ` with --preset builtin --preset-args "--pace 1ms"; this command line says --command echo hi`; code == 0 || !strings.Contains(out, want) {
		t.Errorf("--command against a preset host: exit %d, %q, want %q", code, out, want)
	}
	// Equal values attach.
	d := startViewer(t, w, "--dir", w.dir, "--socket", w.socket, "--max-agents", "3", "--command", attachCommand, "--runner", "local")
	d.waitText("attached to subdash serve")
}

// TestViewerOfAStoppedHost: the host stops answering (SIGSTOP). A viewer
// left alone says so (socket and pid) and exits with the terminal
// restored; q in another viewer still detaches at once; a new viewer is
// refused with the same error.
func TestViewerOfAStoppedHost(t *testing.T) {
	raceChecked(t)
	w := newWorkspace(t)
	serve := startAttachServe(t, w)
	pid := serve.cmd.Process.Pid
	ctlOK(t, w, nil, "spawn", "stream x")
	alone := startViewer(t, w, "attach", "--socket", w.socket)
	quits := startViewer(t, w, "attach", "--socket", w.socket)
	alone.waitText("tick ")
	quits.waitText("tick ")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	quits.keys("q")
	if code := quits.waitExit(); code != 0 {
		t.Errorf("q with a stopped host: exit %d", code)
	}
	quits.checkTerminalBack()

	cmd := exec.Command(subdashFor(t), "attach", "--socket", w.socket)
	cmd.Env = testEnv()
	out, _ := cmd.CombinedOutput()
	want := fmt.Sprintf("subdash (pid %d) serving %s accepted the connection but did not answer within 10s", pid, w.socket)
	if !strings.Contains(string(out), want) {
		t.Errorf("attach to a stopped host: %q, want %q", out, want)
	}

	if code := alone.waitExit(); code != 1 {
		t.Errorf("viewer of a stopped host: exit %d", code)
	}
	if s := strings.ReplaceAll(alone.screen(), "\n", ""); !strings.Contains(s, want) {
		t.Errorf("viewer of a stopped host says:\n%s\nwant %q", s, want)
	}
	alone.checkTerminalBack()
}

// TestViewerOfAStoppedHostQuitsWithAReadInFlight: the pager's read of a
// host that stopped answering (SIGSTOP) is in flight when the user leaves
// the pager (ctrl+c ends cat) and quits: the viewer is back at once and q
// ends it, exit 0 and the terminal restored, well before the host's
// deadline (10 s) would have ended the read.
func TestViewerOfAStoppedHostQuitsWithAReadInFlight(t *testing.T) {
	w := newWorkspace(t)
	serve := startAttachServe(t, w)
	pid := serve.cmd.Process.Pid
	ctlOK(t, w, nil, "spawn", "stream x")
	v := startViewerIn(t, w, "", 120, 40, []string{"PAGER=cat"}, "attach", "--socket", w.socket)
	v.waitText("tick ")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	v.keys("o")
	v.waitFor("the pager in front of the dashboard", func(s string) bool { return !strings.Contains(s, "╭─ agents") })
	start := time.Now()
	v.keys("C-c")
	v.waitText("╭─ agents 1")
	v.keys("q")
	if code := v.waitExit(); code != 0 {
		t.Errorf("q with a read in flight on a stopped host: exit %d, want 0:\n%s", code, v.screen())
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("leaving the pager and quitting took %s, want under 3 s (the host's deadline is 10 s)", took.Round(time.Millisecond))
	}
	v.checkTerminalBack()
}

// TestDashboardHostWithMCPAndViewer: a dashboard host, `subdash mcp` driven
// by the go-sdk client and a viewer. The agent spawned through MCP shows in
// the viewer; the host's quit question names it and the viewer; the viewer
// interrupts it and the MCP wait in flight returns the interrupted status.
func TestDashboardHostWithMCPAndViewer(t *testing.T) {
	raceChecked(t)
	host := startDash(t, 160, 45, nil, "--command", attachCommand, "--grace", "200ms")
	host.waitServing()
	w := workspace{dir: host.dir, state: host.state, socket: host.socket}
	cs, _, _ := startMCP(t, nil, "--dir", host.dir, "--socket", host.socket)
	var sp proto.SpawnResult
	toolOK(t, cs, "spawn_agent", map[string]any{"message": "stream via mcp"}, &sp)
	viewer := startViewer(t, w, "attach", "--socket", host.socket)
	viewer.waitRow(sp.AgentID, "running")
	viewer.waitText("tick ")

	host.waitRow(sp.AgentID, "running")
	host.keys("q")
	host.waitText("Quit? 1 agent is running and will be stopped (1 started by an MCP client); 1 viewer is attached and will be closed.")
	host.keys("n")

	waited := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "wait",
			Arguments: map[string]any{"ids": []string{sp.AgentID}, "timeout_ms": 60000}})
		if err != nil {
			waited <- err.Error()
			return
		}
		waited <- res.Content[0].(*mcpsdk.TextContent).Text
	}()
	viewer.keys("i")
	s := viewer.waitFor("interrupt to be asked or done", func(s string) bool {
		return strings.Contains(s, "Interrupt") || strings.Contains(s, "interrupted")
	})
	if !strings.Contains(s, "interrupted") {
		viewer.keys("y")
	}
	select {
	case text := <-waited:
		var wr proto.WaitResult
		if err := json.Unmarshal([]byte(text), &wr); err != nil {
			t.Fatalf("wait: %v in %q", err, text)
		}
		d := wr.Details[sp.AgentID]
		if wr.Status[sp.AgentID] != proto.StatusErrored || d.LastError == nil || *d.LastError != "interrupted" {
			t.Fatalf("wait after the viewer's interrupt = %s", text)
		}
	case <-time.After(dashWait):
		t.Fatal("the MCP wait did not return after the viewer interrupted the agent")
	}
	host.waitRow(sp.AgentID, "interrupted")
}
