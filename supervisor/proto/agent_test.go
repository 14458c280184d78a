package proto

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// An agent snapshot survives the trip to a viewer whole: summary fields at
// the top level (as list has them) and every other field.
func TestAgentInfoJSONRoundTrip(t *testing.T) {
	out, code := "done", 0
	long := strings.Repeat("x", MaxJSONMessage+10)
	a := AgentInfo{
		Summary:    Summary{AgentID: "a1", Status: StatusCompleted, LastMessage: long, CreatedAt: Time{Time: time.Unix(100, 0).UTC()}},
		LastOutput: &out, Activity: "thinking", Usage: Usage{InputTokens: 3, CostUSD: 0.5},
		Submissions: []SubmissionInfo{{ID: "s1", Seq: 1, Message: "m", Status: StatusCompleted,
			StartedAt: time.Unix(100, 0).UTC(), EndedAt: time.Unix(101, 0).UTC(), ExitCode: &code}},
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	_ = json.Unmarshal(b, &top)
	if top["agent_id"] != "a1" || top["status"] != "completed" {
		t.Fatalf("summary fields not at the top: %s", b)
	}
	var got AgentInfo
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, a)
	}
}
