package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

func TestCtlDrivesServeThroughEveryOperation(t *testing.T) {
	w := newWorkspace(t)
	serve := startServe(t, w)

	if out := ctlOK(t, w, nil, "list"); out != "{\n  \"agents\": []\n}\n" {
		t.Fatalf("list of none = %q", out)
	}
	var hello proto.SpawnResult
	ctlOK(t, w, &hello, "spawn", "hello")
	if hello.Status != "running" || hello.LastMessage != "hello" || hello.SubmissionID == "" || hello.CreatedAt.IsZero() {
		t.Fatalf("spawn = %+v", hello)
	}
	var wr proto.WaitResult
	ctlOK(t, w, &wr, "wait", hello.AgentID, "--timeout-ms", "300000")
	if d := wr.Details[hello.AgentID]; wr.TimedOut || wr.Status[hello.AgentID] != "completed" || *d.LastOutput != "got: hello" || d.LastError != nil {
		t.Fatalf("wait = %+v", wr)
	}
	if out := ctlOK(t, w, nil, "logs", hello.AgentID); out != "got: hello\n" {
		t.Fatalf("logs = %q", out)
	}

	// A message of "-" is read from stdin.
	r := runCtl(t, nil, "from stdin\n", "spawn", "-", "--socket", w.socket)
	var fromStdin proto.SpawnResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &fromStdin) != nil || fromStdin.LastMessage != "from stdin" {
		t.Fatalf("spawn -: %+v", r)
	}

	// send to a final agent; the logs of each submission.
	var sent proto.SendResult
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
	var a proto.SpawnResult
	ctlOK(t, w, &a, "spawn", "sleep a")
	firstGroup := readPID(t, w, a.AgentID)
	ctlFails(t, w, "send_input failed: agent "+a.AgentID+" is busy; set interrupt=true to cancel current submission", "send", a.AgentID, "x")
	ctlOK(t, w, &sent, "send", "--interrupt", a.AgentID, "sleep again")
	if sent.Status != "running" || sent.SubmissionID == a.SubmissionID || !groupGone(firstGroup) {
		t.Fatalf("send --interrupt = %+v; first group gone: %v", sent, groupGone(firstGroup))
	}
	var st proto.StatusResult
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
	var b, c proto.SpawnResult
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

	var list struct{ Agents []proto.Summary }
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

// TestLongMessageFromStdin: `ctl spawn -` and `ctl send ID -` stream a
// message of several MiB from stdin to the host (FeatureTextMessage),
// which feeds it to the child trimmed and whole; `ctl logs` shows what the
// child counted.
func TestLongMessageFromStdin(t *testing.T) {
	w := newWorkspace(t)
	serveWith(t, w, nil, "--command", "wc -c")
	body := strings.Repeat("0123456789abcdef", 5<<16) // 5 MiB
	want := strconv.Itoa(len(body) + 1)               // and the newline after it
	r := runCtl(t, nil, "\n\t "+body+" \n\n", "spawn", "-", "--socket", w.socket)
	var sp proto.SpawnResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &sp) != nil {
		t.Fatalf("spawn -: %+v", r)
	}
	var wr proto.WaitResult
	ctlOK(t, w, &wr, "wait", sp.AgentID)
	if d := wr.Details[sp.AgentID]; d.Status != "completed" || d.LastOutput == nil || *d.LastOutput != want {
		t.Fatalf("the child counted %+v, want %s bytes", d, want)
	}
	r = runCtl(t, nil, body+body, "send", sp.AgentID, "-", "--socket", w.socket)
	if r.code != 0 {
		t.Fatalf("send -: %+v", r)
	}
	ctlOK(t, w, &wr, "wait", sp.AgentID)
	if out := ctlOK(t, w, nil, "logs", sp.AgentID); strings.TrimSpace(out) != strconv.Itoa(2*len(body)+1) {
		t.Fatalf("logs of the second submission: %q, want %d", out, 2*len(body)+1)
	}
}

func TestShellSyntaxInAMessageReachesStdinLiterally(t *testing.T) {
	w := newWorkspace(t)
	marker := filepath.Join(w.base, "pwned")
	serveWith(t, w, nil, "--command", "cat")
	message := fmt.Sprintf("$(touch %s); ; | && `touch %s` > %s", marker, marker, marker)

	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", message)
	var wr proto.WaitResult
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

// TestSubagentCannotSpawnWithoutAllowNested runs an agent that calls
// `subdash ctl spawn` on its own dashboard, as a subagent might: without
// --allow-nested the control socket refuses it (SPEC §2: subagents do not
// spawn subagents of their own), with it the nested agent appears.
func TestSubagentCannotSpawnWithoutAllowNested(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow-nested=%v", allow), func(t *testing.T) {
			w := newWorkspace(t)
			// the agent runs ctl with its message as the nested message,
			// unless the message says it is the nested one
			command := fmt.Sprintf(`read m; case "$m" in nested*) echo nested-ran;; *) %q ctl --socket %q spawn "nested $m" 2>&1;; esac`,
				binPath, w.socket)
			args := []string{"--command", command}
			if allow {
				args = append(args, "--allow-nested")
			}
			serveWith(t, w, nil, args...)
			var res proto.SpawnResult
			ctlOK(t, w, &res, "spawn", "outer")
			var wr proto.WaitResult
			ctlOK(t, w, &wr, "wait", res.AgentID, "--timeout-ms", "60000")
			out := *wr.Details[res.AgentID].LastOutput
			var list struct{ Agents []proto.Summary }
			ctlOK(t, w, &list, "list")
			if allow {
				if len(list.Agents) != 2 || !strings.Contains(out, `"agent_id"`) {
					t.Fatalf("with --allow-nested: %d agents; the outer agent printed %q", len(list.Agents), out)
				}
				return
			}
			want := "spawn_agent failed: agent " + res.AgentID + " may not start or instruct agents"
			if len(list.Agents) != 1 || !strings.Contains(out, want) || !strings.Contains(out, "--allow-nested") {
				t.Fatalf("without --allow-nested: %d agents; the outer agent printed %q, want %q", len(list.Agents), out, want)
			}
		})
	}
}
