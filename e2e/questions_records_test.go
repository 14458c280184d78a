package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// TestQuestionsAfterTheHostWasKilled (SPEC §10, §12 "Questions"): serve
// with the claude preset (the stand-in claude of testdata/fakecli) holds
// an agent whose question was answered and one that asks when the host is
// killed with SIGKILL. The next serve shows the answer after the first
// one's question in its transcript; the second one's submission is
// errored, interrupted (host ended), as with a pending approval, and its
// transcript says its question ended with the host; a late answer to
// either is refused saying how it ended.
func TestQuestionsAfterTheHostWasKilled(t *testing.T) {
	w := newWorkspace(t)
	env := []string{"PATH=" + fakeCLIPath() + ":" + os.Getenv("PATH")}
	p1 := serveWith(t, w, env, "--preset", "claude", "--grace", "200ms")
	var sp proto.SpawnResult
	ctlOK(t, w, &sp, "spawn", "askq which database")
	answered := sp.AgentID
	q := questionsViaCtl(t, w, answered)[0]
	ctlOK(t, w, nil, "answer", answered, "--option", "SQLite")
	waitDone(t, w, answered)
	ctlOK(t, w, &sp, "spawn", "askq which database")
	asking := sp.AgentID
	p := questionsViaCtl(t, w, asking)[0]
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p1.wait(t)

	serveWith(t, w, env, "--preset", "claude", "--grace", "200ms")
	if d := waitDone(t, w, asking).Details[asking]; d.Status != proto.StatusErrored || d.LastError == nil || *d.LastError != "interrupted (host ended)" {
		t.Fatalf("the agent that asked when its host was killed: %s %v; want errored, interrupted (host ended)", d.Status, d.LastError)
	}
	hc := hostHTTP(w.socket)
	for _, c := range []struct{ id, rid, how string }{
		{answered, q.RequestID, `answered: "Which DB?"="SQLite"`},
		{asking, p.RequestID, "the host ended before an answer"},
	} {
		var tr wire.TranscriptResult
		if err := hostCall(hc, http.MethodGet, fmt.Sprintf("/v1/agents/%s/transcript?from=0&n=%d", c.id, proto.MaxWindowItems), nil, &tr); err != nil {
			t.Fatal(err)
		}
		after := ""
		for i, e := range tr.Entries {
			if e.Kind == transcript.KindQuestion && e.ID == c.rid && i+1 < len(tr.Entries) && tr.Entries[i+1].Kind == transcript.KindApprovalAnswer {
				after = tr.Entries[i+1].Text
			}
		}
		if after != c.how {
			t.Errorf("restored transcript of agent %s: %q after its question; want %q", c.id[:8], after, c.how)
		}
		r := runCtl(t, nil, "", "answer", c.id, "--request", c.rid, "--option", "Postgres", "--socket", w.socket)
		if want := "is no longer pending (" + c.how + "); nothing was sent"; r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("a late answer to agent %s: exit %d, %q; want it refused saying %q", c.id[:8], r.code, r.stderr, want)
		}
	}
}
