package proto

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"
)

// An agent snapshot survives the trip to a viewer whole: summary fields at
// the top level (as list has them, the message not cut), every other
// field, the usage once (the summary's), and every name snake_case.
func TestAgentInfoJSONRoundTrip(t *testing.T) {
	out, code, why := "done", 0, "it failed"
	long := strings.Repeat("x", MaxJSONMessage+10)
	used := Usage{InputTokens: 3, CostUSD: 0.5}
	a := AgentInfo{
		Summary:    Summary{AgentID: "a1", Status: StatusCompleted, LastMessage: long, CreatedAt: Time{Time: time.Unix(100, 0).UTC()}, Usage: &used},
		LastOutput: &out, LastError: &why, Stopping: true, Activity: "thinking", Usage: used, Preset: "claude", Structured: true, Origin: "ctl",
		Submissions: []SubmissionInfo{{ID: "s1", Seq: 1, Message: "m", Command: "c", Status: StatusCompleted,
			StartedAt: time.Unix(100, 0).UTC(), EndedAt: time.Unix(101, 0).UTC(), ExitCode: &code, Signal: "SIGKILL",
			LastError: &why, Stopping: true, LogPath: "/l", Output: OutputCounts{Lines: 4}, Changes: &Changes{Files: 1}},
			{ID: "s2", Seq: 2, StartedAt: time.Unix(102, 0).UTC()}},
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	_ = json.Unmarshal(b, &top)
	if top["agent_id"] != "a1" || top["status"] != "completed" || top["last_message"] != long || top["last_output"] != "done" {
		t.Fatalf("summary fields not at the top, or cut: %.300s", b)
	}
	var names func(v any)
	names = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if strings.IndexFunc(k, unicode.IsUpper) >= 0 {
					t.Errorf("JSON name %q is not snake_case", k)
				}
				names(e)
			}
		case []any:
			for _, e := range v {
				names(e)
			}
		}
	}
	names(top)
	if subs, _ := top["submissions"].([]any); len(subs) != 2 || subs[1].(map[string]any)["ended_at"] != nil {
		t.Errorf("a running submission's ended_at is sent: %v", top["submissions"])
	}
	var got AgentInfo
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, a)
	}
}
