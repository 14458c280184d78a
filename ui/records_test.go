package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// TestForgetKeyAsksThenForgets: x on a finished agent asks, y forgets it
// (it leaves the table); x on a running agent is refused without asking.
func TestForgetKeyAsksThenForgets(t *testing.T) {
	f := threeAgents()
	h := newHarness(t, f, 120, 30)
	h.keys("x") // idA runs
	h.wantScreen("agent 3fa2c1d0 is running; interrupt (i) or close (c) it before forgetting it")
	h.wantCalls()
	h.keys("j", "x")
	h.wantScreen("Forget " + idB[:8] + " for good?")
	h.keys("n")
	h.wantCalls()
	h.keys("x", "y")
	h.wantCalls("forget " + idB[:8])
	h.wantScreen("forgot " + idB[:8])
	if row := h.row(idB); row != "" {
		t.Fatal("the forgotten agent is still in the table")
	}
}

// TestRestoredRowsShowTheirAge: a restored agent's time column shows how
// long ago it was last updated, and the status line how many were
// restored; once it runs again it is an agent of this run.
func TestRestoredRowsShowTheirAge(t *testing.T) {
	f := threeAgents()
	b := f.find(idB)
	b.info.Restored = true
	b.info.UpdatedAt = proto.Time{Time: t0.Add(-3 * time.Hour)}
	h := newHarness(t, f, 120, 30)
	if row := h.row(idB); !strings.Contains(row, "↺ 3h") {
		t.Fatalf("restored row: %q", row)
	}
	h.wantScreen("↺ 1 restored")
	if row := h.row(idC); strings.Contains(row, "↺") {
		t.Fatalf("an agent of this run shows an age: %q", row)
	}
}

// TestRestoredNoteFollowsForgottenAgents: the host's note on the agents
// it restored counts those forgotten since no more, and goes with the last.
func TestRestoredNoteFollowsForgottenAgents(t *testing.T) {
	f := threeAgents()
	f.find(idB).info.Restored = true
	f.find(idC).info.Restored = true
	f.cfg.Notes = []string{proto.RestoredNote(2, 7*24*time.Hour)}
	h := newHarness(t, f, 160, 40)
	h.keys("?")
	h.wantScreen("restored 2 agent(s) of this directory from earlier runs (updated within 7 days)")
	h.keys("esc", "j", "x", "y")
	h.wantCalls("forget " + idB[:8])
	h.keys("?")
	h.wantScreen("restored 1 agent(s) of this directory from earlier runs (updated within 7 days)")
	h.keys("esc")
	h.wantScreen(idC[:8] + " · #1/1")
	h.keys("x", "y")
	h.wantCalls("forget "+idB[:8], "forget "+idC[:8])
	h.keys("?")
	h.wantScreen("?/esc close help") // the overlay, which lists every note
	h.noScreen("agent(s) of this directory")
}

// TestResendSendsTheWholeMessage: when the snapshot holds only a message's
// head, resend has the host send the whole message from its file, and
// edit-and-resend (of a message up to 64 KiB) fetches it into the input.
func TestResendSendsTheWholeMessage(t *testing.T) {
	f := newFake()
	whole := strings.TrimSpace(strings.Repeat("long task ", 1000))
	head := whole[:40] + "...[truncated: 10000 bytes in all]"
	f.add(idB, head, proto.StatusCompleted)
	f.whole = map[string]string{idB: whole}
	h := newHarness(t, f, 120, 30)
	h.keys("e")
	if h.m.mode != modeInput || h.m.input.Value() != whole {
		t.Fatalf("e: mode %v, input of %d bytes; want the whole %d in the input", h.m.mode, len(h.m.input.Value()), len(whole))
	}
	h.keys("esc", "R")
	h.wantCalls("message "+idB[:8], "resend "+idB[:8]+" interrupt=false queue=false")
}
