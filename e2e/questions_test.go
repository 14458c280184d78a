package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// questionsViaCtl polls ctl list until agent id asks a question and
// returns its pending questions.
func questionsViaCtl(t *testing.T, w workspace, id string) []proto.PendingQuestion {
	t.Helper()
	return testkit.Poll(t, 90*time.Second, fmt.Sprintf("agent %s to ask a question", id), func() ([]proto.PendingQuestion, bool) {
		var l proto.ListResult
		ctlOK(t, w, &l, "list")
		for _, a := range l.Agents {
			if a.AgentID != id {
				continue
			}
			if a.Status != proto.StatusRunning {
				t.Fatalf("agent ended (%s) before it asked", a.Status)
			}
			return a.PendingQuestions, len(a.PendingQuestions) > 0
		}
		return nil, false
	})
}

// TestQuestionsRealClaude runs the real claude CLI (AGENTCLI_ROOT) with
// the claude preset and no --approvals against the local fake Anthropic
// server, whose "CALL_TOOL: AskUserQuestion" prompt makes it ask: the
// question is pending in ctl list, ctl answer answers it, and the model's
// next request carries the answer. A Bash request of the same host is
// still denied, as claude denies it without a prompt tool: no file.
// Skipped where the CLI is not installed.
func TestQuestionsRealClaude(t *testing.T) {
	bin, stubs := realCLI(t, "claude", "fake_anthropic.py")
	stubLog := filepath.Join(t.TempDir(), "stub.jsonl")
	port := startStub(t, stubs, "fake_anthropic.py", "--log", stubLog)
	env := realCLIEnv(t, "claude", bin, port)
	w := newWorkspace(t)
	serveWith(t, w, env, "--preset", "claude", "--timeout", "2m")

	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", `CALL_TOOL: AskUserQuestion {"questions":[{"question":"Which DB?","header":"DB","multiSelect":false,"options":[{"label":"Postgres","description":"pg"},{"label":"SQLite","description":"lite"}]}]}`)
	qs := questionsViaCtl(t, w, sp.AgentID)
	if q := qs[0].Questions; len(q) != 1 || q[0].Question != "Which DB?" || len(q[0].Options) != 2 {
		t.Fatalf("pending questions = %+v", qs)
	}
	ctlOK(t, w, nil, "answer", sp.AgentID, "--option", "SQLite")
	d := waitDone(t, w, sp.AgentID).Details[sp.AgentID]
	if d.Status != proto.StatusCompleted || !strings.Contains(*d.LastOutput, `"Which DB?"="SQLite"`) {
		t.Fatalf("after the answer: %s %v %q", d.Status, d.LastError, *d.LastOutput)
	}
	if b, _ := os.ReadFile(stubLog); !strings.Contains(string(b), `Which DB?\"=\"SQLite\"`) {
		t.Fatalf("the model's next request does not carry the answer:\n%s", b)
	}

	file := filepath.Join(t.TempDir(), "NOT-ALLOWED")
	ctlOK(t, w, &sp, "spawn", "RUN_BASH: touch "+file)
	d = waitDone(t, w, sp.AgentID).Details[sp.AgentID]
	if d.Status != proto.StatusCompleted || fileExists(file) {
		t.Fatalf("a Bash request without --approvals: %s, file %v", d.Status, fileExists(file))
	}
}

// TestDashboardQuestionPanel answers a question with the dashboard's keys
// in tmux, with the stand-in claude of testdata/fakecli replaying the
// recorded AskUserQuestion: the row says what the agent asks, A opens the
// panel, 2 chooses SQLite, enter sends, and the agent completes with the
// answer.
func TestDashboardQuestionPanel(t *testing.T) {
	d := startDash(t, 200, 40, []string{"PATH=" + fakeCLIPath() + ":" + os.Getenv("PATH")}, "--preset", "claude")
	d.waitText("no agents yet")
	msg := "askq which database"
	d.keys("n")
	d.typeText(msg)
	d.keys("Enter")
	id := d.agentID(msg)
	d.waitText("asks: DB: Which DB? [Postgres / SQLite]")
	d.keys("A")
	d.waitText("? agent "+id[:8]+" asks", "1. ( ) Postgres — pg", "2. ( ) SQLite — lite")
	d.keys("2")
	d.waitText("2. (•) SQLite — lite")
	d.keys("Enter")
	d.waitRow(id, "✓ completed")
	d.waitText(`answered: "Which DB?"="SQLite"`)
}
