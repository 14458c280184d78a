package builtin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// fakeHost is a Delegate that runs each child's task with this package's
// own agent (the real audit of its folder) when it ends, at most limit
// agents at once: the split itself (one), the other agents running
// (others) and its children. A child ends when Wait asks for it, or when
// the split watches the host's events while nothing else could free a
// slot; an other agent ends first when the split watches them. ended says
// how a child ends (by its message) instead of its audit. closing are
// agents that are closed while their processes still end: listed closed,
// they hold a slot until the first watch.
type fakeHost struct {
	t       *testing.T
	dir     string
	limit   int
	others  []string
	closing []string
	spawned []proto.SpawnRequest
	running []proto.SpawnResult
	ended   map[string]proto.WaitDetail // a child's end instead of its audit, by message
	done    map[string]proto.WaitDetail // children that ended, by id, until a wait took them
	refused int                         // spawns refused at the limit
	waits   int
	changes int // the host's clock: each change of an agent is one tick later
	updated map[string]int
}

func (h *fakeHost) SpawnAgent(_ context.Context, req proto.SpawnRequest) (proto.SpawnResult, error) {
	if 1+len(h.others)+len(h.closing)+len(h.running) >= h.limit {
		h.refused++
		return proto.SpawnResult{}, &proto.Error{Code: proto.CodeLimit, Message: fmt.Sprintf("subagent concurrency limit reached (%d)", h.limit)}
	}
	for _, s := range h.spawned {
		if s.TaskName == req.TaskName {
			return proto.SpawnResult{}, &proto.Error{Code: proto.CodeExists, Message: "agent path already exists: /root/me/" + req.TaskName}
		}
	}
	h.spawned = append(h.spawned, req)
	var res proto.SpawnResult
	res.AgentID = fmt.Sprintf("id-%d", len(h.spawned))
	res.AgentPath = "/root/me/" + req.TaskName
	res.LastMessage = req.Message
	h.running = append(h.running, res)
	h.touch(res.AgentID)
	return res, nil
}

// touch records a change of agent id.
func (h *fakeHost) touch(id string) {
	if h.updated == nil {
		h.updated = map[string]int{}
	}
	h.changes++
	h.updated[id] = h.changes
}

// endChild ends the oldest running child.
func (h *fakeHost) endChild() proto.SpawnResult {
	c := h.running[0]
	h.running = h.running[1:]
	d, ok := h.ended[c.LastMessage]
	if !ok {
		r := runAgent(context.Background(), h.dir, c.LastMessage)
		out := r.stdout
		d = proto.WaitDetail{Status: proto.StatusCompleted, LastOutput: &out}
	}
	if h.done == nil {
		h.done = map[string]proto.WaitDetail{}
	}
	h.done[c.AgentID] = d
	h.touch(c.AgentID)
	return c
}

// Wait returns the children among ids that ended, or ends the oldest
// running one.
func (h *fakeHost) Wait(_ context.Context, ids []string, ms *int) (proto.WaitResult, error) {
	h.waits++
	if ms == nil || *ms < proto.MinWaitTimeoutMS {
		h.t.Fatalf("wait(%v, %v)", ids, ms)
	}
	res := proto.WaitResult{Status: map[string]proto.Status{}, Details: map[string]proto.WaitDetail{}}
	for _, id := range ids {
		if d, ok := h.done[id]; ok {
			res.Status[id], res.Details[id] = d.Status, d
			delete(h.done, id)
		}
	}
	if len(res.Status) == 0 {
		if len(h.running) == 0 {
			h.t.Fatalf("wait(%v) with no child running", ids)
		}
		return h.Wait(context.Background(), []string{h.endChild().AgentID}, ms)
	}
	return res, nil
}

// Info is the host's limit.
func (h *fakeHost) Info(context.Context) (proto.Info, error) {
	return proto.Info{MaxAgents: h.limit}, nil
}

// List lists the split, the others, the closing agents and the children.
func (h *fakeHost) List(context.Context) (proto.ListResult, error) {
	var ls proto.ListResult
	add := func(id string, st proto.Status) {
		at := proto.Time{Time: time.Unix(int64(h.updated[id]), 0)}
		ls.Agents = append(ls.Agents, proto.Summary{AgentID: id, Status: st, UpdatedAt: at})
	}
	add("me", proto.StatusRunning)
	for _, id := range h.others {
		add(id, proto.StatusRunning)
	}
	for _, id := range h.closing {
		add(id, proto.StatusClosed)
	}
	for _, c := range h.running {
		add(c.AgentID, proto.StatusRunning)
	}
	for id, d := range h.done {
		add(id, d.Status)
	}
	return ls, nil
}

