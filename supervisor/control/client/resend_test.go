package client_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestResendFromTheHostsFile: a client's Resend of a long message
// is one small request (FeatureResendFile): the host reads the message from
// its kept file into the new submission, whole; WriteMessage streams the
// message to a writer; an agent with no such message gets the host's words.
func TestResendFromTheHostsFile(t *testing.T) {
	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(4))
	_, c := controlkit.Serve(t, s)
	msg := strings.Repeat("sleep ", 1<<18) // 1.5 MiB
	sp, err := c.SpawnFrom(context.Background(), strings.NewReader(msg), "")
	if err != nil {
		t.Fatal(err)
	}
	controlkit.WaitFinal(t, c, sp.AgentID)
	var got bytes.Buffer
	if err := c.WriteMessage(context.Background(), &got, sp.AgentID, 0); err != nil || got.String() != strings.TrimSpace(msg) {
		t.Fatalf("WriteMessage: %d bytes (%v), want the whole %d", got.Len(), err, len(strings.TrimSpace(msg)))
	}
	res, err := c.Resend(context.Background(), sp.AgentID, false, false)
	if err != nil || res.Status != proto.StatusRunning && res.Status != proto.StatusCompleted {
		t.Fatalf("Resend: %+v %v", res, err)
	}
	if whole, err := s.Message(t.Context(), sp.AgentID, 2); err != nil || whole != strings.TrimSpace(msg) {
		t.Fatalf("the resent submission holds %d bytes (%v), want the whole %d", len(whole), err, len(strings.TrimSpace(msg)))
	}
	controlkit.WaitFinal(t, c, sp.AgentID)
	if res, err := c.Resend(context.Background(), sp.AgentID, false, true); err != nil || res.Queued {
		t.Errorf("Resend with queue of a finished agent: %+v %v; want it sent at once", res, err)
	}
	if _, err := c.Resend(context.Background(), "nobody", false, false); err == nil || !strings.Contains(err.Error(), "agent not found") {
		t.Errorf("Resend of an unknown agent: %v", err)
	}
}
