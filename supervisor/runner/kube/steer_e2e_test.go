package kube

import (
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

// steerScript speaks the built-in agent's stream-json protocol (as
// supervisor's steer_test.go): it takes one further stdin line, says so
// with the line's uuid, says its task is done and ends when stdin closes.
const steerScript = `read -r first; echo working
read -r line
id=$(printf '%s' "$line" | sed 's/.*"uuid":"\([^"]*\)".*/\1/')
echo "↪ took message $id (folded) after 1 file, before x.go: steer"
echo "↪ task done; further messages are taken until stdin closes"
while read -r more; do :; done
echo stdin-closed`

// Steering holds in a pod (SPEC §11, §13): stdin is the exec stream, kept
// open; the steered line reaches the agent, its receipt comes back, and
// stdin closes at the agent's done.
func TestSteerOnKubernetes(t *testing.T) {
	image, node := testCluster(t)
	cfg := hostConfig(t.TempDir(), steerScript, image, node, 2*time.Second)
	cfg.CommandSource = supervisor.SourceBuiltin // a steerable agent
	s, err := supervisor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(t.Context()) })
	res, err := s.Spawn(t.Context(), "audit .")
	if err != nil {
		t.Fatal(err)
	}
	id := res.AgentID
	waitLogs(t, s, id, "working", 2*time.Minute)
	r, err := s.Steer(t.Context(), id, "also audit tests")
	if err != nil || r.Receipt != proto.ReceiptPending {
		t.Fatalf("steer: %+v %v", r, err)
	}
	d := waitFinal(t, s, id)
	got, _ := s.Logs(id, 0)
	if d.Status != proto.StatusCompleted || !strings.Contains(got, "stdin-closed") {
		t.Fatalf("%s %q; log %q", d.Status, str(d.LastError), got)
	}
	l, _ := s.List(t.Context())
	for _, a := range l.Agents {
		if a.AgentID == id && (len(a.SteeredMessages) != 1 || a.SteeredMessages[0].Receipt != proto.ReceiptFolded) {
			t.Fatalf("steered %+v", a.SteeredMessages)
		}
	}
}
