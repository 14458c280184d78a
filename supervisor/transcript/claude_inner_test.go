package transcript

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// innerFixtureDir holds recordings of claude 2.1.197 starting inner agents
// (its Agent tool) against the stub (notes claude-inner.md).
const innerFixtureDir = "../../testdata/inner-agents"

// parseInner feeds recording name to a claude parser with a clock that
// ticks a second per read, ends it, and returns the inner agents and the
// entries.
func parseInner(t *testing.T, name string) ([]InnerAgent, []Entry) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(innerFixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(FormatClaude)
	tick := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	p.SetClock(func() time.Time { tick = tick.Add(time.Second); return tick })
	var es []Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		es = append(es, p.Line(sc.Bytes())...)
	}
	es = append(es, p.End()...)
	return p.InnerAgents(), es
}

// innerRow is what a reader of list sees of one inner agent.
func innerRow(a InnerAgent) string {
	ended := "-"
	if !a.EndedAt.IsZero() {
		ended = a.EndedAt.Sub(a.StartedAt).String()
	}
	return fmt.Sprintf("%s parent=%s %q %s %s/%s last=%s tools=%d tokens=%d ms=%d summary=%q ended+%s",
		a.TaskID, a.ParentTaskID, a.Description, a.TaskType, a.Status, a.CLIStatus, a.LastTool, a.ToolCount, a.Tokens, a.ElapsedMS, a.Summary, ended)
}

func TestClaudeInnerAgentsFromRecordings(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string
	}{
		{"claude-stream-subagent.jsonl", []string{
			`ad617d6766f22034e parent= "inner audit" local_agent completed/completed last= tools=0 tokens=11305 ms=68 summary="inner audit" ended+1s`,
		}},
		// the shell command (local_bash b1l23t3pv) is no inner agent
		{"claude-inner-bash.jsonl", []string{
			`a53190e3dd7e7bc46 parent= "inner shell" local_agent completed/completed last=Bash tools=1 tokens=11807 ms=3171 summary="inner shell" ended+1s`,
		}},
		// the deep one is the outer one's child, through the Agent call made inside it
		{"claude-inner-nested.jsonl", []string{
			`a945569b970c4a67a parent= "outer inner" local_agent completed/completed last=Agent tools=1 tokens=11909 ms=203 summary="outer inner" ended+3s`,
			`ab8d46329b556c5f6 parent=a945569b970c4a67a "deep inner" local_agent completed/completed last= tools=0 tokens=11307 ms=70 summary="deep inner" ended+1s`,
		}},
		{"claude-inner-two.jsonl", []string{
			`a966abcd5c5087bdb parent= "first inner" local_agent completed/completed last=Bash tools=1 tokens=11801 ms=391 summary="first inner" ended+1s`,
			`a209fed53842992a6 parent= "second inner" local_agent completed/completed last= tools=0 tokens=11307 ms=33 summary="second inner" ended+1s`,
		}},
		// SIGINT: claude says stopped, then killed, then stopped again
		{"claude-inner-sigint.jsonl", []string{
			`a48651f061e75730b parent= "inner shell" local_agent interrupted/stopped last=Bash tools=1 tokens=11314 ms=3032 summary="inner shell" ended+1s`,
		}},
		// a background inner agent goes on past the first result
		{"claude-inner-bg.jsonl", []string{
			`a1222dcffec4a4a2e parent= "background inner" local_agent completed/completed last=Bash tools=1 tokens=8020 ms=4244 summary="Agent \"background inner\" finished" ended+1s`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _ := parseInner(t, c.name)
			var rows []string
			for _, a := range got {
				rows = append(rows, innerRow(a))
			}
			if strings.Join(rows, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("inner agents:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestClaudeInnerAgentCutShort: a stream that ends while an inner agent
// runs (the process died) leaves it interrupted, with no word of claude's.
func TestClaudeInnerAgentCutShort(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(innerFixtureDir, "claude-inner-bash.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(FormatClaude)
	running := false
	for _, line := range bytes.Split(data, []byte("\n")) {
		p.Line(line)
		if bytes.Contains(line, []byte(`"subtype":"task_progress"`)) {
			in := p.InnerAgents()
			if len(in) != 1 || in[0].Status != InnerRunning || in[0].LastTool != "Bash" || !in[0].EndedAt.IsZero() {
				t.Fatalf("while it runs: %+v", in)
			}
			running = true
			break
		}
	}
	if !running {
		t.Fatal("no task_progress in the recording")
	}
	p.End()
	in := p.InnerAgents()
	if len(in) != 1 || in[0].Status != InnerInterrupted || in[0].CLIStatus != "" || in[0].EndedAt.IsZero() {
		t.Fatalf("after the end: %+v", in)
	}
}
