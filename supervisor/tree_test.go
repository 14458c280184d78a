package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// as returns a context whose caller is the submission of agent id (what
// the control socket finds from the calling process).
func as(ctx context.Context, id string) context.Context {
	return proto.WithCaller(ctx, proto.Caller{AgentID: id})
}

// spawnNamed spawns an agent named name under parent ("" for the root) or
// fails the test; it returns the new agent's summary.
func spawnNamed(t *testing.T, s *Supervisor, parent, name, msg string) proto.Summary {
	t.Helper()
	res, err := s.SpawnAgent(as(t.Context(), parent), proto.SpawnRequest{Message: msg, TaskName: name})
	if err != nil {
		t.Fatalf("spawn %s under %q: %v", name, parent, err)
	}
	return res.Summary
}

// TestTreeNamesAndPaths: a task name ends the agent's path, its short id
// when there is none; a spawn from inside a submission is that agent's
// child; siblings are unique (case-sensitive), a bad name and the depth
// limit are Memo's errors, and a refused spawn leaves no agent.
func TestTreeNamesAndPaths(t *testing.T) {
	s := newTestSupervisor(t, script, func(c *Config) { c.MaxDepth = 2; c.MaxAgents = 8 })
	review := spawnNamed(t, s, "", "review", "sleep")
	if review.AgentPath != "/root/review" || review.TaskName != "review" || review.ParentID != "" {
		t.Fatalf("review: %+v", review)
	}
	plain := spawnNamed(t, s, "", "", "sleep")
	if plain.AgentPath != "/root/"+plain.AgentID[:8] || plain.TaskName != "" {
		t.Fatalf("no name: path %q name %q", plain.AgentPath, plain.TaskName)
	}
	tests := spawnNamed(t, s, review.AgentID, " tests ", "sleep")
	if tests.AgentPath != "/root/review/tests" || tests.ParentID != review.AgentID || tests.TaskName != "tests" {
		t.Fatalf("child: %+v", tests)
	}
	if other := spawnNamed(t, s, "", "Review", "ok"); other.AgentPath != "/root/Review" {
		t.Fatalf("Review: %q", other.AgentPath)
	}
	n := len(listOf(s))
	for _, c := range []struct{ parent, name, want string }{
		{"", "review", "agent path already exists: /root/review (held by agent " + review.AgentID[:8] + ", running, updated "},
		{"", "bad name", "task_name must contain only letters, numbers, underscores, or hyphens"},
		{"", "-x", "task_name must contain only letters, numbers, underscores, or hyphens"},
		{tests.AgentID, "deeper", "subagent depth limit reached (2)"},
	} {
		_, err := s.SpawnAgent(as(t.Context(), c.parent), proto.SpawnRequest{Message: "ok", TaskName: c.name})
		if !strings.HasPrefix(errText(err), c.want) {
			t.Errorf("spawn %q: %v, want %q", c.name, err, c.want)
		}
	}
	if got := len(listOf(s)); got != n {
		t.Fatalf("refused spawns left agents: %d, want %d", got, n)
	}
	// A path that only a finished agent holds says how to free it.
	ok := spawnNamed(t, s, "", "done", "ok")
	waitFinal(t, s, ok.AgentID)
	_, err := s.SpawnAgent(t.Context(), proto.SpawnRequest{Message: "ok", TaskName: "done"})
	if want := "; free the path with: subdash ctl forget /root/done)"; !strings.HasSuffix(errText(err), want) || proto.CodeOf(err) != proto.CodeExists {
		t.Fatalf("spawn over a finished agent: %v", err)
	}
}

