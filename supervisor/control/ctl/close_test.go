package ctl

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/subdash/subdash/internal/testkit/controlkit"
	"github.com/subdash/subdash/internal/testkit/hostkit"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/proto"
)

// TestCtlCloseMany: `ctl close --all` and `--status S` close the agents
// they select in one call and print which; wrong combinations are usage
// errors that say what to give.
func TestCtlCloseMany(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"close"}, "close: missing argument: an agent ID, --all or --status S"},
		{[]string{"close", "x", "--all"}, "close: give an agent ID or --all or --status, not both"},
		{[]string{"close", "--all", "--status", "running"}, "close: --all and --status exclude each other"},
		{[]string{"close", "--status", "sleeping"}, `close: close many: no status "sleeping"; give running, completed or errored`},
		{[]string{"close", "--status", "closed"}, "agents of status closed are closed already"},
		{[]string{"close", "a", "b"}, `close: unexpected argument "b"`},
	} {
		code, out, errOut := runCtl(t, nil, "", tc.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("ctl %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}

	s := controlkit.Supervisor(t, hostkit.MaxAgentsOf(4))
	srv, _ := controlkit.Serve(t, s)
	env := map[string]string{"SUBDASH_SOCKET": srv.Path()}
	var ids []string
	for _, msg := range []string{"one", "two"} {
		code, out, errOut := runCtl(t, env, "", "spawn", msg)
		var sp proto.SpawnResult
		if code != ExitOK || json.Unmarshal([]byte(out), &sp) != nil {
			t.Fatalf("spawn: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		ids = append(ids, sp.AgentID)
	}
	for _, id := range ids { // wait answers when one of its ids is final
		if code, out, _ := runCtl(t, env, "", "wait", id, "--timeout-ms", "300000"); code != ExitOK {
			t.Fatalf("wait: exit %d, %s", code, out)
		}
	}
	closeMany := func(args ...string) []string {
		t.Helper()
		code, out, errOut := runCtl(t, env, "", append([]string{"close"}, args...)...)
		var res proto.CloseManyResult
		if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("ctl close %q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		return res.Closed
	}
	for _, id := range ids {
		if st := summaryStatus(t, s, id); st != proto.StatusCompleted {
			t.Fatalf("agent %s is %s before the closes", id, st)
		}
	}
	if got := closeMany("--status", "running"); len(got) != 0 {
		t.Errorf("close --status running closed %v with nothing running", got)
	}
	if got := closeMany("--status", "completed"); !slices.Equal(got, ids) {
		t.Errorf("close --status completed closed %v, want %v", got, ids)
	}
	if got := closeMany("--all"); len(got) != 0 {
		t.Errorf("close --all closed %v with every agent closed", got)
	}
	for _, id := range ids {
		if st := summaryStatus(t, s, id); st != proto.StatusClosed {
			t.Errorf("agent %s is %s after close --status completed", id, st)
		}
	}
}

// summaryStatus is agent id's status in the supervisor's list.
func summaryStatus(t *testing.T, s *supervisor.Supervisor, id string) proto.Status {
	t.Helper()
	res, _ := s.List(t.Context())
	for _, a := range res.Agents {
		if a.AgentID == id {
			return a.Status
		}
	}
	t.Fatalf("agent %s is not listed", id)
	return ""
}
