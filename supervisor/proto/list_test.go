package proto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// wholeList is list's JSON as json.Marshal makes it at once: each
// summary with its messages cut, HTML escaped, the failure not.
func wholeList(t *testing.T, res ListResult) []byte {
	t.Helper()
	var agents []json.RawMessage
	if res.Agents != nil {
		agents = []json.RawMessage{}
	}
	for _, s := range res.Agents {
		f := summaryFields(s)
		f.capMessages()
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, b)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Agents  []json.RawMessage `json:"agents"`
		Failure string            `json:"failure,omitempty"`
	}{agents, res.Failure}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestListWrittenASummaryAtATime: list's JSON, written a summary at a
// time (the host's answer to GET /v1/agents), is what encoding it whole
// gives (an empty list, none, a failure, messages with <, & and long ones
// cut at MaxJSONMessage), and writing one of 2,000 agents allocates less
// than half of what encoding it whole does (the body, the buffer it grew
// in, a copy of each summary).
func TestListWrittenASummaryAtATime(t *testing.T) {
	now := Time{Time: time.Date(2026, 12, 3, 10, 0, 0, 123e6, time.UTC)}
	sum := func(i int) Summary {
		return Summary{AgentID: fmt.Sprintf("%08x-0000-4000-8000-%012d", i, i), Status: StatusCompleted,
			CreatedAt: now, UpdatedAt: now, LastMessage: fmt.Sprintf("task <%d> & \"more\" %s", i, strings.Repeat("é", i%3*1500)),
			LastSubmissionID: "s", AgentPath: fmt.Sprintf("/root/%08x", i), Restored: true,
			Usage: &Usage{InputTokens: int64(i)}, QueuedMessages: []string{"q"}}
	}
	many := make([]Summary, 2000)
	for i := range many {
		many[i] = sum(i)
	}
	for _, res := range []ListResult{
		{}, {Agents: []Summary{}}, {Agents: []Summary{}, Failure: "journal <x> & y"},
		{Agents: many[:1]}, {Agents: many[:3], Failure: "cannot write"}, {Agents: many},
	} {
		var got bytes.Buffer
		if err := res.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if want := wholeList(t, res); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%d agents, failure %q:\n got %.300q\nwant %.300q", len(res.Agents), res.Failure, got.Bytes(), want)
		}
		if m, err := json.Marshal(res); err != nil || !json.Valid(m) || len(m) < got.Len()-1 {
			t.Fatalf("json.Marshal of %d agents: %v", len(res.Agents), err)
		}
	}
	allocated := func(write func(io.Writer) error) uint64 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if err := write(io.Discard); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	res := ListResult{Agents: many}
	whole := allocated(func(w io.Writer) error { _, err := w.Write(wholeList(t, res)); return err })
	streamed := allocated(res.WriteJSON)
	if streamed*2 >= whole {
		t.Fatalf("writing a list of %d agents allocated %d bytes, encoded whole %d; want less than half", len(many), streamed, whole)
	}
}
