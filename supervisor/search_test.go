package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
)

// searchAll runs SearchAgents and returns the hits as "short id seq:line
// text" and the summary.
func searchAll(t *testing.T, s *Supervisor, req proto.SearchRequest) ([]string, proto.SearchSummary) {
	t.Helper()
	var hits []string
	sum, err := s.SearchAgents(context.Background(), req, func(h proto.SearchHit) error {
		hits = append(hits, fmt.Sprintf("%s %d:%d %s", h.AgentID[:8], h.Seq, h.Line, h.Text))
		return nil
	})
	if err != nil {
		t.Fatalf("search %+v: %v", req, err)
	}
	return hits, sum
}

// An audit agent prints a report; the search finds the word one of them
// printed, coloured inside the word, in each agent and submission, and
// again after the host restarted.
func TestSearchAcrossAgents(t *testing.T) {
	const command = `read m; echo "task $m"; printf 'report: %s\n' "$m" | sed 's/unsafe/un\x1b[31msafe\x1b[0m/'; echo done`
	start, _ := hostOf(t, command)
	s1 := start()
	a, b, c := spawn(t, s1, "alpha"), spawn(t, s1, "beta unsafe"), spawn(t, s1, "gamma")
	for _, id := range []string{a, b, c} {
		waitFinal(t, s1, id)
	}
	if _, err := s1.Send(context.Background(), a, "UNSAFE again", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s1, a)
	want := []string{
		a[:8] + " 2:0 task UNSAFE again", a[:8] + " 2:1 report: UNSAFE again",
		b[:8] + " 1:0 task beta unsafe", b[:8] + " 1:1 report: beta unsafe",
	}
	hits, sum := searchAll(t, s1, proto.SearchRequest{Query: "unsafe"})
	if strings.Join(hits, "\n") != strings.Join(want, "\n") || sum.Hits != 4 || sum.Truncated {
		t.Fatalf("hits:\n%s\nsummary %+v\nwant:\n%s", strings.Join(hits, "\n"), sum, strings.Join(want, "\n"))
	}
	if hits, _ := searchAll(t, s1, proto.SearchRequest{Query: "Unsafe"}); len(hits) != 0 {
		t.Errorf("an upper-case query ignored case: %v", hits)
	}
	// a page at a time, resuming after the last hit shown
	page, sum := searchAll(t, s1, proto.SearchRequest{Query: "unsafe", Limit: 3})
	if len(page) != 3 || !sum.Truncated {
		t.Fatalf("limit 3: %v %+v", page, sum)
	}
	rest, sum := searchAll(t, s1, proto.SearchRequest{Query: "unsafe", After: &proto.SearchHitAt{AgentID: b, Seq: 1, Line: 0}})
	if len(rest) != 1 || rest[0] != want[3] || sum.Truncated {
		t.Fatalf("after %s 1:0: %v %+v", b[:8], rest, sum)
	}
	if hits, _ := searchAll(t, s1, proto.SearchRequest{Query: `report: \w+ unsafe$`, Regex: true}); len(hits) != 1 || hits[0] != want[3] {
		t.Errorf("regex: %v", hits)
	}
	if hits, _ := searchAll(t, s1, proto.SearchRequest{Query: "unsafe", Agent: b}); len(hits) != 2 {
		t.Errorf("--agent %s: %v", b[:8], hits)
	}
	if hits, sum := searchAll(t, s1, proto.SearchRequest{Query: "nowhere"}); len(hits) != 0 || sum.Hits != 0 {
		t.Errorf("no hit: %v %+v", hits, sum)
	}
	shutdownNow(t, s1)

	s2 := start()
	if hits, _ := searchAll(t, s2, proto.SearchRequest{Query: "unsafe"}); strings.Join(hits, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after a restart:\n%s", strings.Join(hits, "\n"))
	}
	if _, err := s2.Forget(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if hits, _ := searchAll(t, s2, proto.SearchRequest{Query: "beta"}); len(hits) != 0 {
		t.Errorf("a forgotten agent was searched: %v", hits)
	}
}

func TestSearchErrors(t *testing.T) {
	s := newTestSupervisor(t, "echo hi")
	_, err := s.SearchAgents(context.Background(), proto.SearchRequest{Query: "(", Regex: true}, func(proto.SearchHit) error { return nil })
	if proto.CodeOf(err) != proto.CodeInvalid || !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("bad regex: %v", err)
	}
	_, err = s.SearchAgents(context.Background(), proto.SearchRequest{Query: "x", Agent: "nobody"}, func(proto.SearchHit) error { return nil })
	if proto.CodeOf(err) != proto.CodeNotFound {
		t.Errorf("unknown agent: %v", err)
	}
	id := spawn(t, s, "x")
	waitFinal(t, s, id)
	stop := errors.New("the viewer went")
	_, err = s.SearchAgents(context.Background(), proto.SearchRequest{Query: "hi"}, func(proto.SearchHit) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("emit's error: %v", err)
	}
}

