package ui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
)

// WriteChanges writes a diff naming the agent and submission.
func (f *fakeSup) WriteChanges(ctx context.Context, w io.Writer, id string, seq int, color bool) error {
	_, err := fmt.Fprintf(w, "diff of %s #%d color=%v\n", id[:8], seq, color)
	return err
}

// setChanges gives the latest submission of agent id changes c.
func (f *fakeSup) setChanges(id string, c *proto.Changes) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.find(id)
	a.info.Changes = c
	a.info.Submissions[len(a.info.Submissions)-1].Changes = c
}

// The table shows each agent's changes (±0 for an audit that changed
// nothing, * when others ran in the same tree, – when not tracked); D pages
// the diff.
func TestChangesColumnAndDiff(t *testing.T) {
	f := threeAgents()
	f.cfg.Features = []string{proto.FeatureChanges}
	f.setChanges(idA, &proto.Changes{Tracked: true, Pending: true})
	f.setChanges(idB, &proto.Changes{Tracked: true, Files: 2, Added: 12, Removed: 3, Shared: true})
	f.setChanges(idC, &proto.Changes{Note: "changes not tracked: not in a git work tree"})
	h := newHarness(t, f, 200, 30)
	h.wantScreen("± NOW")
	for id, want := range map[string]string{idA: "±?", idB: "+12 −3*", idC: "1 42s              exit 2"} {
		if !strings.Contains(h.row(id), want) {
			t.Errorf("row of %s lacks %q: %q", id[:8], want, h.row(id))
		}
	}
	var opened strings.Builder
	var feed func(context.Context, io.Writer) error
	h.m.opts.Pager = func(fd func(context.Context, io.Writer) error) tea.ExecCommand { feed = fd; return nil }
	h.keys("j", "D")
	if feed == nil || h.execs != 1 {
		t.Fatalf("D opened no pager (%d execs)", h.execs)
	}
	_ = feed(context.Background(), &opened)
	if opened.String() != "diff of 7b9e4c21 #1 color=false\n" {
		t.Fatalf("the pager got %q", opened.String())
	}
	h.keys("j")
	h.wantScreen("c0ffee42 · #1/1 ✗ errored (exit 2) · following · changes not tracked")
	h.keys("D")
	h.wantScreen("changes not tracked: not in a git work tree")
	if h.execs != 1 {
		t.Error("a pager opened for changes not tracked")
	}
}

// D on a submission that changed nothing (±0) says so instead of opening
// an empty pager; while it runs (±?) the pager shows the changes so far.
func TestDiffOfNoChangesSaysSo(t *testing.T) {
	f := threeAgents()
	f.cfg.Features = []string{proto.FeatureChanges}
	f.setChanges(idA, &proto.Changes{Tracked: true, Pending: true})
	f.setChanges(idB, &proto.Changes{Tracked: true, Shared: true})
	h := newHarness(t, f, 160, 30)
	h.m.opts.Pager = func(func(context.Context, io.Writer) error) tea.ExecCommand { return nil }
	h.keys("j")
	if !strings.Contains(h.row(idB), "±0*") {
		t.Fatalf("row of %s lacks ±0*: %q", idB[:8], h.row(idB))
	}
	h.keys("D")
	h.wantScreen("no changes: submission 1 of 7b9e4c21 changed nothing in its work tree")
	if h.execs != 0 {
		t.Error("a pager opened on no changes")
	}
	h.keys("k", "D")
	if h.execs != 1 {
		t.Error("no pager opened on the changes of a running submission")
	}
}

func TestDiffOfAnOlderHost(t *testing.T) {
	h := newHarness(t, threeAgents(), 120, 30)
	h.noScreen("± LAST")
	h.keys("D")
	h.wantScreen("this host does not track changes")
}