// Events sends every agent's summary, then ends what holds a slot, one at
// a time, and sends its change: a closing agent, an other, a child.
func (h *fakeHost) Events(ctx context.Context, fn func(proto.Summary) error) error {
	ls, _ := h.List(ctx)
	for _, a := range ls.Agents {
		if err := fn(a); err != nil {
			return err
		}
	}
	for {
		var id string
		st := proto.StatusCompleted
		switch {
		case len(h.closing) > 0:
			id, h.closing, st = h.closing[0], h.closing[1:], proto.StatusClosed
			h.touch(id)
		case len(h.others) > 0:
			id, h.others = h.others[0], h.others[1:]
			h.touch(id)
		case len(h.running) > 0:
			id = h.endChild().AgentID
			st = h.done[id].Status
		default:
			h.t.Fatal("the split watches for a slot, and nothing holds one")
		}
		if err := fn(proto.Summary{AgentID: id, Status: st, UpdatedAt: proto.Time{Time: time.Unix(int64(h.updated[id]), 0)}}); err != nil {
			return err
		}
	}
}

// newSplitTree makes a repository with two folders to delegate (a, b), one
// ignored (build), one hidden behind a link, .git, and a file of its own.
func newSplitTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".git/HEAD":     "TODO: never listed\n",
		".gitignore":    "build/\n",
		"a/one.go":      "// TODO: one\n// TODO: two\n",
		"a/deep/x.go":   "// XXX: deep\n",
		"b/two.py":      "# FIXME: b\n",
		"build/out.txt": "TODO: ignored\n",
		"top.md":        "HACK: the folder's own\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o644))
	}
	must(t, os.Symlink("a", filepath.Join(dir, "link-to-a")))
	return dir
}

func runSplit(t *testing.T, dir string, h Delegate, message string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	status := RunDelegating(context.Background(), strings.NewReader(message), &stdout, &stderr, dir, nil, h)
	return result{status, stdout.String(), stderr.String()}
}

func TestSplitDelegatesEachSubfolderAndAuditsItsOwnFiles(t *testing.T) {
	for _, limit := range []int{9, 2} { // the split holds one slot itself
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			dir := newSplitTree(t)
			h := &fakeHost{t: t, dir: dir, limit: limit}
			r := runSplit(t, dir, h, "split .")
			if r.status != StatusOK || r.stderr != "" {
				t.Fatalf("status %d, stderr %q, stdout:\n%s", r.status, r.stderr, r.stdout)
			}
			want := []proto.SpawnRequest{{Message: "audit a", TaskName: "a"}, {Message: "audit b", TaskName: "b"}}
			if fmt.Sprint(h.spawned) != fmt.Sprint(want) {
				t.Fatalf("spawned %v, want %v (not build, .git nor the link)", h.spawned, want)
			}
			lines := []string{
				"→ spawned /root/me/a: audit a",
				"top.md:1: HACK: the folder's own",
				"scanned 2 files directly in . myself",
				"✓ /root/me/a: scanned 2 files in a",
				"✓ /root/me/b: scanned 1 file in b",
				"TODO: 2, FIXME: 1, XXX: 1, HACK: 1 in . (2 child agents and my own files)",
			}
			if limit == 2 { // b waits for a's slot
				lines = []string{"→ spawned /root/me/a: audit a", "waiting for a slot: 2/2 running", "✓ /root/me/a: scanned 2 files in a",
					"→ spawned /root/me/b: audit b", "scanned 2 files directly in . myself"}
			}
			at := 0
			for _, l := range lines {
				i := strings.Index(r.stdout[at:], l)
				if i < 0 {
					t.Fatalf("stdout lacks %q after byte %d:\n%s", l, at, r.stdout)
				}
				at += i + len(l)
			}
			if !strings.HasSuffix(r.stdout, "TODO: 2, FIXME: 1, XXX: 1, HACK: 1 in . (2 child agents and my own files)\n") {
				t.Fatalf("the totals are not the last line:\n%s", r.stdout)
			}
		})
	}
}

