package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor"
)

// questionHost is a host of the claude preset run by the fake claude of
// testdata/fakecli, whose "askq" message asks the recorded
// AskUserQuestion; mcpAnswers is --mcp-answers.
func questionHost(t *testing.T, mcpAnswers bool) *supervisor.Supervisor {
	t.Helper()
	fake, err := filepath.Abs("../../testdata/fakecli")
	if err != nil {
		t.Fatal(err)
	}
	p, err := supervisor.LookupPreset("claude", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return hostkit.Supervisor(t, p.Describe(), func(c *supervisor.Config) {
		c.Preset, c.Command, c.MCPAnswers = p, p.Describe(), mcpAnswers
		c.Environ = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"))
	})
}

// pollText calls tool until its text holds want, for 10 s.
func pollText(t *testing.T, get func() string, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := get()
		if strings.Contains(got, want) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The seed family: list and wait show what an agent asks; answer_question
// is refused without --mcp-answers (a person must answer) and answers with
// it, after which the agent completes with the answer.
func TestSeedToolsShowAndAnswerQuestions(t *testing.T) {
	for _, allowed := range []bool{false, true} {
		s := questionHost(t, allowed)
		cs := connect(t, One(s))
		out, _ := call(t, cs, ToolSpawn, map[string]any{"message": "askq which database"})
		id := between(out, `"agent_id":"`, `"`)
		list := pollText(t, func() string { text, _ := call(t, cs, ToolList, map[string]any{}); return text }, `"pending_questions"`)
		if !strings.Contains(list, `"question":"Which DB?"`) || !strings.Contains(list, `"label":"SQLite"`) {
			t.Fatalf("list_agents does not show the question: %s", list)
		}
		waited, _ := call(t, cs, ToolWait, map[string]any{"ids": []string{id}, "timeout_ms": 10000})
		if !strings.Contains(waited, `"pending_questions"`) {
			t.Fatalf("wait does not show the question: %s", waited)
		}
		text, isErr := call(t, cs, ToolAnswer, map[string]any{"id": id, "answers": map[string][]string{"Which DB?": {"SQLite"}}})
		if !allowed {
			if !isErr || !strings.Contains(text, "a person must answer") || !strings.Contains(text, "--mcp-answers") {
				t.Fatalf("answer_question without --mcp-answers: %v %s", isErr, text)
			}
			continue
		}
		if isErr || !strings.Contains(text, `"Which DB?":"SQLite"`) {
			t.Fatalf("answer_question: %v %s", isErr, text)
		}
		done := pollText(t, func() string {
			text, _ := call(t, cs, ToolWait, map[string]any{"ids": []string{id}, "timeout_ms": 10000})
			return text
		}, `"status":"completed"`)
		if !strings.Contains(done, `\"Which DB?\"=\"SQLite\"`) {
			t.Fatalf("the agent did not read the answer: %s", done)
		}
	}
}

// The multi-agent family: list_agents and wait_agent show what an agent
// of the session asks.
func TestMultiAgentToolsShowQuestions(t *testing.T) {
	s := questionHost(t, false)
	cs := connectFamily(t, One(s), "s1")
	if texts, isErr := callText(t, cs, ToolSpawn, map[string]any{"message": "askq which database", "task_name": "db"}); isErr {
		t.Fatalf("spawn: %v", texts)
	}
	list := pollText(t, func() string {
		texts, _ := callText(t, cs, ToolList, map[string]any{})
		return strings.Join(texts, "\n")
	}, `"pending_questions"`)
	if !strings.Contains(list, `"Which DB?"`) {
		t.Fatalf("list_agents does not show the question: %s", list)
	}
	texts, _ := callText(t, cs, ToolWaitAgent, map[string]any{"timeout_ms": 10000})
	if all := strings.Join(texts, "\n"); !strings.Contains(all, `"pending_questions"`) || !strings.Contains(all, "/root/db") || !strings.Contains(all, "Which DB?") {
		t.Fatalf("wait_agent does not show the question: %s", all)
	}
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}
