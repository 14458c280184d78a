package supervisor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// innerRows is what list says of an agent's inner agents, one line each.
func innerRows(in []proto.InnerAgent) string {
	var rows []string
	for _, a := range in {
		rows = append(rows, fmt.Sprintf("%s parent=%s seq=%d %q %s/%s tools=%d tokens=%d ended=%v",
			a.TaskID, a.ParentTaskID, a.SubmissionSeq, a.Description, a.Status, a.CLIStatus, a.ToolCount, a.Tokens, !a.EndedAt.IsZero()))
	}
	return strings.Join(rows, "\n")
}

// TestInnerAgentsInListAndRecords: claude's recorded run with an inner
// agent that starts one of its own (testdata/inner-agents) gives the
// agent two inner agents in list, the deep one under the outer one, in
// JSON as inner_agents; two restarts (the journal replayed, then the
// checkpoint's records) keep them, and a second submission adds its own.
func TestInnerAgentsInListAndRecords(t *testing.T) {
	fake, err := filepath.Abs("../testdata/fakecli")
	if err != nil {
		t.Fatal(err)
	}
	p, err := LookupPreset("claude", "", "")
	if err != nil {
		t.Fatal(err)
	}
	start, _ := hostOf(t, "")
	env := append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "FAKECLI_LOG="+filepath.Join(t.TempDir(), "calls.log"))
	withFake := func(cf *Config) { cf.Preset, cf.Command, cf.Environ = p, p.Describe(), env }
	s1 := start(withFake)
	id := spawn(t, s1, "inner please")
	if d := waitFinal(t, s1, id); d.Status != proto.StatusCompleted {
		t.Fatalf("run: %s %v", d.Status, d.LastError)
	}
	want := `a945569b970c4a67a parent= seq=1 "outer inner" completed/completed tools=1 tokens=11909 ended=true` + "\n" +
		`ab8d46329b556c5f6 parent=a945569b970c4a67a seq=1 "deep inner" completed/completed tools=0 tokens=11307 ended=true`
	if got := innerRows(summaryOf(t, s1, id).InnerAgents); got != want {
		t.Fatalf("list's inner agents:\n%s\nwant:\n%s", got, want)
	}
	b, err := json.Marshal(summaryOf(t, s1, id))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"inner_agents":[{"task_id":"a945569b970c4a67a","submission_seq":1,"description":"outer inner","task_type":"local_agent","status":"completed","cli_status":"completed","last_tool":"Agent","tool_count":1,"tokens":11909,"elapsed_ms":203,`) {
		t.Fatalf("list's JSON: %s", b)
	}
	shutdownNow(t, s1)

	for i := range 2 {
		s := start(withFake)
		if got := innerRows(summaryOf(t, s, id).InnerAgents); got != want {
			t.Fatalf("restart %d: inner agents:\n%s\nwant:\n%s", i+1, got, want)
		}
		if i == 1 {
			if _, err := s.Send(t.Context(), id, "inner again", false); err != nil {
				t.Fatal(err)
			}
			waitFinal(t, s, id)
			got := innerRows(summaryOf(t, s, id).InnerAgents)
			if n := strings.Count(got, "\n") + 1; n != 4 || !strings.Contains(got, "seq=2") {
				t.Fatalf("after a second submission, %d inner agents:\n%s", n, got)
			}
		}
		shutdownNow(t, s)
	}
}

// TestInnerAgentsNoneWithoutAgentCalls: a claude run without an Agent
// call, and an agent command, list no inner agents (the JSON omits the
// field).
func TestInnerAgentsNoneWithoutAgentCalls(t *testing.T) {
	s, _ := presetSupervisor(t, "claude")
	id := spawn(t, s, "say hi")
	waitFinal(t, s, id)
	b, _ := json.Marshal(summaryOf(t, s, id))
	if strings.Contains(string(b), "inner_agents") {
		t.Fatalf("list's JSON: %s", b)
	}
}
