package ctl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

func TestCtlAnswerUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"answer", "x"}, "give the answer once"},
		{[]string{"answer", "x", "--option", "A", "--answers", `{"Q":"A"}`}, "give the answer once"},
		{[]string{"answer", "x", "--answer", "no equals sign"}, "write QUESTION=LABEL"},
		{[]string{"answer", "x", "--answers", "[1]"}, "--answers takes a JSON object"},
		{[]string{"answer", "x", "--answers", `{"Q":1}`}, `the answer to "Q" must be a label or a list of labels`},
	} {
		code, out, errOut := runCtl(t, nil, "", tc.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("ctl %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// ctl answer against a host whose fake claude asks the recorded
// AskUserQuestion: each form of the answer reaches the agent, which
// completes with it; list showed the question first.
func TestCtlAnswerAgainstAServer(t *testing.T) {
	fake, err := filepath.Abs("../../../testdata/fakecli")
	if err != nil {
		t.Fatal(err)
	}
	p, err := supervisor.LookupPreset("claude", "", "")
	if err != nil {
		t.Fatal(err)
	}
	s := controlkit.Supervisor(t, func(c *supervisor.Config) {
		c.Preset, c.Command = p, p.Describe()
		c.Environ = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"))
	})
	srv, _ := controlkit.Serve(t, s)
	env := map[string]string{"SUBDASH_SOCKET": srv.Path()}
	for _, form := range [][]string{
		{"--option", "SQLite"},
		{"--answer", "Which DB?=SQLite"},
		{"--answers", `{"DB":["SQLite"]}`},
	} {
		_, out, _ := runCtl(t, env, "", "spawn", "askq which database")
		var sp proto.SpawnResult
		if json.Unmarshal([]byte(out), &sp) != nil {
			t.Fatalf("spawn: %q", out)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, out, _ = runCtl(t, env, "", "list")
			if strings.Contains(out, `"pending_questions"`) || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(out, `"question": "Which DB?"`) {
			t.Fatalf("list shows no question: %s", out)
		}
		code, out, errOut := runCtl(t, env, "", append([]string{"answer", sp.AgentID}, form...)...)
		if code != ExitOK || !strings.Contains(out, `"Which DB?": "SQLite"`) {
			t.Fatalf("answer %v: exit %d, stdout %q, stderr %q", form, code, out, errOut)
		}
		code, out, _ = runCtl(t, env, "", "wait", sp.AgentID, "--timeout-ms", "300000")
		if code != ExitOK || !strings.Contains(out, `\"Which DB?\"=\"SQLite\"`) {
			t.Fatalf("wait after answer %v: exit %d, stdout %q", form, code, out)
		}
		code, _, errOut = runCtl(t, env, "", "answer", sp.AgentID, "--option", "Postgres")
		if code != ExitError || !strings.Contains(errOut, "has no pending question") {
			t.Fatalf("a second answer: exit %d, stderr %q", code, errOut)
		}
	}
}
