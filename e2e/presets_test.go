package e2e

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// TestPresetThroughTheBinary runs `subdash serve --preset codex` (and
// codex-exec) with the fake CLIs of testdata/fakecli first on PATH (they
// check their arguments and replay the real CLIs' recordings) and drives
// it with ctl: the follow-up resumes the thread the first run reported,
// list and wait show that thread id, and last_output is the final answer,
// not JSON.
func TestPresetThroughTheBinary(t *testing.T) {
	for _, c := range []struct {
		preset, thread, answer1, answer2, raw string
		runs                                  []string
	}{
		{"codex", "01a2514c-ccac-7f82-a68c-73e61de53adc", "FAKE: say hi", "FAKE: and again", `{"method":"turn/started"`,
			[]string{"codex\tapp-server\tsay hi", "codex\tapp-server\tand again"}},
		{"codex-exec", "01a22c75-d518-7a43-8ad2-67959028ffd4", "STUB-REPLY #3", "STUB-REPLY #4: saw 3 user message(s)", `{"type":"thread.started"`,
			[]string{"codex\texec --json --skip-git-repo-check -\tsay hi",
				"codex\texec --json --skip-git-repo-check resume 01a22c75-d518-7a43-8ad2-67959028ffd4 -\tand again"}},
	} {
		t.Run(c.preset, func(t *testing.T) {
			w := newWorkspace(t)
			env, calls := fakeCLIs(t, w.base)
			serveWith(t, w, env, "--preset", c.preset)

			var sp proto.SpawnResult
			ctlOK(t, w, &sp, "spawn", "say hi")
			var wr proto.WaitResult
			ctlOK(t, w, &wr, "wait", sp.AgentID, "--timeout-ms", "60000")
			d := wr.Details[sp.AgentID]
			if d.Status != proto.StatusCompleted || !strings.HasPrefix(*d.LastOutput, c.answer1) || d.SessionID != c.thread {
				t.Fatalf("first run: %s %q session %q", d.Status, *d.LastOutput, d.SessionID)
			}
			ctlOK(t, w, nil, "send", sp.AgentID, "and again")
			ctlOK(t, w, &wr, "wait", sp.AgentID, "--timeout-ms", "60000")
			if d := wr.Details[sp.AgentID]; d.Status != proto.StatusCompleted || !strings.HasPrefix(*d.LastOutput, c.answer2) {
				t.Fatalf("follow-up: %s %q", d.Status, *d.LastOutput)
			}
			if out := ctlOK(t, w, nil, "list"); !strings.Contains(out, `"session_id": "`+c.thread+`"`) {
				t.Fatalf("list lacks the thread id: %s", out)
			}
			// ctl logs prints what the agent said, as the transcript view draws
			// it (SPEC §3 logs); --raw the CLI's JSON lines.
			if out := ctlOK(t, w, nil, "logs", sp.AgentID, "--submission", "1"); strings.Contains(out, `{"`) ||
				!strings.Contains(out, "● thread "+c.thread) || !strings.Contains(out, "\n"+c.answer1) || !strings.Contains(out, "✓ result") {
				t.Fatalf("logs is not the transcript as text:\n%s", out)
			}
			if out := ctlOK(t, w, nil, "logs", sp.AgentID, "--submission", "1", "--raw"); !strings.Contains(out, c.raw) {
				t.Fatalf("logs --raw is not the CLI's JSON lines:\n%s", out)
			}
			b, err := os.ReadFile(calls)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if !strings.HasPrefix(l, "stdin\t") {
					got = append(got, l)
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.runs, "\n") {
				t.Fatalf("the fake codex was run as\n%q\nwant\n%q", got, c.runs)
			}
		})
	}
}

// TestRealCLIsContinueAcrossARestart (SPEC §10) runs the real claude and
// codex CLIs against the local fake model servers of
// ../shared/tools/agent-clis: spawn under `subdash serve`, end the serve,
// start another, send again; the stub's answer shows it saw the first
// exchange and the session id is the same. It needs AGENTCLI_ROOT (the
// CLIs installed by install.sh) and is skipped without it; CI runs the same
// with the stand-in CLIs (supervisor.TestRestoredPresetContinuesTheConversation).
func TestRealCLIsContinueAcrossARestart(t *testing.T) {
	for _, c := range []struct {
		cli, stub string
		minSaw    int // codex adds its environment context as a user message
	}{{"claude", "fake_anthropic.py", 2}, {"codex", "fake_openai.py", 3}} {
		t.Run(c.cli, func(t *testing.T) {
			bin, stubs := realCLI(t, c.cli, c.stub)
			env := realCLIEnv(t, c.cli, bin, startStub(t, stubs, c.stub))
			w := newWorkspace(t)
			serve := func() *process { return serveWith(t, w, env, "--preset", c.cli, "--timeout", "2m") }
			p1 := serve()
			var sp proto.SpawnResult
			ctlOK(t, w, &sp, "spawn", "say hi")
			wr := waitDone(t, w, sp.AgentID)
			first := wr.Details[sp.AgentID]
			if first.Status != proto.StatusCompleted || first.SessionID == "" {
				t.Fatalf("first run: %s, session %q, last_error %v", first.Status, first.SessionID, first.LastError)
			}
			_ = p1.cmd.Process.Signal(syscall.SIGTERM)
			p1.wait(t)

			serve()
			var sr proto.SendResult
			ctlOK(t, w, &sr, "send", sp.AgentID, "and again")
			wr = waitDone(t, w, sp.AgentID)
			again := wr.Details[sp.AgentID]
			if again.Status != proto.StatusCompleted || again.SessionID != first.SessionID {
				t.Fatalf("after restart: %s, session %q (was %q), last_error %v", again.Status, again.SessionID, first.SessionID, again.LastError)
			}
			saw := 0
			if m := regexp.MustCompile(`saw (\d+) user`).FindStringSubmatch(*again.LastOutput); m != nil {
				saw, _ = strconv.Atoi(m[1])
			}
			if saw < c.minSaw {
				t.Fatalf("the CLI did not continue the conversation: %q", *again.LastOutput)
			}
			t.Logf("%s: session %s; reply after restart: %s", c.cli, again.SessionID, *again.LastOutput)
		})
	}
}