// TestTreeTargets: an agent is named by its id, an absolute path, a path
// relative to the caller, one relative to the root, or an id prefix; two
// agents found are an error naming both.
func TestTreeTargets(t *testing.T) {
	s := newTestSupervisor(t, script, func(c *Config) { c.MaxAgents = 8 })
	a := spawnNamed(t, s, "", "a", "sleep")
	ab := spawnNamed(t, s, a.AgentID, "b", "sleep")
	b := spawnNamed(t, s, "", "b", "ok")
	waitFinal(t, s, b.AgentID)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range []struct {
		caller, target, want string
	}{
		{"", strings.ToUpper(ab.AgentID), ab.AgentID},
		{"", "/root/a/b", ab.AgentID},
		{"", "a/b", ab.AgentID},
		{"", "b", b.AgentID},
		{ab.AgentID, "/root/b", b.AgentID},
		{"", ab.AgentID[:6], ab.AgentID},
	} {
		got, err := s.resolveLocked(proto.Caller{AgentID: c.caller}, c.target)
		if err != nil || got.id != c.want {
			t.Errorf("caller %q target %q: %v %v, want %s", c.caller, c.target, got, err, c.want)
		}
	}
	// From inside a, "b" is both its child and the root's.
	_, err := s.resolveLocked(proto.Caller{AgentID: a.AgentID}, "b")
	want := "target b matches more than one agent: /root/a/b (" + ab.AgentID[:8] + ") and /root/b (" + b.AgentID[:8] + "); give an absolute path or the agent id"
	if errText(err) != want {
		t.Errorf("ambiguous: %v\nwant %s", err, want)
	}
	for _, target := range []string{"/root/nope", "nope"} {
		if _, err := s.resolveLocked(proto.Caller{}, target); errText(err) != "agent not found: "+target {
			t.Errorf("%q: %v", target, err)
		}
	}
	// The root is no agent: ctl says what it is; the multi-agent family
	// keeps Memo's text.
	_, err = s.resolveLocked(proto.Caller{}, "/root")
	if want := "agent not found: /root is the root of the tree, not an agent; name one below it (subdash ctl list --tree)"; errText(err) != want || proto.CodeOf(err) != proto.CodeNotFound {
		t.Errorf("/root: %v, want %s", err, want)
	}
	if _, err := s.resolveLocked(proto.Caller{Exact: true}, "/root"); errText(err) != "agent not found: /root" {
		t.Errorf("/root for an exact caller: %v", err)
	}
	if _, err := s.resolveLocked(proto.Caller{Exact: true}, ab.AgentID[:6]); errText(err) != "agent not found: "+ab.AgentID[:6] {
		t.Errorf("an id prefix for an exact caller: %v", err)
	}
}

// TestAnAgentCannotInterruptItself: a submission that interrupts its own
// agent (subdash ctl interrupt $SUBDASH_AGENT_ID from inside it) gets
// Memo's error and runs on; another agent's interrupt of it works.
func TestAnAgentCannotInterruptItself(t *testing.T) {
	s := newTestSupervisor(t, script, func(c *Config) { c.MaxAgents = 8 })
	a := spawnNamed(t, s, "", "a", "sleep")
	b := spawnNamed(t, s, a.AgentID, "b", "sleep")
	if _, err := s.Interrupt(as(t.Context(), a.AgentID), a.AgentID); errText(err) != "an agent cannot interrupt itself" || proto.CodeOf(err) != proto.CodeInvalid {
		t.Fatalf("self interrupt: %v", err)
	}
	if info, _ := s.Agent(a.AgentID); info.Status != proto.StatusRunning {
		t.Fatalf("a refused interrupt changed the agent: %s", info.Status)
	}
	if _, err := s.Interrupt(as(t.Context(), a.AgentID), b.AgentID); err != nil {
		t.Fatalf("a parent interrupts its child: %v", err)
	}
	if _, err := s.Interrupt(t.Context(), a.AgentID); err != nil {
		t.Fatalf("a person interrupts a: %v", err)
	}
}

// stubborn ignores SIGTERM: a close has to wait its grace period.
const stubborn = `trap '' TERM; read m; case "$m" in ok*) echo "fine $m";; *) sleep 300;; esac`

