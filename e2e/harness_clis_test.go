package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
)

// The agent CLIs of the preset tests: the stand-ins of testdata/fakecli
// (always there; they check their arguments and replay recordings), and the
// real claude and codex installed under AGENTCLI_ROOT by
// ../shared/tools/agent-clis/install.sh, talking to that folder's local fake
// model servers (tests with them skip where they are not installed).

// fakeCLIs returns the environment that puts the stand-in claude, codex
// and gemini of testdata/fakecli first on PATH, and the file under base
// where they log each run (its arguments and message).
func fakeCLIs(t *testing.T, base string) (env []string, calls string) {
	t.Helper()
	calls = filepath.Join(base, "calls.log")
	return []string{"PATH=" + fakeCLIPath() + ":" + os.Getenv("PATH"), "FAKECLI_LOG=" + calls}, calls
}

// fakeCLIPath is the folder of the stand-in CLIs.
func fakeCLIPath() string { return filepath.Join(repoRoot, "testdata", "fakecli") }

// realCLI returns the folder of the real cli's executable under
// AGENTCLI_ROOT and the folder of the fake model servers, which must hold
// server; it skips the test when any of them is missing.
func realCLI(t *testing.T, cli, server string) (bin, stubs string) {
	t.Helper()
	stubs = stubsDir()
	root := os.Getenv("AGENTCLI_ROOT")
	if root == "" {
		t.Skipf("AGENTCLI_ROOT is not set: the real %s CLI is not installed (%s/install.sh)", cli, stubs)
	}
	bin = filepath.Join(root, cli, "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, cli)); err != nil {
		t.Skipf("%s is not installed under %s", cli, root)
	}
	if _, err := os.Stat(filepath.Join(stubs, server)); err != nil {
		t.Skipf("the fake model server %s is not at %s", server, stubs)
	}
	return bin, stubs
}

// stubsDir is the folder of the fake model servers: $AGENTCLI_STUBS, else
// shared/tools/agent-clis beside the repository (a checkout), or beside
// the folder of its worktrees (a worktree under <root>/wt/<name>).
func stubsDir() string {
	if d := os.Getenv("AGENTCLI_STUBS"); d != "" {
		return d
	}
	near := filepath.Join(repoRoot, "..", "shared", "tools", "agent-clis")
	if _, err := os.Stat(near); err != nil {
		if far := filepath.Join(repoRoot, "..", "..", "shared", "tools", "agent-clis"); dirExists(far) {
			return far
		}
	}
	return near
}

func dirExists(d string) bool {
	fi, err := os.Stat(d)
	return err == nil && fi.IsDir()
}

// startStub starts the fake model server script of the folder dir on a
// free port with the extra args, stopped when the test ends, and returns
// its port.
func startStub(t *testing.T, dir, script string, args ...string) string {
	t.Helper()
	portFile := filepath.Join(t.TempDir(), "port")
	cmd := exec.Command("python3", append([]string{filepath.Join(dir, script), "--port", "0", "--port-file", portFile}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start the fake model server: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return testkit.Poll(t, 10*time.Second, script+" to write its port", func() (string, bool) {
		b, _ := os.ReadFile(portFile)
		port := strings.TrimSpace(string(b))
		return port, port != ""
	})
}

// realCLIEnv returns the environment in which the real cli (claude or
// codex) of folder bin talks to the fake model server on port, with a
// fresh home folder of its own (and, for codex, a config.toml naming the
// server).
func realCLIEnv(t *testing.T, cli, bin, port string) []string {
	t.Helper()
	home := t.TempDir()
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home}
	switch cli {
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
	default:
		t.Fatalf("no environment for the real CLI %q", cli)
	}
	return env
}
