package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// SearchAgents searches the fake's display lines as the host searches its
// logs (proto.Searcher): agents in order, submissions by seq, the limit
// and After kept; each request is recorded.
func (f *fakeSup) SearchAgents(ctx context.Context, req proto.SearchRequest, emit func(proto.SearchHit) error) (proto.SearchSummary, error) {
	f.mu.Lock()
	after := ""
	if req.After != nil {
		after = fmt.Sprintf(" after %s %d:%d", req.After.AgentID[:8], req.After.Seq, req.After.Line)
	}
	f.record("search %q limit %d%s", req.Query, req.Limit, after)
	var hits []proto.SearchHit
	m := termtext.NewMatcher(req.Query)
	for _, a := range f.agents {
		for seq := 1; seq <= len(a.info.Submissions); seq++ {
			for i, l := range a.lines[seq] {
				if m.Match(termtext.Plain([]byte(l.Text))) {
					hits = append(hits, proto.SearchHit{AgentID: a.info.AgentID, AgentPath: "/root/" + a.info.AgentID[:8], Seq: seq, Line: a.first[seq] + int64(i), Text: l.Text})
				}
			}
		}
	}
	f.mu.Unlock()
	skip := req.After != nil
	var sum proto.SearchSummary
	for _, h := range hits {
		if skip {
			skip = h.At() != *req.After
			continue
		}
		if sum.Hits == req.Limit {
			sum.Truncated = true
			break
		}
		sum.Hits++
		if err := emit(h); err != nil {
			return sum, err
		}
	}
	return sum, ctx.Err()
}

func searchHost() *fakeSup {
	f := threeAgents()
	f.cfg.Features = []string{proto.FeatureSearch}
	return f
}

// S searches every agent: the hits are grouped by agent and submission,
// enter shows the hit in its agent's log with the match highlighted.
func TestSearchAcrossAgentsJumps(t *testing.T) {
	f := searchHost()
	f.print(idC, 1, "unsafe pointer in TestFlaky")
	f.print(idB, 1, "no Unsafe here", "one unsafe line")
	h := newHarness(t, f, 200, 30)
	h.keys("S")
	h.wantScreen("search every agent › ")
	h.typeText("unsafe")
	h.keys("enter")
	h.wantScreen("search “unsafe” · 3 hits in 2 agents")
	h.wantScreen("/root/7b9e4c21 · 7b9e4c21 · #1")
	h.wantScreen("/root/c0ffee42 · c0ffee42 · #1")
	h.wantScreen("›      2  no Unsafe here")
	h.keys("j", "j", "enter")
	h.noScreen("search “unsafe”")
	h.wantScreen("c0ffee42 · #1/1")
	h.wantScreen("/unsafe 1/1")
	h.wantScreen("\x1b[1;4;7munsafe\x1b[m pointer in TestFlaky")
	h.wantCalls(`search "unsafe" limit 50`)
	// enter alone shows the last results again
	h.keys("S", "enter")
	h.wantScreen("search “unsafe” · 3 hits")
	h.keys("esc")
	h.noScreen("search “unsafe”")
}

func TestSearchAcrossAgentsNoHitAndOldHost(t *testing.T) {
	h := newHarness(t, searchHost(), 200, 30)
	h.keys("S")
	h.typeText("nowhere")
	h.keys("enter")
	h.wantScreen("no agent's output holds “nowhere”")
	h.wantScreen("0 hits in 0 agents")

	old := newHarness(t, threeAgents(), 200, 30)
	old.keys("S")
	old.wantScreen("this host does not search across agents")
	old.noScreen("search every agent ›")
}

// The results fetch a page at a time: the next page only when the cursor
// comes near the end, resuming after the last hit shown.
func TestSearchAcrossAgentsPages(t *testing.T) {
	f := searchHost()
	for i := 0; i < 200; i++ {
		f.print(idB, 1, fmt.Sprintf("match %d", i))
	}
	h := newHarness(t, f, 200, 20)
	h.keys("S")
	h.typeText("match")
	h.keys("enter")
	h.wantScreen("search “match” · 30 hits+ (more below)")
	if got := strings.Join(f.Calls(), "\n"); strings.Contains(got, "after") {
		t.Fatalf("a page was fetched before it was wanted:\n%s", got)
	}
	for i := 0; i < 20; i++ {
		h.keys("j")
	}
	h.wantCalls(`search "match" limit 30`, `search "match" limit 30 after 7b9e4c21 1:30`)
	h.wantScreen("search “match” · 60 hits+")
	h.keys("G")
	h.keys("G", "G", "G", "G", "G")
	h.wantScreen("search “match” · 200 hits in 1 agent")
}
