package supervisor

import (
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// The claude preset takes messages while it runs (the fake claude of
// testdata/fakecli speaks claude 2.1.197's stream-json steering, as
// notes/claude-steer.md recorded it): a steer echoed before the turn's
// result is folded; one that was still pending at that result keeps stdin
// open and, echoed with the next turn, is next_turn; the last result
// decides, and the cost is the process's last total_cost_usd, not a sum.
func TestClaudeSteerFoldedThenNextTurn(t *testing.T) {
	s, _ := presetSupervisor(t, "claude")
	id := spawn(t, s, "slow audit")
	r1, err := s.Steer(t.Context(), id, "also check the tests folder")
	if err != nil || r1.Receipt != proto.ReceiptPending {
		t.Fatalf("steer 1: %+v %v", r1, err)
	}
	r2, err := s.Steer(t.Context(), id, "then the docs")
	if err != nil || r2.Receipt != proto.ReceiptPending {
		t.Fatalf("steer 2: %+v %v", r2, err)
	}
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusCompleted || d.LastOutput == nil || *d.LastOutput != "FAKE: next turn: then the docs" {
		t.Fatalf("final %s %v %v", d.Status, d.LastOutput, d.LastError)
	}
	sum := summaryOf(t, s, id)
	if len(sum.SteeredMessages) != 2 {
		t.Fatalf("steered %+v", sum.SteeredMessages)
	}
	if m := sum.SteeredMessages[0]; m.ID != r1.MessageID || m.Receipt != proto.ReceiptFolded {
		t.Errorf("first: %+v", m)
	}
	if m := sum.SteeredMessages[1]; m.ID != r2.MessageID || m.Receipt != proto.ReceiptNextTurn {
		t.Errorf("second: %+v", m)
	}
	info, _ := s.Agent(id)
	if info.Usage.CostUSD != 0.2 || info.Usage.InputTokens != 20 {
		t.Errorf("usage %+v: want the last total_cost_usd (0.2) and both turns' tokens (20)", info.Usage)
	}
}
