package supervisor

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// checkpointOf returns the record lines of run's checkpoint, by agent:
// the bytes of each line's record.
func checkpointOf(t *testing.T, runDir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_, err := journal.Read(filepath.Join(runDir, "journal.jsonl"), func(ev journal.Event) {
		if ev.Event == "record" {
			b, err := json.Marshal(ev.Record)
			if err != nil {
				t.Fatal(err)
			}
			out[ev.AgentID] = string(b)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRestoreCarriesRecordsOn (SPEC §10): a host restoring agents it
// changes nothing of writes their records into its checkpoint as it read
// them (journal.Carry copies them), the one it continued with its new
// submission; a later host restores every agent exactly as the host
// before showed it (list, each agent's record, its logs).
func TestRestoreCarriesRecordsOn(t *testing.T) {
	start, _ := hostOf(t, script)
	s1 := start()
	kept, sent, failed := spawn(t, s1, "ok one"), spawn(t, s1, "ok two"), spawn(t, s1, "bad three")
	for _, id := range []string{kept, sent, failed} {
		waitFinal(t, s1, id)
	}
	shutdownNow(t, s1)

	s2 := start()
	if _, err := s2.Send(t.Context(), sent, "ok again", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s2, sent)
	shutdownNow(t, s2)

	s3 := start()
	shown := map[string]proto.AgentInfo{}
	for _, id := range []string{kept, sent, failed} {
		info, ok := s3.Agent(id)
		if !ok {
			t.Fatalf("agent %s not restored", id)
		}
		shown[id] = info
	}
	list3 := listOf(s3)
	shutdownNow(t, s3)
	c2, c3 := checkpointOf(t, s2.RunDir()), checkpointOf(t, s3.RunDir())
	for _, id := range []string{kept, failed} {
		if c3[id] != c2[id] {
			t.Errorf("record of %s in the third host's checkpoint differs from the second's:\n%s\n%s", id[:8], c3[id], c2[id])
		}
	}
	var rec journal.AgentRecord
	if err := json.Unmarshal([]byte(c3[sent]), &rec); err != nil || len(rec.Submissions) != 2 || rec.LastMessage != "ok again" {
		t.Errorf("record of the agent continued: %s (%v); want its two submissions", c3[sent], err)
	}

	s4 := start()
	if got := listOf(s4); !reflect.DeepEqual(got, list3) {
		t.Errorf("list of the fourth host\n%+v\nwant the third's\n%+v", got, list3)
	}
	for id, want := range shown {
		if got, _ := s4.Agent(id); !reflect.DeepEqual(got, want) {
			t.Errorf("agent %s on the fourth host\n%+v\nwant\n%+v", id[:8], got, want)
		}
	}
	if out, err := s4.Logs(sent, 2); err != nil || out != "fine ok again\n" {
		t.Errorf("logs of the continued agent's second submission: %q %v", out, err)
	}
}
