package builtin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/proto"
)

// fakeHost is a Delegate that runs each child's task with this package's
// own agent (the real audit of its folder) when Wait asks for it, at most
// limit children at once; ended says how each ends (by its message).
type fakeHost struct {
	t       *testing.T
	dir     string
	limit   int
	spawned []proto.SpawnRequest
	running []proto.SpawnResult
	ended   map[string]proto.WaitDetail // a child's end instead of its audit, by message
	waits   int
}

func (h *fakeHost) SpawnAgent(_ context.Context, req proto.SpawnRequest) (proto.SpawnResult, error) {
	if len(h.running) >= h.limit {
		return proto.SpawnResult{}, &proto.Error{Code: proto.CodeLimit, Message: "subagent concurrency limit reached"}
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
	return res, nil
}

// Wait ends the oldest running child.
func (h *fakeHost) Wait(_ context.Context, ids []string, ms *int) (proto.WaitResult, error) {
	h.waits++
	if len(h.running) == 0 || ms == nil || *ms < proto.MinWaitTimeoutMS {
		h.t.Fatalf("wait(%v, %v) with %d running", ids, ms, len(h.running))
	}
	c := h.running[0]
	h.running = h.running[1:]
	d, ok := h.ended[c.LastMessage]
	if !ok {
		r := runAgent(context.Background(), h.dir, c.LastMessage)
		out := r.stdout
		d = proto.WaitDetail{Status: proto.StatusCompleted, LastOutput: &out}
	}
	return proto.WaitResult{Status: map[string]proto.Status{c.AgentID: d.Status}, Details: map[string]proto.WaitDetail{c.AgentID: d}}, nil
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
	for _, limit := range []int{8, 1} {
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
			if limit == 1 { // b waits for a's slot
				lines = []string{"→ spawned /root/me/a: audit a", "✓ /root/me/a: scanned 2 files in a", "→ spawned /root/me/b: audit b", "scanned 2 files directly in . myself"}
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

func TestSplitReportsAChildThatFailed(t *testing.T) {
	dir := newSplitTree(t)
	msg := "interrupted"
	h := &fakeHost{t: t, dir: dir, limit: 8, ended: map[string]proto.WaitDetail{
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
		{"no slot and no child of its own", "split .", &fakeHost{t: t, dir: dir, limit: 0}, "cannot spawn a child to audit a: subagent concurrency limit reached"},
		{"a file", "split top.md", &fakeHost{t: t, dir: dir, limit: 8}, "split takes a folder, and top.md is a file: audit it instead"},
		{"a missing path", "split nowhere", &fakeHost{t: t, dir: dir, limit: 8}, "path not found: nowhere"},
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
	h := &fakeHost{t: t, dir: dir, limit: 8}
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
