// Package changes records what a submission changed in its working tree
// (SPEC §15): at a submission's start a snapshot of the git work tree
// (tracked files, and untracked ones git does not ignore), at its end
// (or live, on request) another, and the diff of the two.
//
// A snapshot never touches the user's repository: not its index, HEAD,
// stash, files or object store. It is a git tree object written with a
// private index (GIT_INDEX_FILE, `git add -A`, `git write-tree`), seeded
// from the user's index the first time, so that only files changed since
// are hashed again; its trees and blobs go to an object store of the
// tracker's own (GIT_OBJECT_DIRECTORY, the repository's store an
// alternate it reads), in the host's run folder, removed with it. Stat
// and WriteDiff read them from there. Snapshots of one work tree asked for
// within Share of each other are one snapshot: a thousand agents starting
// together cost one `git add`.
//
// What a snapshot reads is bounded: untracked files over MaxUntracked
// bytes are left out and named (Snapshot.Skipped), and when the untracked
// files together hold over MaxUntrackedTotal bytes, or hashing them takes
// over UntrackedTime, the snapshot holds the tracked files only and says
// why (Snapshot.NoUntracked).
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
	"slices"
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

// MaxUntrackedTotal and UntrackedTime bound what a snapshot reads of the
// untracked files together: past 64 MiB of them, or 2 s of hashing them,
// it holds the tracked files only (Snapshot.NoUntracked): many large data
// files not ignored would take seconds to hash and fill the object store.
const (
	MaxUntrackedTotal = 64 << 20
	UntrackedTime     = 2 * time.Second
)

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
	mu sync.Mutex // one snapshot at a time per work tree
	// last and began are the last snapshot of each kind (with the
	// untracked files, [1], or without, [0]) and when it began.
	last    [2]Snapshot
	began   [2]time.Time
	objects string // the repository's object store
}

// Snapshot is a work tree as it was: its top folder and the id of the git
// tree object holding its files; Objects is the object store holding that
// tree (the tracker's); Skipped names the untracked files left out
// (MaxUntracked), as "path (12 MiB)"; NoUntracked says why the untracked
// files are not in it at all ("" when they are, or were not asked for).
type Snapshot struct {
	Root        string
	Tree        string
	Objects     string
	Skipped     []string
	NoUntracked string
}

// NotTrackedError says a folder is in no git work tree (or git is
// missing): its changes are not tracked.
type NotTrackedError struct{ Reason string }

// Error returns "changes not tracked: <reason>", as list's changes.note
// says it (SPEC §7).
func (e *NotTrackedError) Error() string { return "changes not tracked: " + e.Reason }

// New returns a tracker keeping its indexes and its snapshots' objects in
// dir (created when needed; a host gives it its run folder's changes/),
// leaving the folder exclude (the state directory; "" none) out of every
// snapshot.
func New(dir, exclude string) *Tracker {
	return &Tracker{dir: dir, exclude: exclude, now: time.Now, trees: map[string]*tree{}}
}

// Objects returns the object store of the tracker's snapshots:
// <dir>/objects.
func (t *Tracker) Objects() string { return filepath.Join(t.dir, "objects") }

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
// submission's start, its untracked files in it within the bounds
// (MaxUntrackedTotal, UntrackedTime): the one begun within Share before,
// or a new one. Errors: *NotTrackedError; git's failure in words (a
// locked index, a broken repository).
func (t *Tracker) Snapshot(ctx context.Context, dir string) (Snapshot, error) {
	return t.snapshot(ctx, dir, t.now().Add(-Share), true)
}

// Now returns a snapshot of the work tree holding dir as it is now, for a
// submission's end: one begun after the call (another end waited for
// first), or a new one; with its untracked files when untracked is set
// (the start's had them), within the bounds. Errors as Snapshot's.
func (t *Tracker) Now(ctx context.Context, dir string, untracked bool) (Snapshot, error) {
	return t.snapshot(ctx, dir, t.now(), untracked)
}

// snapshot returns the last snapshot of dir's work tree of its kind
// begun at or after since, or takes one.
func (t *Tracker) snapshot(ctx context.Context, dir string, since time.Time, untracked bool) (Snapshot, error) {
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
	k := 0
	if untracked {
		k = 1
	}
	if tr.last[k].Tree != "" && !tr.began[k].Before(since) {
		return tr.last[k], nil
	}
	if tr.objects == "" {
		out, err := git(ctx, root, nil, nil, "rev-parse", "--path-format=absolute", "--git-path", "objects")
		if err != nil {
			return Snapshot{}, err
		}
		tr.objects = strings.TrimSpace(string(out))
	}
	began := t.now()
	snap, err := t.take(ctx, root, tr.objects, untracked)
	if err != nil {
		return Snapshot{}, err
	}
	tr.last[k], tr.began[k] = snap, began
	return snap, nil
}

