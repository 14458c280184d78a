// Package changes records what a submission changed in its working tree
// (SPEC §15): at a submission's start a snapshot of the git work tree
// (tracked files, and untracked ones git does not ignore), at its end
// (or live, on request) another, and the diff of the two.
//
// A snapshot never touches the user's index, HEAD, stash or files: it is
// a git tree object written with a private index kept in the state
// directory, one per work tree (GIT_INDEX_FILE, `git add -A`, `git
// write-tree`), seeded from the user's index the first time, so that only
// files changed since are hashed again. Snapshots of one work tree asked
// for within Share of each other are one snapshot: a thousand agents
// starting together cost one `git add`. Untracked files over MaxUntracked
// bytes are left out and named (Snapshot.Skipped). The tree objects and
// the blobs of untracked files go to the repository's object store as
// `git stash` puts them there; nothing refers to them, so `git gc`
// removes them in its time.
package changes

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Share is how close in time two snapshots of one work tree must be
// asked for to be one.
const Share = time.Second

// MaxUntracked is the size over which an untracked file is left out of a
// snapshot (10 MiB): build outputs and data files not ignored would make
// every snapshot slow.
const MaxUntracked = 10 << 20

// Tracker takes snapshots. Make it with New; it is safe for concurrent
// use.
type Tracker struct {
	dir     string // the private indexes: <dir>/<hash of the work tree>.index
	exclude string // a folder left out of every snapshot (the state directory)
	now     func() time.Time

	mu    sync.Mutex
	trees map[string]*tree
}

type tree struct {
	mu    sync.Mutex // one snapshot at a time per work tree
	last  Snapshot
	began time.Time // when last began to be taken
}

// Snapshot is a work tree as it was: its top folder and the id of the git
// tree object holding its files; Skipped names the untracked files left
// out (MaxUntracked), as "path (12 MiB)".
type Snapshot struct {
	Root    string
	Tree    string
	Skipped []string
}

// NotTrackedError says a folder is in no git work tree (or git is
// missing): its changes are not tracked.
type NotTrackedError struct{ Reason string }

// Error returns "changes not tracked: <reason>", as list's changes.note
// says it (SPEC §7).
func (e *NotTrackedError) Error() string { return "changes not tracked: " + e.Reason }

// New returns a tracker keeping its indexes in dir (created when needed),
// leaving the folder exclude (the state directory; "" none) out of every
// snapshot.
func New(dir, exclude string) *Tracker {
	return &Tracker{dir: dir, exclude: exclude, now: time.Now, trees: map[string]*tree{}}
}

// Root returns the top folder of the git work tree holding dir. Errors:
// *NotTrackedError outside a work tree or without git.
func (t *Tracker) Root(ctx context.Context, dir string) (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", &NotTrackedError{Reason: "git not found on PATH"}
	}
	out, err := git(ctx, dir, nil, nil, "rev-parse", "--show-toplevel")
	if err != nil || len(out) == 0 {
		return "", &NotTrackedError{Reason: "not in a git work tree"}
	}
	return strings.TrimSpace(string(out)), nil
}

// Snapshot returns a snapshot of the work tree holding dir for a
// submission's start: the one begun within Share before, or a new one.
// Errors: *NotTrackedError; git's failure in words (a locked index, a
// broken repository).
func (t *Tracker) Snapshot(ctx context.Context, dir string) (Snapshot, error) {
	return t.snapshot(ctx, dir, t.now().Add(-Share))
}

// Now returns a snapshot of the work tree holding dir as it is now, for a
// submission's end: one begun after the call (another end waited for
// first), or a new one. Errors as Snapshot's.
func (t *Tracker) Now(ctx context.Context, dir string) (Snapshot, error) {
	return t.snapshot(ctx, dir, t.now())
}

// snapshot returns the last snapshot of dir's work tree begun at or
// after since, or takes one.
func (t *Tracker) snapshot(ctx context.Context, dir string, since time.Time) (Snapshot, error) {
	root, err := t.Root(ctx, dir)
	if err != nil {
		return Snapshot{}, err
	}
	t.mu.Lock()
	tr := t.trees[root]
	if tr == nil {
		tr = &tree{}
		t.trees[root] = tr
	}
	t.mu.Unlock()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.last.Tree != "" && !tr.began.Before(since) {
		return tr.last, nil
	}
	began := t.now()
	snap, err := t.take(ctx, root)
	if err != nil {
		return Snapshot{}, err
	}
	tr.last, tr.began = snap, began
	return snap, nil
}

