package server

import (
	"slices"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// heldCounts holds back, for a stream opened with ?counts= (SPEC §9), the
// changes that carry only output counts of agents the stream does not
// follow, and lets them go at most once per interval: a viewer of 1,000 agents each printing a line a second then
// wakes for the followed agent's output and for changes of status, and
// four times a second for the rest, instead of at every frame. They are
// held in the subscription (proto.Subscription.DrainHolding), so nothing
// is lost: a held change coalesces with the agent's later ones, takes its
// snapshot (the newest counts) when it goes, and goes at once with the
// agent's next change of status or summary.
type heldCounts struct {
	interval time.Duration // 0: hold nothing
	held     int           // how many changes the subscription holds
	last     time.Time     // when held changes last went
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

// drain takes from sub (at now) the changes to send now: every change but
// the output-only ones of agents other than followed, which it leaves in
// sub until interval has passed since such last went; then those too, in
// the order their agents first changed.
func (h *heldCounts) drain(sub *proto.Subscription, followed string, now time.Time) []proto.Change {
	if h.interval <= 0 {
		return sub.Drain()
	}
	hold := func(c proto.Change) bool { return c.AgentID != "" && c.AgentID != followed && countsOnly(c) }
	if !now.Before(h.last.Add(h.interval)) {
		out := sub.Drain()
		if h.held = 0; slices.ContainsFunc(out, hold) {
			h.last = now
		}
		return out
	}
	out, held := sub.DrainHolding(hold)
	h.held = held
	return out
}

// due is when the held changes go; the zero time when none are held.
func (h *heldCounts) due() time.Time {
	if h.held == 0 {
		return time.Time{}
	}
	return h.last.Add(h.interval)
}

// wake returns a channel that fires when the held changes are due, nil
// (never) when none are held, and the function that stops its timer.
func (h *heldCounts) wake(now time.Time) (<-chan time.Time, func()) {
	if h.held == 0 {
		return nil, func() {}
	}
	t := time.NewTimer(max(h.due().Sub(now), 0))
	return t.C, func() { t.Stop() }
}