// take writes the tree of root with its private index, its objects to
// the tracker's store (repo, the repository's, read as an alternate).
func (t *Tracker) take(ctx context.Context, root, repo string, untracked bool) (Snapshot, error) {
	objects := t.Objects()
	if err := os.MkdirAll(objects, 0o700); err != nil {
		return Snapshot{}, fmt.Errorf("cannot keep the snapshots in %s: %v", t.dir, err)
	}
	sum := sha256.Sum256([]byte(root))
	index := filepath.Join(t.dir, hex.EncodeToString(sum[:8])+".index")
	if _, err := os.Stat(index); errors.Is(err, os.ErrNotExist) {
		seed(ctx, root, index)
	}
	env := []string{"GIT_INDEX_FILE=" + index, "GIT_OPTIONAL_LOCKS=0",
		"GIT_OBJECT_DIRECTORY=" + objects, "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + repo}
	snap := Snapshot{Root: root, Objects: objects}
	excludes, size, files, err := t.excludes(ctx, root, &snap)
	if err != nil {
		return Snapshot{}, err
	}
	added := false
	switch {
	case !untracked:
	case size > MaxUntrackedTotal:
		snap.NoUntracked = fmt.Sprintf("too large (%d MiB in %d files, over the %d MiB bound)", size>>20, files, MaxUntrackedTotal>>20)
	default:
		actx, cancel := context.WithTimeout(ctx, UntrackedTime)
		_, err := git(actx, root, env, nil, append([]string{"add", "-A", "--ignore-errors", "--", "."}, excludes...)...)
		cancel()
		switch {
		case err == nil:
			added = true
		case ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded):
			// the killed add leaves its lock on the private index
			_ = os.Remove(index + ".lock")
			snap.NoUntracked = fmt.Sprintf("too large (hashing %d MiB in %d files took over %s)", size>>20, files, UntrackedTime)
		default:
			return Snapshot{}, err
		}
	}
	if !added {
		// the files the index holds: tracked ones, and untracked ones an
		// earlier snapshot added
		if _, err := git(ctx, root, env, nil, append([]string{"add", "-u", "--ignore-errors", "--", "."}, excludes...)...); err != nil {
			return Snapshot{}, err
		}
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
// names in snap.Skipped, and the bytes and number of the other untracked
// files.
func (t *Tracker) excludes(ctx context.Context, root string, snap *Snapshot) (out []string, size int64, files int, err error) {
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
		return nil, 0, 0, err
	}
	for _, p := range bytes.Split(list, []byte{0}) {
		if len(p) == 0 {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, string(p)))
		switch {
		case err != nil || !fi.Mode().IsRegular():
		case fi.Size() <= MaxUntracked:
			size += fi.Size()
			files++
		default:
			out = append(out, ":(exclude,literal)"+string(p))
			snap.Skipped = append(snap.Skipped, fmt.Sprintf("%s (%d MiB)", p, fi.Size()>>20))
		}
	}
	return out, size, files, nil
}

// Stat is what a diff counts: files changed, lines added and removed (a
// binary file counts as a file only).
type Stat struct{ Files, Added, Removed int }

// Stat counts the changes from snapshot tree from to tree to of root,
// reading them from the object stores objects (Snapshot.Objects; the
// repository's too, where the snapshots of an earlier release are).
func (t *Tracker) Stat(ctx context.Context, root, from, to string, objects ...string) (Stat, error) {
	var st Stat
	if from == to {
		return st, nil
	}
	out, err := git(ctx, root, alternates(objects), nil, "diff", "--numstat", "--no-renames", "--no-ext-diff", "-z", from, to)
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
// w, coloured as git colours it when color is set, reading them from the
// object stores objects as Stat does.
func (t *Tracker) WriteDiff(ctx context.Context, w io.Writer, root, from, to string, color bool, objects ...string) error {
	c := "--no-color"
	if color {
		c = "--color=always"
	}
	_, err := git(ctx, root, alternates(objects), w, "diff", c, "--no-renames", "--no-ext-diff", from, to)
	return err
}

// alternates is the environment that has git read objects from the stores
// objects that exist, besides the repository's own.
func alternates(objects []string) []string {
	var dirs []string
	for _, d := range objects {
		if _, err := os.Stat(d); d != "" && err == nil && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	return []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + strings.Join(dirs, string(filepath.ListSeparator))}
}

// git runs git in dir with env added and returns its output (or writes
// it to w when w is set). A failure says what git said.
func git(ctx context.Context, dir string, env []string, w io.Writer, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.quotepath=off"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = time.Second // a killed git leaves nothing holding its pipes for long
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
