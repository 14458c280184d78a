package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestReadOnlyViewerRefusesChanges: a viewer attached read-only refuses
// every operation that changes agents, naming it, before anything
// reaches the host; it still marks an agent seen (that changes no agent)
// and reads what it draws.
func TestReadOnlyViewerRefusesChanges(t *testing.T) {
	s := controlkit.Supervisor(t)
	srv, c := controlkit.Serve(t, s)
	sp := controlkit.SpawnFinal(t, c, "hello")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := client.Attach(ctx, srv.Path(), "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Detach()
	id := sp.AgentID
	for _, tc := range []struct {
		op   string
		call func() error
	}{
		{"spawn", func() error { _, err := r.Spawn(ctx, "hi"); return err }},
		{"send", func() error { _, err := r.Send(ctx, id, "hi", false); return err }},
		{"interrupt", func() error { _, err := r.Interrupt(ctx, id); return err }},
		{"close", func() error { _, err := r.Close(ctx, id); return err }},
		{"resume", func() error { _, err := r.Resume(ctx, id); return err }},
		{"forget", func() error { _, err := r.Forget(ctx, id); return err }},
		{"approve", func() error { _, err := r.Approve(ctx, id, "", false); return err }},
		{"deny", func() error { _, err := r.Deny(ctx, id, "", ""); return err }},
		{"cancel queue", func() error { _, err := r.CancelQueue(ctx, id); return err }},
		{"send", func() error { _, err := r.Resend(ctx, id, false, true); return err }},
		{"send", func() error { _, err := r.SendFrom(ctx, id, strings.NewReader("hi"), false, false); return err }},
	} {
		controlkit.SpecError(t, tc.call(), proto.CodeInvalid, proto.ErrReadOnly(tc.op).Message)
	}
	if res, err := c.List(ctx); err != nil || len(res.Agents) != 1 || res.Agents[0].Status != proto.StatusCompleted {
		t.Fatalf("the host after the refusals: %+v %v", res, err)
	}
	if _, err := r.MarkSeen(ctx, id); err != nil {
		t.Errorf("a read-only viewer marks an agent seen: %v", err)
	}
	if w, err := r.Window(ctx, id, 0, -1, 10); err != nil || len(w.Lines) != 1 {
		t.Errorf("a read-only viewer reads a window: %+v %v", w, err)
	}
}