// TestSplitWaitsForAnySlotOfTheHost: at the host's limit the split says
// that it waits, with how full the host is, and spawns the next child as
// soon as any agent frees a slot, not only one of its own; every folder
// is audited. A slot the list shows free while the host still counts it
// (a closed agent's processes ending) is waited for, not asked for in a
// loop.
func TestSplitWaitsForAnySlotOfTheHost(t *testing.T) {
	for _, tt := range []struct {
		name    string
		h       fakeHost
		lines   []string
		refused int // at most
	}{
		{"one other at 2", fakeHost{limit: 2, others: []string{"other"}}, []string{
			"waiting for a slot: 2/2 running", "→ spawned /root/me/a: audit a",
			"waiting for a slot: 2/2 running", "✓ /root/me/a: scanned 2 files in a", "→ spawned /root/me/b: audit b",
			"✓ /root/me/b: scanned 1 file in b"}, 2},
		{"two others at 4", fakeHost{limit: 4, others: []string{"other-1", "other-2"}}, []string{
			"→ spawned /root/me/a: audit a", "waiting for a slot: 4/4 running", "→ spawned /root/me/b: audit b",
			"✓ /root/me/a: scanned 2 files in a", "✓ /root/me/b: scanned 1 file in b"}, 1},
		{"a closed agent still ending", fakeHost{limit: 2, closing: []string{"closed"}}, []string{
			"waiting for a slot: 2/2 running", "→ spawned /root/me/a: audit a",
			"waiting for a slot: 2/2 running", "✓ /root/me/a: scanned 2 files in a", "→ spawned /root/me/b: audit b"}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := newSplitTree(t)
			h := &tt.h
			h.t, h.dir = t, dir
			r := runSplit(t, dir, h, "split .")
			if r.status != StatusOK || r.stderr != "" {
				t.Fatalf("status %d, stderr %q, stdout:\n%s", r.status, r.stderr, r.stdout)
			}
			at := 0
			for _, l := range tt.lines {
				i := strings.Index(r.stdout[at:], l)
				if i < 0 {
					t.Fatalf("stdout lacks %q after byte %d:\n%s", l, at, r.stdout)
				}
				at += i + len(l)
			}
			if n := strings.Count(r.stdout, "waiting for a slot"); n != strings.Count(strings.Join(tt.lines, "\n"), "waiting for a slot") {
				t.Fatalf("said %d times that it waits:\n%s", n, r.stdout)
			}
			if !strings.HasSuffix(r.stdout, "TODO: 2, FIXME: 1, XXX: 1, HACK: 1 in . (2 child agents and my own files)\n") {
				t.Fatalf("not every folder audited:\n%s", r.stdout)
			}
			if h.refused > tt.refused {
				t.Fatalf("the host refused %d spawns, want at most %d: it asked again without a change", h.refused, tt.refused)
			}
		})
	}
}

func TestSplitReportsAChildThatFailed(t *testing.T) {
	dir := newSplitTree(t)
	msg := "interrupted"
	h := &fakeHost{t: t, dir: dir, limit: 9, ended: map[string]proto.WaitDetail{
		"audit b": {Status: proto.StatusErrored, LastError: &msg},
	}}
	r := runSplit(t, dir, h, "fan out over .")
	if r.status != StatusError {
		t.Fatalf("status %d, want %d:\n%s", r.status, StatusError, r.stdout)
	}
	if !strings.Contains(r.stdout, "✗ /root/me/b errored: interrupted") || !strings.Contains(r.stdout, "✓ /root/me/a:") {
		t.Fatalf("stdout does not say how each child ended:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "1 of 2 child agents did not complete") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

func TestSplitRefusals(t *testing.T) {
	dir := newSplitTree(t)
	tests := []struct {
		name, message string
		host          Delegate
		want          string
	}{
		{"outside a host", "split .", nil, "SUBDASH_SOCKET is not set: run it as an agent of a host started with --allow-nested"},
		{"in a pod", "split .", NoHostOn("kubernetes"), "split spawns child agents through its host's control socket, which a submission on the kubernetes runner cannot reach (a Unix socket on the host's machine): audit the folder with audit PATH, or run the host with --runner local and --allow-nested"},
		{"a host of one slot", "split .", &fakeHost{t: t, dir: dir, limit: 1}, "cannot spawn a child to audit a: the host runs at most 1 agent at once (--max-agents 1), and this split is one; raise --max-agents, or audit the folder with audit PATH"},
		{"a file", "split top.md", &fakeHost{t: t, dir: dir, limit: 9}, "split takes a folder, and top.md is a file: audit it instead"},
		{"a missing path", "split nowhere", &fakeHost{t: t, dir: dir, limit: 9}, "path not found: nowhere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSplit(t, dir, tt.host, tt.message)
			if r.status != StatusError || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("status %d, stderr %q; want %d and %q", r.status, r.stderr, StatusError, tt.want)
			}
		})
	}
}

func TestSplitAgainNamesTheChildrenOnwards(t *testing.T) {
	dir := newSplitTree(t)
	h := &fakeHost{t: t, dir: dir, limit: 9}
	for range 2 { // a resend of the split: the first run's children hold a and b
		if r := runSplit(t, dir, h, "split ."); r.status != StatusOK {
			t.Fatalf("status %d, stderr %q", r.status, r.stderr)
		}
	}
	var names []string
	for _, s := range h.spawned {
		names = append(names, s.TaskName)
	}
	if got := strings.Join(names, " "); got != "a b a-2 b-2" {
		t.Fatalf("task names %q, want a b a-2 b-2", got)
	}
}

func TestTaskName(t *testing.T) {
	for folder, want := range map[string]string{
		"control": "control", "v1.2": "v1-2", ".github": "github", "_tmp": "tmp",
		"my dir": "my-dir", "...": "", "é": "", "é-x": "x", "A_b-C": "A_b-C",
	} {
		if got := taskName(folder); got != want {
			t.Errorf("taskName(%q) = %q, want %q", folder, got, want)
		}
	}
}
