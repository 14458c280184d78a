package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestChunksReadAsLines: a large journal, decoded in chunks on every
// core, gives exactly what reading it line by line gives: the same events
// in the same order (records knowing where their JSON is), the same
// damaged line numbers (torn lines in several chunks, a line longer than
// a chunk, a last line cut without its newline), the same skipped events.
func TestChunksReadAsLines(t *testing.T) {
	var b strings.Builder
	b.Write(encode(Event{Event: "run_started", Dir: "/w"}))
	for i := 0; b.Len() < 3*parallelFrom; i++ {
		id := fmt.Sprintf("agent-%d", i)
		switch {
		case i%97 == 5:
			b.WriteString(`{"time":"2026-12-01T00:00:00Z","event":"sent","agent_id":"` + id + "\n") // torn
		case i == 300:
			b.Write(encode(Event{Event: "record", AgentID: id, Record: &AgentRecord{AgentID: id, LastMessage: strings.Repeat("long ", chunk/2)}}))
		case i%3 == 0:
			b.Write(encode(Event{Event: "record", AgentID: id, Record: &AgentRecord{AgentID: id, Dir: "/w", LastMessage: "task " + id}}))
		default:
			b.Write(encode(Event{Event: "sent", AgentID: id, SubmissionID: id + "-1", Seq: 1, Message: "do " + id}))
		}
	}
	b.WriteString(`{"time":"2026-12-01T00:00:00Z","event":"sent","agent_id":"cut`)
	path := writeRun(t, t.TempDir(), "run-1", b.String())
	read := func(chunks bool, skip ...string) (evs []string, srcs []source, damaged []int) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close() //nolint:errcheck // read only
		fn := func(ev Event) {
			j, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, string(j))
			if ev.Record != nil && ev.Record.src != nil {
				srcs = append(srcs, *ev.Record.src)
			}
		}
		if chunks {
			damaged, err = readChunks(f, path, fn, skip)
		} else {
			damaged, err = readSeq(f, path, fn, skip)
		}
		if err != nil {
			t.Fatal(err)
		}
		return evs, srcs, damaged
	}
	for _, skip := range [][]string{nil, {"record"}} {
		evs, srcs, damaged := read(false, skip...)
		cevs, csrcs, cdamaged := read(true, skip...)
		if last := strings.Count(b.String(), "\n") + 1; len(evs) < 1000 || len(damaged) < 10 || damaged[len(damaged)-1] != last {
			t.Fatalf("skip %q: %d events, damaged lines %v", skip, len(evs), damaged)
		}
		if !reflect.DeepEqual(cevs, evs) {
			t.Errorf("skip %q: the chunks' %d events differ from the lines' %d", skip, len(cevs), len(evs))
		}
		if !reflect.DeepEqual(csrcs, srcs) {
			t.Errorf("skip %q: the chunks' records' sources differ from the lines'", skip)
		}
		if !reflect.DeepEqual(cdamaged, damaged) {
			t.Errorf("skip %q: damaged lines of the chunks %v; of the lines %v", skip, cdamaged, damaged)
		}
	}
	// The sources are right: each names its record's JSON.
	_, srcs, _ := read(true)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		var r AgentRecord
		if err := json.Unmarshal(raw[s.off:s.off+int64(s.n)], &r); err != nil || !strings.HasPrefix(r.AgentID, "agent-") {
			t.Fatalf("source %+v: %v %+v", s, err, r.AgentID)
		}
	}
}
