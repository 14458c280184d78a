package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// gitTree makes dir a git work tree with notes.txt committed.
func gitTree(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "-c", "gc.auto=0", "commit", "-qm", "init"}} {
		if len(args) == 2 {
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".state/\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

func changesOfAgent(t *testing.T, s *Supervisor, id string) *proto.Changes {
	t.Helper()
	for _, a := range listOf(s) {
		if a.AgentID == id {
			return a.Changes
		}
	}
	t.Fatalf("agent %s not listed", id)
	return nil
}

// Three audits change nothing (±0); an agent that edits a file shows +N
// −M and its diff; the counts outlive the host.
func TestChangesPerSubmission(t *testing.T) {
	const command = `read m; case "$m" in edit*) printf 'one\nTWO\nthree\n' > notes.txt; echo edited;; *) echo "audit $m";; esac`
	start, dir := hostOf(t, command)
	gitTree(t, dir)
	s1 := start(func(c *Config) { c.TrackChanges = true })
	var audits []string
	for _, m := range []string{"a", "b", "c"} {
		id := spawn(t, s1, m)
		waitFinal(t, s1, id)
		audits = append(audits, id)
	}
	editor := spawn(t, s1, "edit notes")
	waitFinal(t, s1, editor)
	for _, id := range audits {
		c := changesOfAgent(t, s1, id)
		if c == nil || c.Short() != "±0" || c.Files != 0 {
			t.Errorf("audit %s: changes %+v", id[:8], c)
		}
	}
	c := changesOfAgent(t, s1, editor)
	if c == nil || *c != (proto.Changes{Files: 1, Added: 2, Removed: 1, Tracked: true}) || c.Short() != "+2 −1" {
		t.Fatalf("the editing agent: %+v", c)
	}
	var diff bytes.Buffer
	if err := s1.WriteChanges(context.Background(), &diff, editor, 0, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diff.String(), "--- a/notes.txt\n+++ b/notes.txt\n") || !strings.Contains(diff.String(), "-two\n+TWO\n+three\n") || strings.Contains(diff.String(), "\x1b[") {
		t.Fatalf("diff:\n%s", diff.String())
	}
	if out, _ := exec.Command("git", "-C", dir, "diff", "--cached", "--name-only").Output(); len(out) != 0 {
		t.Errorf("the user's index holds %q", out)
	}
	shutdownNow(t, s1)

	s2 := start(func(c *Config) { c.TrackChanges = true })
	if c := changesOfAgent(t, s2, editor); c == nil || c.Short() != "+2 −1" {
		t.Fatalf("after a restart: %+v", c)
	}
	diff.Reset()
	if err := s2.WriteChanges(context.Background(), &diff, editor, 1, true); err != nil || !strings.Contains(diff.String(), "\x1b[") {
		t.Fatalf("a restored diff in colour: %v\n%s", err, diff.String())
	}
}

// Two submissions running in one work tree at the same time are marked
// shared: each sees the other's edits.
func TestChangesShared(t *testing.T) {
	const command = `read m; case "$m" in slow*) sleep 1; echo x >> notes.txt;; *) echo y >> notes.txt;; esac`
	start, dir := hostOf(t, command)
	gitTree(t, dir)
	s := start(func(c *Config) { c.TrackChanges = true })
	slow, quick := spawn(t, s, "slow"), spawn(t, s, "quick")
	waitFinal(t, s, quick)
	waitFinal(t, s, slow)
	for _, id := range []string{slow, quick} {
		if c := changesOfAgent(t, s, id); c == nil || !c.Shared || !strings.HasSuffix(c.Short(), "*") {
			t.Errorf("%s: %+v", id[:8], c)
		}
	}
	alone := spawn(t, s, "alone")
	waitFinal(t, s, alone)
	if c := changesOfAgent(t, s, alone); c == nil || c.Shared || c.Short() != "+1 −0" {
		t.Errorf("alone: %+v", c)
	}
}

func TestChangesNotTracked(t *testing.T) {
	s := newTestSupervisor(t, "echo hi", func(c *Config) { c.TrackChanges = true })
	id := spawn(t, s, "x")
	waitFinal(t, s, id)
	c := changesOfAgent(t, s, id)
	if c == nil || c.Tracked || c.Short() != "" || c.Note != "changes not tracked: not in a git work tree" {
		t.Fatalf("outside a work tree: %+v", c)
	}
	err := s.WriteChanges(context.Background(), &bytes.Buffer{}, id, 0, false)
	if proto.CodeOf(err) != proto.CodeInvalid || err.Error() != "changes not tracked: not in a git work tree" {
		t.Errorf("diff: %v", err)
	}
	off := newTestSupervisor(t, "echo hi")
	id = spawn(t, off, "x")
	waitFinal(t, off, id)
	if c := changesOfAgent(t, off, id); c != nil {
		t.Errorf("--track-changes=false: %+v", c)
	}
}

// slowGit puts on PATH a git that sleeps d before each write-tree (a
// snapshot of a large tree), then runs the real git.
func slowGit(t *testing.T, d time.Duration) {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git:", err)
	}
	bin := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\ncase \" $* \" in *\" write-tree \"*) sleep %g;; esac\nexec %s \"$@\"\n", d.Seconds(), gitPath)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
}

// TestSpawnAnswersBeforeItsSnapshot: a snapshot that takes seconds holds
// no spawn's answer; the process starts after it, and the submission's
// time (the TIME column) counts its run from then, not the snapshot. A
// stop asked for meanwhile ends it without starting its process.
func TestSpawnAnswersBeforeItsSnapshot(t *testing.T) {
	const command = `read m; touch "ran-$m"; echo "got $m"`
	start, dir := hostOf(t, command)
	gitTree(t, dir)
	slowGit(t, 2*time.Second)
	s := start(func(c *Config) { c.TrackChanges = true })
	asked := time.Now()
	id := spawn(t, s, "one")
	if took := time.Since(asked); took > time.Second {
		t.Errorf("the spawn answered in %s, while its snapshot takes 2s", took)
	}
	waitFinal(t, s, id)
	info, _ := s.Agent(id)
	if began := info.Submissions[0].StartedAt; began.Sub(asked) < 2*time.Second {
		t.Errorf("the submission started %s after the spawn; want its time to begin after the 2s snapshot", began.Sub(asked))
	}
	if c := info.Changes; c == nil || !c.Tracked || c.Pending {
		t.Errorf("changes %+v", c)
	}
	stopped := spawn(t, s, "two")
	if _, err := s.Interrupt(t.Context(), stopped); err != nil {
		t.Fatal(err)
	}
	info, _ = s.Agent(stopped)
	if info.Status != proto.StatusErrored || info.LastError == nil || *info.LastError != "interrupted" {
		t.Errorf("interrupted during its snapshot: %s %v", info.Status, info.LastError)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran-two")); err == nil {
		t.Error("the interrupted submission's process ran")
	}
}
