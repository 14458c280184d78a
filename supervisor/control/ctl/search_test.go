package ctl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// ctl search prints one hit a JSON line, then the summary; a viewer's
// Remote gets the same hits over the socket; a bad regular expression is
// a usage error.
func TestCtlSearch(t *testing.T) {
	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(4))
	srv, c := controlkit.Serve(t, s)
	env := map[string]string{"SUBDASH_SOCKET": srv.Path()}
	var ids []string
	for _, m := range []string{"audit one", "audit two: unsafe found", "audit three"} {
		res, err := c.Spawn(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		controlkit.WaitFinal(t, c, res.AgentID)
		ids = append(ids, res.AgentID)
	}
	code, out, errOut := runCtl(t, env, "", "search", "UNSAFE")
	if code != ExitOK || out != `{"hits":0,"truncated":false}`+"\n" {
		t.Fatalf("an upper-case query: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCtl(t, env, "", "search", "unsafe")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != ExitOK || len(lines) != 2 {
		t.Fatalf("search: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var hit map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &hit); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"agent_id": ids[1], "agent_path": "/root/" + ids[1][:8], "seq": 1.0, "line": 0.0, "text": "got: audit two: unsafe found"}
	if len(hit) != len(want) {
		t.Errorf("hit fields %v, want exactly %v", hit, want)
	}
	for k, v := range want {
		if hit[k] != v {
			t.Errorf("hit %s = %v, want %v", k, hit[k], v)
		}
	}
	if lines[1] != `{"hits":1,"truncated":false}` {
		t.Errorf("summary %q", lines[1])
	}
	code, out, _ = runCtl(t, env, "", "search", "audit", "--limit", "2")
	if code != ExitOK || !strings.HasSuffix(out, `{"hits":2,"truncated":true}`+"\n") || strings.Count(out, "\n") != 3 {
		t.Errorf("--limit 2: exit %d, stdout %q", code, out)
	}
	code, out, _ = runCtl(t, env, "", "search", "audit", "--agent", ids[2][:8])
	if code != ExitOK || !strings.Contains(out, ids[2]) || strings.Contains(out, ids[0]) {
		t.Errorf("--agent: exit %d, stdout %q", code, out)
	}
	code, out, errOut = runCtl(t, env, "", "search", "(unsafe", "--regex")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, `search: bad regular expression "(unsafe": missing closing )`) {
		t.Errorf("bad regex: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runCtl(t, env, "", "search", "x", "--agent", "nobody")
	if code != ExitError || errOut != "search failed: agent not found: nobody\n" {
		t.Errorf("unknown agent: exit %d, stderr %q", code, errOut)
	}

	var got []proto.SearchHit
	sum, err := c.SearchAgents(context.Background(), proto.SearchRequest{Query: "audit", After: &proto.SearchHitAt{AgentID: ids[0], Seq: 1, Line: 0}}, func(h proto.SearchHit) error {
		got = append(got, h)
		return nil
	})
	if err != nil || sum.Hits != 2 || len(got) != 2 || got[0].AgentID != ids[1] {
		t.Errorf("a page after the first hit: %+v %v %v", got, sum, err)
	}
}
