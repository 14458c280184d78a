package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// toolResults returns the content of every tool_result in claude's
// stream-json output out, in order.
func toolResults(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "user" {
			continue
		}
		var blocks []struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		}
		if json.Unmarshal(ev.Message.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				got = append(got, b.Content)
			}
		}
	}
	return got
}

// TestDenialWithoutApprovalsIsClaudesOwn (SPEC §12 "Questions"): with the
// claude preset and no --approvals, a tool permission request is denied
// with the words claude itself gives its model when it runs without a
// prompt tool: the same call, in the same working directory, read by the
// model of the real claude (AGENTCLI_ROOT) run by subdash and of `claude
// -p` run alone. Skipped where the CLI is not installed.
func TestDenialWithoutApprovalsIsClaudesOwn(t *testing.T) {
	bin, stubs := realCLI(t, "claude", "fake_anthropic.py")
	port := startStub(t, stubs, "fake_anthropic.py")
	env := realCLIEnv(t, "claude", bin, port)
	w := newWorkspace(t)
	serveWith(t, w, env, "--preset", "claude", "--timeout", "2m")
	for _, prompt := range []string{
		"RUN_BASH: touch not-allowed.txt",
		"RUN_BASH: echo hi > redirected.txt",
		"RUN_BASH: curl http://example.com",
		`CALL_TOOL: Write {"file_path":"` + filepath.Join(w.dir, "written.txt") + `","content":"x"}`,
	} {
		var sp proto.SpawnResult
		ctlOK(t, w, &sp, "spawn", prompt)
		if d := waitDone(t, w, sp.AgentID).Details[sp.AgentID]; d.Status != proto.StatusCompleted {
			t.Fatalf("%s: %s %v", prompt, d.Status, d.LastError)
		}
		viaSubdash := toolResults(t, ctlOK(t, w, nil, "logs", sp.AgentID, "--raw"))

		alone := exec.Command(filepath.Join(bin, "claude"), "-p", "--output-format", "stream-json", "--verbose")
		alone.Dir, alone.Env, alone.Stdin = w.dir, append(testEnv(), env...), strings.NewReader(prompt+"\n")
		out, err := alone.Output()
		if err != nil {
			t.Fatalf("claude -p alone: %v", err)
		}
		want := toolResults(t, string(out))
		if len(want) != 1 || len(viaSubdash) != 1 || viaSubdash[0] != want[0] {
			t.Errorf("%s: the model read %q through subdash; claude alone gives %q", prompt, viaSubdash, want)
		}
	}
	for _, f := range []string{"not-allowed.txt", "redirected.txt", "written.txt"} {
		if _, err := os.Stat(filepath.Join(w.dir, f)); err == nil {
			t.Errorf("%s was written without an answer", f)
		}
	}
}
