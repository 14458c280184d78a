package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// A stalled agent (Summary.StalledSince) leads its message cell with the
// mark, symbol and word and for how long, and the status line counts it;
// the mark goes with the field (SPEC §11 "Stalled").
func TestStalledMarkAndCount(t *testing.T) {
	f := threeAgents()
	f.add(idDocs, "update the docs", proto.StatusRunning)
	h := newHarness(t, f, 160, 30)
	h.noScreen("stalled")

	a := f.find(idDocs)
	f.mu.Lock()
	a.info.StalledSince = &proto.Time{Time: t0.Add(-65 * time.Second)}
	a.info.NeedsYou = &proto.Attention{Reason: proto.ReasonStalled, Seq: 1, Since: proto.Time{Time: t0}}
	f.mu.Unlock()
	h.sync(idDocs)
	if r := h.row(idDocs); !strings.Contains(r, "◆ needs you · ⊘ stalled 1m05s") {
		t.Fatalf("row of the stalled agent: %q", r)
	}
	h.wantScreen("⊘ 1 stalled")

	f.mu.Lock()
	a.info.StalledSince, a.info.NeedsYou = nil, nil
	f.mu.Unlock()
	h.sync(idDocs)
	h.noScreen("stalled")
}
