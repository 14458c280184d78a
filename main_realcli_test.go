package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor"
)

// TestRealCLIsContinueAcrossARestart (SPEC §10) runs the real claude and
// codex CLIs against the local fake model servers of
// ../shared/tools/agent-clis: spawn under `subdash serve`, end the serve,
// start another, send again; the stub's answer shows it saw the first
// exchange and the session id is the same. It needs AGENTCLI_ROOT (the
// CLIs installed by install.sh) and is skipped without it; CI runs the same
// with the stand-in CLIs (supervisor.TestRestoredPresetContinuesTheConversation).
func TestRealCLIsContinueAcrossARestart(t *testing.T) {
	root := os.Getenv("AGENTCLI_ROOT")
	stubs, _ := filepath.Abs("../shared/tools/agent-clis")
	if root == "" {
		t.Skip("AGENTCLI_ROOT is not set: the real agent CLIs are not installed (../shared/tools/agent-clis/install.sh)")
	}
	if _, err := os.Stat(filepath.Join(stubs, "fake_anthropic.py")); err != nil {
		t.Skipf("the fake model servers are not at %s", stubs)
	}
	for _, c := range []struct {
		cli, stub string
		minSaw    int // codex adds its environment context as a user message
	}{{"claude", "fake_anthropic.py", 2}, {"codex", "fake_openai.py", 3}} {
		t.Run(c.cli, func(t *testing.T) {
			bin := filepath.Join(root, c.cli, "node_modules", ".bin")
			if _, err := os.Stat(filepath.Join(bin, c.cli)); err != nil {
				t.Skipf("%s is not installed under %s", c.cli, root)
			}
			port := startStub(t, stubs, c.stub)
			home := t.TempDir()
			env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home}
			switch c.cli {
			case "claude":
				env = append(env, "CLAUDE_CONFIG_DIR="+home+"/.claude", "ANTHROPIC_BASE_URL=http://127.0.0.1:"+port,
					"ANTHROPIC_API_KEY=dummy", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
					"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=1")
			case "codex":
				if err := os.MkdirAll(home+"/.codex", 0o700); err != nil {
					t.Fatal(err)
				}
				conf := `model = "gpt-5.5"
model_provider = "stub"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
[model_providers.stub]
name = "Local stub"
base_url = "http://127.0.0.1:` + port + `/v1"
wire_api = "responses"
env_key = "STUB_OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 30000
[analytics]
enabled = false
[features]
plugins = false
daemon_auto_start = false
`
				if err := os.WriteFile(home+"/.codex/config.toml", []byte(conf), 0o600); err != nil {
					t.Fatal(err)
				}
				env = append(env, "CODEX_HOME="+home+"/.codex", "STUB_OPENAI_API_KEY=dummy")
			}
			w := newWorkspace(t)
			serve := func() *process {
				p := start(t, env, append([]string{"serve", "--preset", c.cli, "--timeout", "2m"}, w.flags()...)...)
				waitListening(t, p, w.socket)
				return p
			}
			p1 := serve()
			var sp supervisor.SpawnResult
			ctlOK(t, w, &sp, "spawn", "say hi")
			wr := waitDone(t, w, sp.AgentID)
			first := wr.Details[sp.AgentID]
			if first.Status != supervisor.StatusCompleted || first.SessionID == "" {
				t.Fatalf("first run: %s, session %q, last_error %v", first.Status, first.SessionID, first.LastError)
			}
			_ = p1.cmd.Process.Signal(syscall.SIGTERM)
			p1.wait(t)

			serve()
			var sr supervisor.SendResult
			ctlOK(t, w, &sr, "send", sp.AgentID, "and again")
			wr = waitDone(t, w, sp.AgentID)
			again := wr.Details[sp.AgentID]
			if again.Status != supervisor.StatusCompleted || again.SessionID != first.SessionID {
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

// waitDone waits (up to 5 minutes, wait's own bound) until agent id is
// final.
func waitDone(t *testing.T, w workspace, id string) supervisor.WaitResult {
	t.Helper()
	var wr supervisor.WaitResult
	ctlOK(t, w, &wr, "wait", id, "--timeout-ms", "300000")
	if wr.TimedOut {
		t.Fatalf("agent %s not final within 5 minutes", id)
	}
	return wr
}

// startStub starts a fake model server of the agent-clis folder on a free
// port, stopped when the test ends, and returns its port.
func startStub(t *testing.T, dir, script string) string {
	t.Helper()
	portFile := filepath.Join(t.TempDir(), "port")
	cmd := exec.Command("python3", filepath.Join(dir, script), "--port", "0", "--port-file", portFile)
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start the fake model server: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(portFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s wrote no port", script)
	return ""
}
