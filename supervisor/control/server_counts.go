package control

import (
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// heldCounts holds back, for a stream opened with ?counts= (feature word
// counts-interval, SPEC §9), the changes that carry only output counts of
// agents the stream does not follow, and lets them go at most once per
// interval: a viewer of 1,000 agents each printing a line a second then
// wakes for the followed agent's output and for changes of status, and
// four times a second for the rest, instead of at every frame. Nothing is
// lost: a held change is replaced by the agent's next one (whose snapshot
// holds the newer counts) and goes with the next release; a change of the
// agent that must go at once takes the held one's Output along.
type heldCounts struct {
	interval time.Duration // 0: hold nothing
	byAgent  map[string]int
	held     []proto.Change
	last     time.Time // when held changes last went
}

// streamCounts is a stream's counts interval: the client's ?counts= (a Go
// duration) within its frame and a second; 0 (hold nothing) when it asked
// for none or for less than its frame, or could not be read.
func streamCounts(asked string, frame time.Duration) time.Duration {
	d, err := time.ParseDuration(asked)
	if err != nil || d <= frame {
		return 0
	}
	return min(d, time.Second)
}

// countsOnly reports whether c carries nothing but new output.
func countsOnly(c proto.Change) bool {
	return c.Output && !c.Agent && !c.Forgotten && len(c.Warnings) == 0 && c.Link == ""
}

// take returns, of changes (a batch just drained, at now), those to send
// now: every change but the output-only ones of agents other than
// followed, which it holds, and, once interval has passed since held
// changes last went, the held ones too (after the others, in the order
// they were first held).
func (h *heldCounts) take(changes []proto.Change, followed string, now time.Time) []proto.Change {
	if h.interval <= 0 {
		return changes
	}
	out := changes[:0:0]
	for _, c := range changes {
		i, isHeld := h.byAgent[c.AgentID]
		switch {
		case c.AgentID != "" && c.AgentID != followed && countsOnly(c):
			if isHeld {
				h.held[i] = c // the newer snapshot
				continue
			}
			if h.byAgent == nil {
				h.byAgent = map[string]int{}
			}
			h.byAgent[c.AgentID] = len(h.held)
			h.held = append(h.held, c)
		case isHeld:
			c.Output = true // what was held goes with it: c's snapshot is newer
			h.held[i] = proto.Change{}
			delete(h.byAgent, c.AgentID)
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	if len(h.byAgent) > 0 && !now.Before(h.due()) {
		for _, c := range h.held {
			if c.AgentID != "" {
				out = append(out, c)
			}
		}
		h.held, h.byAgent, h.last = h.held[:0], nil, now
	}
	return out
}

// due is when the held changes go; the zero time when none are held.
func (h *heldCounts) due() time.Time {
	if len(h.byAgent) == 0 {
		return time.Time{}
	}
	return h.last.Add(h.interval)
}

// wake returns a channel that fires when the held changes are due, nil
// (never) when none are held, and the function that stops its timer.
func (h *heldCounts) wake(now time.Time) (<-chan time.Time, func()) {
	if len(h.byAgent) == 0 {
		return nil, func() {}
	}
	t := time.NewTimer(max(h.due().Sub(now), 0))
	return t.C, func() { t.Stop() }
}
