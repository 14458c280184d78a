package kube

import (
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

// Steering holds in a pod (SPEC §11, §13): stdin is the exec stream, kept
// open; the steered line reaches the agent, its receipt comes back, and
// stdin closes at the agent's done.
func TestSteerOnKubernetes(t *testing.T) {
	image, node := testCluster(t)
	cfg := hostConfig(t.TempDir(), testkit.SteerAgent, image, node, 2*time.Second)
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