// TestCloseCascades: closing an agent closes its descendants, journaled
// deepest first, with every process group terminated at once (one grace
// period, not one per level); resume reopens exactly what that close
// closed; interrupt touches only the agent itself.
func TestCloseCascades(t *testing.T) {
	const grace = 2 * time.Second
	s := newTestSupervisor(t, stubborn, func(c *Config) { c.MaxAgents = 8; c.Grace = grace })
	a := spawnNamed(t, s, "", "a", "sleep")
	ab := spawnNamed(t, s, a.AgentID, "b", "sleep")
	abc := spawnNamed(t, s, ab.AgentID, "c", "sleep")
	abd := spawnNamed(t, s, ab.AgentID, "d", "ok")
	waitFinal(t, s, abd.AgentID)
	if _, err := s.Close(t.Context(), abd.AgentID); err != nil { // closed by its own close
		t.Fatal(err)
	}
	// Interrupt of the middle one leaves its parent and child running.
	if _, err := s.Interrupt(t.Context(), "/root/a/b"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]proto.Status{a.AgentID: proto.StatusRunning, ab.AgentID: proto.StatusErrored, abc.AgentID: proto.StatusRunning} {
		if got := summaryOf(t, s, id).Status; got != want {
			t.Fatalf("after interrupting /root/a/b: %s is %s, want %s", id[:8], got, want)
		}
	}
	if _, err := s.Send(t.Context(), ab.AgentID, "sleep again", false); err != nil {
		t.Fatal(err)
	}
	res, err := s.Close(t.Context(), "/root/a")
	if err != nil || res.Status != proto.StatusClosed || !slices.Equal(res.Descendants, []string{abc.AgentID, ab.AgentID}) {
		t.Fatalf("close: %+v %v", res, err)
	}
	// a and abc ignore SIGTERM, so each ends at its SIGKILL: terminated at
	// once, they end together; one level after another (deepest first),
	// a grace period apart or more. (ab's new submission may end at the
	// SIGTERM itself: its shell may not have set its trap yet.)
	end := func(id string) time.Time {
		info, _ := s.Agent(id)
		return info.Submissions[len(info.Submissions)-1].EndedAt
	}
	if spread := end(a.AgentID).Sub(end(abc.AgentID)).Abs(); end(a.AgentID).IsZero() || spread >= grace {
		t.Errorf("/root/a and /root/a/b/c ended %v apart: one grace period (%v) for all, not one per level", spread, grace)
	}
	for _, id := range []string{a.AgentID, ab.AgentID, abc.AgentID, abd.AgentID} {
		if got := summaryOf(t, s, id).Status; got != proto.StatusClosed {
			t.Errorf("%s is %s after the close", id[:8], got)
		}
	}
	var closed []string
	if _, err := journal.Read(filepath.Join(s.RunDir(), "journal.jsonl"), func(ev journal.Event) {
		if ev.Event == "closed" {
			closed = append(closed, ev.AgentID)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{abd.AgentID, abc.AgentID, ab.AgentID, a.AgentID}; !slices.Equal(closed, want) {
		t.Errorf("journal's closes %v, want deepest first %v", closed, want)
	}
	res, err = s.Resume(t.Context(), a.AgentID)
	if err != nil || !slices.Equal(res.Descendants, []string{ab.AgentID, abc.AgentID}) {
		t.Fatalf("resume: %+v %v", res, err)
	}
	for id, want := range map[string]proto.Status{a.AgentID: proto.StatusErrored, ab.AgentID: proto.StatusErrored,
		abc.AgentID: proto.StatusErrored, abd.AgentID: proto.StatusClosed} {
		if got := summaryOf(t, s, id).Status; got != want {
			t.Errorf("after resume: %s is %s, want %s", id[:8], got, want)
		}
	}
}

// TestForgetTakesAFinishedSubtree: forget refuses a subtree in which an
// agent runs, and otherwise forgets it whole, freeing its paths.
func TestForgetTakesAFinishedSubtree(t *testing.T) {
	s := newTestSupervisor(t, script, func(c *Config) { c.MaxAgents = 8 })
	a := spawnNamed(t, s, "", "a", "ok")
	ab := spawnNamed(t, s, a.AgentID, "b", "sleep")
	waitFinal(t, s, a.AgentID)
	if _, err := s.Forget(t.Context(), "/root/a"); errText(err) != "agent "+ab.AgentID+" is running; interrupt or close it before forgetting it" {
		t.Fatalf("forget with a running child: %v", err)
	}
	if _, err := s.Interrupt(t.Context(), ab.AgentID); err != nil {
		t.Fatal(err)
	}
	res, err := s.Forget(t.Context(), "a")
	if err != nil || !slices.Equal(res.Descendants, []string{ab.AgentID}) || len(listOf(s)) != 0 {
		t.Fatalf("forget: %+v %v; %d agents left", res, err, len(listOf(s)))
	}
	if again := spawnNamed(t, s, "", "a", "ok"); again.AgentPath != "/root/a" {
		t.Fatalf("the path is not free: %q", again.AgentPath)
	}
}

// wantPlace fails the test unless wait's detail d places its agent in the
// tree as named, path and parent say, on the wire too (SPEC §14).
func wantPlace(t *testing.T, d proto.WaitDetail, name, path, parent string) {
	t.Helper()
	b, err := json.Marshal(d)
	want := fmt.Sprintf(`"task_name":%q,"agent_path":%q,"parent_id":%q}`, name, path, parent)
	if err != nil || !strings.HasSuffix(string(b), want) {
		t.Fatalf("wait detail %s %v, want it to end %s", b, err, want)
	}
}

// TestTreeSurvivesARestart: names, paths, parents and queued messages are
// restored; a restored agent keeps its path, a spawn that meets it names
// it and how to free the path, and forgetting it frees the path.
func TestTreeSurvivesARestart(t *testing.T) {
	start, _ := hostOf(t, script)
	s := start()
	a := spawnNamed(t, s, "", "a", "sleep")
	ab := spawnNamed(t, s, a.AgentID, "b", "ok")
	wantPlace(t, waitFinal(t, s, ab.AgentID), "b", "/root/a/b", a.AgentID)
	for _, m := range []string{"ok first", "ok second"} {
		if _, err := s.Queue(t.Context(), a.AgentID, m); err != nil {
			t.Fatal(err)
		}
	}
	shutdownNow(t, s)

	s = start()
	got := map[string]proto.Summary{}
	for _, sum := range listOf(s) {
		got[sum.AgentID] = sum
	}
	if r := got[a.AgentID]; r.AgentPath != "/root/a" || r.TaskName != "a" || !slices.Equal(r.QueuedMessages, []string{"ok first", "ok second"}) {
		t.Fatalf("restored a: %+v", r)
	}
	if r := got[ab.AgentID]; r.AgentPath != "/root/a/b" || r.ParentID != a.AgentID {
		t.Fatalf("restored b: %+v", r)
	}
	wantPlace(t, waitFinal(t, s, "/root/a/b"), "b", "/root/a/b", a.AgentID)
	if notes := strings.Join(s.Config().Notes, "\n"); strings.Contains(notes, "were not run") {
		t.Errorf("a host that shut down ran its queue's end itself; notes: %s", notes)
	}
	_, err := s.SpawnAgent(t.Context(), proto.SpawnRequest{Message: "ok", TaskName: "a"})
	want := "agent path already exists: /root/a (held by agent " + a.AgentID[:8] + ", errored, restored from an earlier run, updated "
	if !strings.HasPrefix(errText(err), want) || !strings.HasSuffix(errText(err), "; free the path with: subdash ctl forget /root/a)") {
		t.Fatalf("spawn over a restored agent: %v", err)
	}
	// The next submission takes its mailbox first, in order: the end of
	// its child, which no wait took, and the queued messages.
	if _, err := s.Send(t.Context(), "/root/a", "ok now", false); err != nil {
		t.Fatal(err)
	}
	want = proto.FormatEnd("/root/a/b", proto.TreeCompleted, "fine ok") + "\n\nok first\n\nok second\n\nok now"
	if m, err := s.Message(t.Context(), a.AgentID, 0); err != nil || m != want {
		t.Fatalf("the next submission's message: %q %v\nwant %q", m, err, want)
	}
	if _, err := s.Interrupt(t.Context(), a.AgentID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Forget(t.Context(), "/root/a"); err != nil {
		t.Fatal(err)
	}
	if again := spawnNamed(t, s, "", "a", "ok"); again.AgentPath != "/root/a" {
		t.Fatalf("after forget: %q", again.AgentPath)
	}
	// The held messages' files went with the submission that took them.
	left, _ := filepath.Glob(filepath.Join(s.Config().StateDir, "runs", "*", "*", "mail-*.msg"))
	if len(left) != 0 {
		t.Errorf("message files left: %v", left)
	}
}