// A log the cap cut is searched up to its marker and from it on; the
// hits' line numbers are those of the submission read back (the marker a
// line of its own), after a restart too.
func TestSearchACappedLog(t *testing.T) {
	const capBytes = 1 << 20
	start, _ := hostOf(t, `echo first-needle; `+flood+`; echo last-needle`)
	s := start(func(c *Config) { c.MaxLogSize = capBytes })
	id := spawn(t, s, "go")
	waitFinal(t, s, id)
	shutdownNow(t, s)
	s2 := start(func(c *Config) { c.MaxLogSize = capBytes })
	for _, q := range []string{"needle", "dropped here by --max-log-size", "line 00099999"} {
		var hits []proto.SearchHit
		if _, err := s2.SearchAgents(context.Background(), proto.SearchRequest{Query: q}, func(h proto.SearchHit) error {
			hits = append(hits, h)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"needle": 2, "dropped here by --max-log-size": 1, "line 00099999": 1}[q]
		if len(hits) != want {
			t.Fatalf("%q: %d hits, want %d: %+v", q, len(hits), want, hits)
		}
		for _, h := range hits {
			w, err := s2.Window(context.Background(), id, 1, h.Line, 1)
			if err == nil && h.Line < w.First && h.Text == "first-needle" {
				continue // older than the scrollback read back holds
			}
			if err != nil || len(w.Lines) != 1 || termtext.Plain([]byte(w.Lines[0].Text)) != h.Text {
				t.Errorf("%q: hit at line %d %q, the read-back line there: %+v %v", q, h.Line, h.Text, w.Lines, err)
			}
		}
	}
}

// TestSearchTranscriptAsShown: an agent of a structured preset is searched
// in the lines its transcript view shows, by the search across agents as
// by the log search: a tool result is not found by the summary of its call
// it does not show, "✓ result" is found, and a hit's text is its line.
func TestSearchTranscriptAsShown(t *testing.T) {
	s, _ := presetSupervisor(t, "claude")
	id := spawn(t, s, "tool use please")
	waitFinal(t, s, id)
	for _, c := range []struct{ query, want string }{
		{"uname", id[:8] + " 1:2 ⚙ Bash  echo hello-from-tool > tool_out.txt; uname -s"},
		{"Bash echo", ""},
		{"↳ linux", id[:8] + " 1:3   ↳ Linux"},
		{"result ·", id[:8] + " 1:5 ✓ result · 38.3k in / 89 out tokens · $0.1937 · 0.4s"},
	} {
		hits, _ := searchAll(t, s, proto.SearchRequest{Query: c.query})
		if got := strings.Join(hits, "\n"); got != c.want {
			t.Errorf("search across agents for %q: %q, want %q", c.query, got, c.want)
		}
		res, err := s.Search(t.Context(), id, 0, true, c.query, 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(len(c.want), 1); len(res.Matches) != want {
			t.Errorf("log search for %q: matches %v, want %d", c.query, res.Matches, want)
		}
	}
}
