package changes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// repo makes a git work tree with files committed, one ignored and one
// untracked, and returns its folder.
func repo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	for name, text := range files {
		write(t, filepath.Join(dir, name), text)
	}
	run(t, dir, "add", "-A")
	run(t, dir, "-c", "user.email=t@t", "-c", "user.name=t", "-c", "gc.auto=0", "commit", "-qm", "init")
	return dir
}

func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// clock is a Tracker's time, moved by the test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestSnapshotsAndTheirDiff(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "one\ntwo\n", ".gitignore": "ignored.log\n", "sub/b.txt": "b\n"})
	write(t, filepath.Join(dir, "untracked.txt"), "new\n")
	write(t, filepath.Join(dir, "ignored.log"), "noise\n")
	big := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxUntracked+1); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, ".state")
	write(t, filepath.Join(state, "runs", "x.log"), "a log inside the tree\n")
	indexBefore, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	statusBefore, headBefore := run(t, dir, "status", "--porcelain"), run(t, dir, "rev-parse", "HEAD")

	c := &clock{t: time.Unix(1000, 0)}
	tr := New(filepath.Join(state, "changes"), state)
	tr.now = c.now
	s1, err := tr.Snapshot(context.Background(), filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if s1.Root != dir || len(s1.Skipped) != 1 || !strings.HasPrefix(s1.Skipped[0], "big.bin (10 MiB)") {
		t.Fatalf("snapshot %+v", s1)
	}
	files := run(t, dir, "ls-tree", "-r", "--name-only", s1.Tree)
	if files != ".gitignore\na.txt\nsub/b.txt\nuntracked.txt\n" {
		t.Fatalf("the snapshot holds:\n%s", files)
	}
	// an agent edits a file, adds one, removes one
	write(t, filepath.Join(dir, "a.txt"), "one\nTWO\nthree\n")
	write(t, filepath.Join(dir, "added.txt"), "x\n")
	if err := os.Remove(filepath.Join(dir, "sub", "b.txt")); err != nil {
		t.Fatal(err)
	}
	if s, _ := tr.Snapshot(context.Background(), dir); s.Tree != s1.Tree {
		t.Fatal("a snapshot within a second was taken anew")
	}
	c.t = c.t.Add(Share + time.Millisecond)
	s2, err := tr.Snapshot(context.Background(), dir)
	if err != nil || s2.Tree == s1.Tree {
		t.Fatalf("second snapshot %+v %v", s2, err)
	}
	st, err := tr.Stat(context.Background(), dir, s1.Tree, s2.Tree)
	if err != nil || st != (Stat{Files: 3, Added: 3, Removed: 2}) {
		t.Fatalf("stat %+v %v", st, err)
	}
	var diff bytes.Buffer
	if err := tr.WriteDiff(context.Background(), &diff, dir, s1.Tree, s2.Tree, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-two\n+TWO\n+three\n", "+++ b/added.txt", "--- a/sub/b.txt"} {
		if !strings.Contains(diff.String(), want) {
			t.Errorf("the diff lacks %q:\n%s", want, diff.String())
		}
	}
	if st, _ := tr.Stat(context.Background(), dir, s2.Tree, s2.Tree); st != (Stat{}) {
		t.Errorf("no change: %+v", st)
	}
	// the user's index, HEAD and status are as they were (the edits aside)
	indexAfter, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if !bytes.Equal(indexBefore, indexAfter) || run(t, dir, "rev-parse", "HEAD") != headBefore {
		t.Error("the user's index or HEAD changed")
	}
	if strings.Contains(statusBefore, "A ") || run(t, dir, "stash", "list") != "" {
		t.Error("something was staged or stashed")
	}
}

func TestNotTracked(t *testing.T) {
	tr := New(filepath.Join(t.TempDir(), "changes"), "")
	_, err := tr.Snapshot(context.Background(), t.TempDir())
	var nt *NotTrackedError
	if !errors.As(err, &nt) || err.Error() != "changes not tracked: not in a git work tree" {
		t.Fatalf("outside a work tree: %v", err)
	}
}

func TestLockedIndexFails(t *testing.T) {
	dir := repo(t, map[string]string{"a": "a\n"})
	state := t.TempDir()
	tr := New(state, "")
	if _, err := tr.Snapshot(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(state, "*.index"))
	if len(matches) != 1 {
		t.Fatalf("indexes %v", matches)
	}
	write(t, matches[0]+".lock", "")
	tr.now = func() time.Time { return time.Now().Add(time.Hour) }
	_, err := tr.Snapshot(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "git add failed") || !strings.Contains(err.Error(), "lock") {
		t.Fatalf("a locked index: %v", err)
	}
}

// BenchmarkSnapshot: a snapshot of this repository and of a 10,000-file
// tree (goals: 100 ms and 1 s, SPEC §15), each after the first (the
// first copies the user's index).
func BenchmarkSnapshot(b *testing.B) {
	here, err := New(b.TempDir(), "").Root(context.Background(), ".")
	if err != nil {
		b.Skip(err)
	}
	files := map[string]string{}
	for i := 0; i < 10000; i++ {
		files[fmt.Sprintf("d%02d/f%04d.txt", i%100, i)] = fmt.Sprintf("file %d\n", i)
	}
	big := repo(b, files)
	for _, c := range []struct{ name, dir string }{{"this-repository", here}, {"10000-files", big}} {
		b.Run(c.name, func(b *testing.B) {
			tr := New(b.TempDir(), "")
			if _, err := tr.Snapshot(context.Background(), c.dir); err != nil {
				b.Fatal(err)
			}
			first := time.Now()
			tr.now = func() time.Time { first = first.Add(Share); return first }
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tr.Snapshot(context.Background(), c.dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