// take writes the tree of root with its private index.
func (t *Tracker) take(ctx context.Context, root string) (Snapshot, error) {
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		return Snapshot{}, fmt.Errorf("cannot keep the snapshots' index in %s: %v", t.dir, err)
	}
	sum := sha256.Sum256([]byte(root))
	index := filepath.Join(t.dir, hex.EncodeToString(sum[:8])+".index")
	if _, err := os.Stat(index); errors.Is(err, os.ErrNotExist) {
		seed(ctx, root, index)
	}
	env := []string{"GIT_INDEX_FILE=" + index, "GIT_OPTIONAL_LOCKS=0"}
	snap := Snapshot{Root: root}
	excludes, err := t.excludes(ctx, root, &snap)
	if err != nil {
		return Snapshot{}, err
	}
	args := append([]string{"add", "-A", "--ignore-errors", "--", "."}, excludes...)
	if _, err := git(ctx, root, env, nil, args...); err != nil {
		return Snapshot{}, err
	}
	out, err := git(ctx, root, env, nil, "write-tree")
	if err != nil {
		return Snapshot{}, err
	}
	snap.Tree = strings.TrimSpace(string(out))
	return snap, nil
}

// seed copies the user's index to index, so that the first `git add`
// hashes only the files changed since it: read, never written.
func seed(ctx context.Context, root, index string) {
	out, err := git(ctx, root, nil, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return
	}
	b, err := os.ReadFile(strings.TrimSpace(string(out)))
	if err != nil {
		return // no index yet: the first add hashes every file
	}
	_ = os.WriteFile(index, b, 0o600)
}

// excludes returns the pathspecs leaving out the state directory (when
// it is inside root) and the untracked files over MaxUntracked, which it
// names in snap.Skipped.
func (t *Tracker) excludes(ctx context.Context, root string, snap *Snapshot) ([]string, error) {
	var out []string
	if t.exclude != "" {
		rel, err := filepath.Rel(root, t.exclude)
		inside := err == nil && rel != "." && !strings.HasPrefix(rel, "..")
		// an ignored one is left out anyway, and git refuses to be told so
		if _, err := git(ctx, root, nil, nil, "check-ignore", "-q", rel); inside && err != nil {
			out = append(out, ":(exclude,literal)"+filepath.ToSlash(rel))
		}
	}
	list, err := git(ctx, root, nil, nil, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	for _, p := range bytes.Split(list, []byte{0}) {
		if len(p) == 0 {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, string(p)))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() <= MaxUntracked {
			continue
		}
		out = append(out, ":(exclude,literal)"+string(p))
		snap.Skipped = append(snap.Skipped, fmt.Sprintf("%s (%d MiB)", p, fi.Size()>>20))
	}
	return out, nil
}

// Stat is what a diff counts: files changed, lines added and removed (a
// binary file counts as a file only).
type Stat struct{ Files, Added, Removed int }

// Stat counts the changes from snapshot tree from to tree to of root.
func (t *Tracker) Stat(ctx context.Context, root, from, to string) (Stat, error) {
	var st Stat
	if from == to {
		return st, nil
	}
	out, err := git(ctx, root, nil, nil, "diff", "--numstat", "--no-renames", "--no-ext-diff", "-z", from, to)
	if err != nil {
		return st, err
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		f := strings.SplitN(string(rec), "\t", 3)
		if len(f) < 3 {
			continue
		}
		st.Files++
		a, _ := strconv.Atoi(f[0]) // "-" for a binary file
		r, _ := strconv.Atoi(f[1])
		st.Added += a
		st.Removed += r
	}
	return st, nil
}

// WriteDiff writes the unified diff from tree from to tree to of root to
// w, coloured as git colours it when color is set.
func (t *Tracker) WriteDiff(ctx context.Context, w io.Writer, root, from, to string, color bool) error {
	c := "--no-color"
	if color {
		c = "--color=always"
	}
	_, err := git(ctx, root, nil, w, "diff", c, "--no-renames", "--no-ext-diff", from, to)
	return err
}

// git runs git in dir with env added and returns its output (or writes
// it to w when w is set). A failure says what git said.
func git(ctx context.Context, dir string, env []string, w io.Writer, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.quotepath=off"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	var bw *bufio.Writer
	if w != nil {
		bw = bufio.NewWriterSize(w, 64<<10)
		cmd.Stdout = bw
	} else {
		cmd.Stdout = &out
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if bw != nil {
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s failed: %s", args[0], firstLine(msg))
	}
	return out.Bytes(), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
