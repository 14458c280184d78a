package server

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestListStreamedAsOne: the list answer, written a summary at a time,
// is the bytes writeJSON writes (an empty list, none, a failure, messages
// with <, & and long ones cut at proto.MaxJSONMessage), and writing one
// of 2,000 agents allocates less than half of what encoding it whole
// did (the body, the buffer it grew in, a copy of each summary: 36 MB
// for 5.4; 3.2 now, 13 of 60 under -race, whose sync.Pool drops items).
func TestListStreamedAsOne(t *testing.T) {
	now := proto.Time{Time: time.Date(2026, 12, 3, 10, 0, 0, 123e6, time.UTC)}
	sum := func(i int) proto.Summary {
		return proto.Summary{AgentID: fmt.Sprintf("%08x-0000-4000-8000-%012d", i, i), Status: proto.StatusCompleted,
			CreatedAt: now, UpdatedAt: now, LastMessage: fmt.Sprintf("task <%d> & \"more\" %s", i, strings.Repeat("é", i%3*1500)),
			LastSubmissionID: "s", AgentPath: fmt.Sprintf("/root/%08x", i), Restored: true,
			Usage: &proto.Usage{InputTokens: int64(i)}, QueuedMessages: []string{"q"}}
	}
	if n := reflect.TypeFor[proto.ListResult]().NumField(); n != 2 {
		t.Fatalf("proto.ListResult has %d fields; encodeList writes agents and failure only: write the new one too", n)
	}
	many := make([]proto.Summary, 2000)
	for i := range many {
		many[i] = sum(i)
	}
	for _, res := range []proto.ListResult{
		{}, {Agents: []proto.Summary{}}, {Agents: []proto.Summary{}, Failure: "journal <x> & y"},
		{Agents: many[:1]}, {Agents: many[:3], Failure: "cannot write"}, {Agents: many},
	} {
		var got bytes.Buffer
		if err := encodeList(&got, res); err != nil {
			t.Fatal(err)
		}
		if want := append(wire.Marshal(res), '\n'); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%d agents, failure %q:\n got %.300q\nwant %.300q", len(res.Agents), res.Failure, got.Bytes(), want)
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
	res := proto.ListResult{Agents: many}
	whole := allocated(func(w io.Writer) error { _, err := w.Write(append(wire.Marshal(res), '\n')); return err })
	streamed := allocated(func(w io.Writer) error { return encodeList(w, res) })
	if streamed*2 >= whole {
		t.Fatalf("writing a list of %d agents allocated %d bytes, encoded whole %d; want less than half", len(many), streamed, whole)
	}
}
