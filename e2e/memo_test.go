package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// realMemo returns the environment in which the real Memo built by
// ../shared/tools/memo/install.sh under MEMO_ROOT talks to that folder's
// fake Chat Completions server (fake_chat.py, or $MEMO_STUBS/fake_chat.py),
// with a fresh home and a user Memo home holding a config for the server;
// it skips the test where Memo is not installed.
func realMemo(t *testing.T) (env []string, userHome string) {
	t.Helper()
	root := os.Getenv("MEMO_ROOT")
	if root == "" {
		t.Skip("MEMO_ROOT is not set: the real Memo is not installed (../shared/tools/memo/install.sh)")
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "memo")); err != nil {
		t.Skipf("memo is not installed under %s", root)
	}
	stubs := os.Getenv("MEMO_STUBS")
	if stubs == "" {
		stubs = filepath.Join(repoRoot, "..", "shared", "tools", "memo")
	}
	if _, err := os.Stat(filepath.Join(stubs, "fake_chat.py")); err != nil {
		t.Skipf("the fake model server fake_chat.py is not in %s (set MEMO_STUBS)", stubs)
	}
	port := startStub(t, stubs, "fake_chat.py")
	home := t.TempDir()
	userHome = filepath.Join(home, ".memo")
	writeMemoConfig(t, userHome, port)
	path := filepath.Join(root, "bin") + ":" + filepath.Join(root, "node22", "node_modules", ".bin") + ":" + os.Getenv("PATH")
	return []string{"PATH=" + path, "HOME=" + home, "TMPDIR=" + home, "STUB_API_KEY=dummy", "MEMO_HOME=" + userHome}, userHome
}

func writeMemoConfig(t *testing.T, userHome, port string) {
	t.Helper()
	conf := "current_provider = \"stub\"\n[[providers.stub]]\nname = \"stub\"\nenv_api_key = \"STUB_API_KEY\"\nmodel = \"memo-stub\"\nbase_url = \"http://127.0.0.1:" + port + "/v1\"\n"
	if err := os.MkdirAll(userHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userHome, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRealMemo runs the real Memo 0.9.1 under `subdash serve --preset
// memo` (SPEC §8): a good run completes with the reply as last_output
// (none of Memo's chrome); an HTTP 500, after which Memo exits 0, is
// errored with Memo's message; a send continues the agent's own
// conversation (the stub saw two user messages), and another agent in the
// same folder does not see it; without a config nothing starts and the
// agent says what to do. It needs MEMO_ROOT and is skipped without it; CI
// runs the same with the stand-in of testdata/fakememo
// (supervisor.TestMemoPreset*).
func TestRealMemo(t *testing.T) {
	env, userHome := realMemo(t)
	w := newWorkspace(t)
	serveWith(t, w, env, "--preset", "memo", "--timeout", "2m")
	var a, fail, b proto.SpawnResult
	ctlOK(t, w, &a, "spawn", "say hi")
	ctlOK(t, w, &fail, "spawn", "please FAIL_STATUS: 500")
	d := waitDone(t, w, a.AgentID).Details[a.AgentID]
	if d.Status != proto.StatusCompleted || d.LastOutput == nil || !strings.HasPrefix(*d.LastOutput, "MEMO-STUB-REPLY #") ||
		!strings.HasSuffix(*d.LastOutput, ": saw 1 user message(s); last user text: 'say hi'") || len(d.SessionID) != 36 {
		t.Fatalf("good run: %s %v session %q", d.Status, d.LastOutput, d.SessionID)
	}
	d = waitDone(t, w, fail.AgentID).Details[fail.AgentID]
	if want := "LLM call failed: Failed after 3 attempts. Last error: stub: scripted failure"; d.Status != proto.StatusErrored || d.LastError == nil || *d.LastError != want {
		t.Errorf("HTTP 500: %s %v, want errored %q", d.Status, d.LastError, want)
	}
	ctlOK(t, w, &b, "spawn", "beta one")
	waitDone(t, w, b.AgentID)
	ctlOK(t, w, nil, "send", a.AgentID, "and again")
	d = waitDone(t, w, a.AgentID).Details[a.AgentID]
	if d.Status != proto.StatusCompleted || d.LastOutput == nil || !strings.Contains(*d.LastOutput, "saw 2 user message(s); last user text: 'and again'") {
		t.Errorf("second send: %s %v, want the stub to have seen the first exchange", d.Status, d.LastOutput)
	}
	if out := ctlOK(t, w, nil, "logs", a.AgentID); !strings.Contains(out, "[session] Continued from previous session context.") {
		t.Errorf("the second run did not continue a session:\n%s", out)
	}
	ctlOK(t, w, nil, "send", b.AgentID, "beta two")
	d = waitDone(t, w, b.AgentID).Details[b.AgentID]
	if d.Status != proto.StatusCompleted || d.LastOutput == nil || !strings.Contains(*d.LastOutput, "saw 2 user message(s); last user text: 'beta two'") {
		t.Errorf("other agent's send: %s %v", d.Status, d.LastOutput)
	}

	if err := os.Remove(filepath.Join(userHome, "config.toml")); err != nil {
		t.Fatal(err)
	}
	var c proto.SpawnResult
	ctlOK(t, w, &c, "spawn", "say hi")
	d = waitDone(t, w, c.AgentID).Details[c.AgentID]
	if d.Status != proto.StatusErrored || d.LastError == nil || !strings.Contains(*d.LastError, "memo has no provider config") || !strings.Contains(*d.LastError, "run memo once in a terminal") {
		t.Errorf("no config: %s %v", d.Status, d.LastError)
	}
	if _, err := os.Stat(filepath.Join(userHome, "config.toml")); !os.IsNotExist(err) {
		t.Errorf("a config.toml appeared in the user's Memo home: %v", err)
	}
}
