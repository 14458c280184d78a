package transcript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeInnerDepth: the frames of an inner agent (those with a
// parent_tool_use_id, and its task_* frames) are one level below the
// Agent call that started it, a nested inner agent's task frames two (its
// task_started too, which claude writes before the call that starts it:
// it follows the call); the agent's own stay at 0 (recorded claude 2.1.197).
func TestClaudeInnerDepth(t *testing.T) {
	_, es := parseInner(t, "claude-inner-nested.jsonl")
	var got []string
	for _, e := range es {
		text := strings.SplitN(e.Text, " ", 2)[0]
		if e.Kind == KindTask {
			text = e.Text
		}
		got = append(got, fmt.Sprintf("%d %s %s", e.Depth, e.Kind, text))
	}
	want := []string{
		"0 init session", "0 text STUB-CALL", "0 tool_call ",
		"1 task inner agent “outer inner” started", "1 user CALL_TOOL:", "1 task inner agent “outer inner”: deep inner",
		"1 tool_call ", "2 task inner agent “deep inner” started", // claude writes it before its call; it goes after, at its depth
		"2 task inner agent “deep inner” completed", // its task_updated; the task_notification says the same
		"1 tool_result STUB-REPLY", "1 task inner agent “outer inner” completed",
		"0 tool_result STUB-DONE:", "0 text STUB-DONE:", "0 result ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("depths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A shell command's task frames (local_bash) sit at its call's depth.
	_, es = parseInner(t, "claude-inner-bash.jsonl")
	frames := 0
	for _, e := range es {
		if e.Kind == KindTask {
			frames++
			if e.Depth != 1 {
				t.Errorf("a task frame of the inner agent or of its Bash call at depth %d: %q", e.Depth, e.Text)
			}
		}
	}
	if frames == 0 {
		t.Fatal("no task frame in claude-inner-bash.jsonl: nothing was checked")
	}
}

// TestClaudeHeldTaskStartedIsNotLost: a task_started held for an Agent
// call that never comes goes out after maxHold lines, or at the end of
// the output: no frame is lost.
func TestClaudeHeldTaskStartedIsNotLost(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(innerFixtureDir, "claude-inner-nested.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	deep := -1 // the deep inner agent's task_started, the line before its call
	for i, l := range lines {
		if strings.Contains(l, `"subtype":"task_started"`) && strings.Contains(l, `"deep inner"`) {
			deep = i
		}
	}
	if deep < 0 || !strings.Contains(lines[deep+1], `"name":"Agent"`) {
		t.Fatalf("the fixture's deep task_started (line %d) is not before its Agent call", deep+1)
	}
	started := func(es []Entry) int {
		n := 0
		for _, e := range es {
			if e.Kind == KindTask && strings.HasSuffix(e.Text, " started") {
				n++
			}
		}
		return n
	}
	// The call's frame left out: out maxHold lines after it.
	p := NewParser(FormatClaude)
	var es []Entry
	for i, l := range append(lines[:deep+1:deep+1], lines[deep+2:]...) {
		got := p.Line([]byte(l))
		es = append(es, got...)
		if i == deep+maxHold-1 && started(got) != 1 {
			t.Errorf("line %d, %d lines after the task_started: it is still held (%d entries)", i+1, maxHold-1, len(got))
		}
	}
	if n := started(append(es, p.End()...)); n != 2 {
		t.Errorf("%d task_started entries without the call's frame, want 2", n)
	}
	// The output ends right after it: out at the end.
	p = NewParser(FormatClaude)
	es = nil
	for _, l := range lines[:deep+1] {
		es = append(es, p.Line([]byte(l))...)
	}
	if n := started(es); n != 1 {
		t.Fatalf("%d task_started entries before the end, want the outer one", n)
	}
	if n := started(p.End()); n != 1 {
		t.Errorf("the end gave %d task_started entries, want the held one", n)
	}
}

// TestClaudeTaskFramesInWords: claude's system/task_* frames are said in
// words, naming the inner agent or shell command; the task_notification
// claude writes twice when an inner agent is killed shows once, and so
// does an end a task_updated and a task_notification both say.
func TestClaudeTaskFramesInWords(t *testing.T) {
	for file, want := range map[string][]string{
		"claude-inner-sigint.jsonl": {
			"inner agent “inner shell” started", "inner agent “inner shell”: Running stub scripted command",
			"inner agent “inner shell” stopped", "inner agent “inner shell” killed",
		},
		"claude-inner-bg.jsonl": {
			"inner agent “background inner” started", "inner agent “background inner”: Running stub scripted command",
			"shell command “stub scripted command” started", "shell command “stub scripted command” completed",
			"inner agent “background inner” completed", `inner agent “background inner” completed: Agent "background inner" finished`,
		},
	} {
		_, es := parseInner(t, file)
		var got []string
		for _, e := range es {
			if strings.Contains(e.Text, "task_") {
				t.Errorf("%s: an entry names a raw event: %q", file, e.Text)
			}
			if e.Kind == KindTask {
				got = append(got, e.Text)
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: task entries\n%s\nwant\n%s", file, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
