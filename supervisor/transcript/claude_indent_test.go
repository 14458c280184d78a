package transcript

import (
	"fmt"
	"strings"
	"testing"
)

// TestClaudeInnerDepth: the frames of an inner agent (those with a
// parent_tool_use_id, and its task_* frames) are one level below the
// Agent call that started it, a nested inner agent's task frames two; the
// agent's own stay at 0 (recorded claude 2.1.197).
func TestClaudeInnerDepth(t *testing.T) {
	_, es := parseInner(t, "claude-inner-nested.jsonl")
	var got []string
	for _, e := range es {
		got = append(got, fmt.Sprintf("%d %s %s", e.Depth, e.Kind, strings.SplitN(e.Text, " ", 2)[0]))
	}
	want := []string{
		"0 init session", "0 text STUB-CALL", "0 tool_call ",
		"1 unknown system/task_started", "1 user CALL_TOOL:", "1 unknown system/task_progress",
		"1 unknown system/task_started", // the deep one's: claude writes it before the call it belongs to
		"1 tool_call ", "2 unknown system/task_updated", "2 unknown system/task_notification",
		"1 tool_result STUB-REPLY", "1 unknown system/task_updated", "1 unknown system/task_notification",
		"0 tool_result STUB-DONE:", "0 text STUB-DONE:", "0 result ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("depths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A shell command's task frames (local_bash) sit at its call's depth.
	_, es = parseInner(t, "claude-inner-bash.jsonl")
	frames := 0
	for _, e := range es {
		if e.Kind == KindUnknown {
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
