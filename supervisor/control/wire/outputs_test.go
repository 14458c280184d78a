package wire

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// manyOutputs is an outputs event of n agents as a host writes it, about
// half with an output rate (the same newest time, as in one batch).
func manyOutputs(n int, rng *rand.Rand) OutputsEvent {
	newest := proto.Time{Time: time.Unix(1_800_000_000+rng.Int63n(1000), int64(rng.Intn(1000))*1e6).UTC()}
	var ev OutputsEvent
	for i := 0; i < n; i++ {
		o := OutputEvent{AgentID: fmt.Sprintf("a%08x-%d", rng.Uint32(), i), Seq: rng.Intn(5),
			Output: proto.OutputCounts{FirstLine: rng.Int63n(1e6), Lines: rng.Int63n(1e9), Evicted: rng.Intn(7) == 0,
				FirstEntry: rng.Int63n(3), Entries: rng.Int63n(50) - 2}}
		switch rng.Intn(4) {
		case 0:
			o.Now = "→ Bash go test ./... 2>&1 | tee <out> \"quoted\" é"
		case 1:
			o.Now = fmt.Sprintf("step %d of the refactor", rng.Intn(100))
		}
		if rng.Intn(2) == 0 {
			o.Rate = &proto.OutputRate{BucketSeconds: 15, Newest: newest}
			for k := range o.Rate.Bytes {
				o.Rate.Bytes[k] = rng.Int63n(1 << 40)
			}
		}
		ev.Outputs = append(ev.Outputs, o)
	}
	return ev
}

// decodeBoth decodes data with DecodeOutputs (into a batch that held
// something before, as a viewer's does) and with json.Unmarshal.
func decodeBoth(t *testing.T, data string, last *LastTime) (got, want OutputsEvent, gotErr, wantErr error) {
	t.Helper()
	got = manyOutputs(3, rand.New(rand.NewSource(9)))
	gotErr = DecodeOutputs([]byte(data), &got, last)
	wantErr = json.Unmarshal([]byte(data), &want)
	return got, want, gotErr, wantErr
}

// TestDecodeOutputsAsJSON: a viewer's decoder of the outputs event gives
// what json.Unmarshal gives, for the events a host writes (many batches
// in a row, sharing the time between them) and for what it does not
// write: fields a newer host may add, escapes, spacing, nulls, numbers it
// cannot take, broken JSON (an error, as json.Unmarshal's).
func TestDecodeOutputsAsJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var last LastTime
	for round := 0; round < 200; round++ {
		b, err := json.Marshal(manyOutputs(rng.Intn(40), rng))
		if err != nil {
			t.Fatal(err)
		}
		got, want, gotErr, wantErr := decodeBoth(t, string(b), &last)
		if gotErr != nil || wantErr != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: DecodeOutputs %+v (%v), json.Unmarshal %+v (%v) of %s", round, got, gotErr, want, wantErr, b)
		}
	}
	rate := `{"bucket_seconds":15,"newest":"2027-01-15T08:00:00.000Z","bytes":[0,1,2,3,4,5,6,7]}`
	for _, data := range []string{
		`{"outputs":[]}`, `{"outputs":null}`, `{}`, `null`, `{"outputs":[null]}`,
		` { "outputs" : [ { "agent_id" : "a1" , "seq" : 2 , "output" : { "lines" : 5 } , "output_rate" : ` + rate + ` } ] } `,
		`{"outputs":[{"agent_id":"a1","output_rate":null}]}`,
		`{"outputs":[{"agent_id":"a1","seq":1,"output":{"lines":3},"output_rate":{"newest":null}}]}`,
		`{"outputs":[{"agent_id":"a\u00e91","seq":1}]}`,
		`{"outputs":[{"agent_id":"a1","now":"→ é"}]}`, `{"outputs":[{"agent_id":"a1","now":"a\u0026b \\ \"c\" \n"}]}`,
		`{"outputs":[{"agent_id":"a1","now":"bad ` + "\xff" + ` byte"}]}`, `{"outputs":[{"agent_id":"a1","now":"unterminated}]}`,
		`{"outputs":[{"agent_id":"a1","now":null}]}`, `{"outputs":[{"agent_id":"a1","now":3}]}`, `{"outputs":[{"agent_id":"aé1"}]}`,
		`{"outputs":[{"agent_id":"a1","seq":1,"host_added":{"x":[1,2]}}]}`,
		`{"outputs":[{"agent_id":"a1","output":{"lines":3,"tokens":9}}]}`,
		`{"outputs":[{"agent_id":"a1"}],"more":true}`,
		`{"outputs":[{"Agent_ID":"a1"}]}`,
		`{"outputs":[{"agent_id":"a1","output_rate":{"bytes":[1,2,3]}}]}`,
		`{"outputs":[{"agent_id":"a1","output_rate":{"bytes":[1,2,3,4,5,6,7,8,9]}}]}`,
		`{"outputs":[{"agent_id":"a1","output":{"lines":1e3}}]}`,
		`{"outputs":[{"agent_id":"a1","output":{"lines":-0}}]}`,
		`{"outputs":[{"agent_id":"a1","output":{"lines":92233720368547758070}}]}`,
		`{"outputs":[{"agent_id":"a1","output":{"lines":9223372036854775807}}]}`,
		`{"outputs":[{"agent_id":"a1","output":{"lines":01}}]}`,
		`{"outputs":[{"agent_id":"a1","output":{"evicted":true,"lines":2}}]}`,
		`{"outputs":[{"agent_id":"a1","output":null}]}`,
		`{"outputs":[{"agent_id":"a1","output_rate":{"newest":"yesterday"}}]}`,
		`{"outputs":[{"agent_id":"a1"}`, `{"outputs":[{"agent_id":"a1"}]}x`, `{"outputs":[{"agent_id":"a1",}]}`, ``,
	} {
		got, want, gotErr, wantErr := decodeBoth(t, data, &last)
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: DecodeOutputs %+v (%v), json.Unmarshal %+v (%v)", data, got, gotErr, want, wantErr)
		}
	}
}

// BenchmarkDecodeOutputs: one outputs event of 34 agents (1,000 agents
// printing a line a second, a viewer's 30 batches a second), by hand and
// by json.Unmarshal:
//
//	go test ./supervisor/control -run XXX -bench DecodeOutputs -benchmem
func BenchmarkDecodeOutputs(b *testing.B) {
	data, err := json.Marshal(manyOutputs(34, rand.New(rand.NewSource(1))))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		var ev OutputsEvent
		var last LastTime
		for i := 0; i < b.N; i++ {
			if err := DecodeOutputs(data, &ev, &last); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var ev OutputsEvent
			if err := json.Unmarshal(data, &ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}
