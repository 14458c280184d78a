package proto

import (
	"reflect"
	"testing"
	"time"
)

func TestCountAgents(t *testing.T) {
	running := func(id, origin string) AgentInfo {
		a := AgentInfo{Submissions: []SubmissionInfo{{}}, Origin: origin} // not ended
		a.AgentID, a.Status = id, StatusRunning
		return a
	}
	ended := func(id string, st Status) AgentInfo {
		a := AgentInfo{Submissions: []SubmissionInfo{{EndedAt: time.Unix(1e9, 0)}}}
		a.AgentID, a.Status = id, st
		return a
	}
	queued := running("q", "mcp")
	queued.QueuedMessage = "next"
	queued.PendingApprovals = []PendingApproval{{RequestID: "1"}, {RequestID: "2"}}
	failing := ended("f", StatusCompleted)
	failing.Failure = "log file could not be written"
	failing.NeedsYou = &Attention{Reason: "completed"}
	restored := ended("r", StatusErrored)
	restored.Restored = true
	stopping := running("s", "")
	stopping.Status = StatusErrored // interrupted, its group not gone yet: still running
	agents := []AgentInfo{running("a", "ctl"), queued, failing, restored, ended("c", StatusClosed), stopping, running("b", "mcp"),
		{Summary: Summary{AgentID: "never", Status: StatusCompleted}}}
	want := Counts{Running: 4, Completed: 2, Errored: 1, Closed: 1, NeedYou: 1, Restored: 1, Failing: 1, Queued: 1, Approvals: 2,
		RunningBy: []OriginCount{{"ctl", 1}, {"mcp", 2}}}
	if got := CountAgents(agents); !reflect.DeepEqual(got, want) {
		t.Errorf("CountAgents =\n%+v\nwant\n%+v", got, want)
	}
	if got := CountAgents(nil); !reflect.DeepEqual(got, Counts{}) {
		t.Errorf("CountAgents(nil) = %+v", got)
	}
}
