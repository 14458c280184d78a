package builtin

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// newFixture copies testdata/fixture into a temporary directory, renaming
// each dot-gitignore to .gitignore, and adds what git cannot hold: a .git
// directory (making the copy a repository root), a symbolic link and a
// named pipe, all with TODOs that must not be listed. It returns the copy.
func newFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir("testdata/fixture", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/fixture", p)
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if d.Name() == "dot-gitignore" {
			dst = filepath.Join(filepath.Dir(dst), ".gitignore")
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("TODO: never listed, inside .git\n"), 0o644))
	must(t, os.Symlink("notes.md", filepath.Join(dir, "link-to-notes.md")))
	// A reader opening the pipe would block forever: the walk must skip it.
	must(t, syscall.Mkfifo(filepath.Join(dir, "sub", "pipe-TODO"), 0o644))
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// result is what one run of the agent gave.
type result struct {
	status         int
	stdout, stderr string
}

// format renders r for a golden file, with the fixture's directory written
// as $DIR so the file does not depend on where the test ran.
func (r result) format(dir string) string {
	clean := func(s string) string { return strings.ReplaceAll(s, dir, "$DIR") }
	return fmt.Sprintf("-- status --\n%d\n-- stdout --\n%s-- stderr --\n%s", r.status, clean(r.stdout), clean(r.stderr))
}

// runAgent runs the agent through Run, as `subdash agent` does.
func runAgent(ctx context.Context, dir, message string, args ...string) result {
	var stdout, stderr bytes.Buffer
	status := Run(ctx, strings.NewReader(message+"\n"), &stdout, &stderr, dir, args)
	return result{status, stdout.String(), stderr.String()}
}

// checkGolden compares got with testdata/golden/name.golden, or rewrites it
// with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", "golden", name+".golden")
	if *update {
		must(t, os.WriteFile(file, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", file, got, want)
	}
}

func TestRunGolden(t *testing.T) {
	tests := []struct {
		name    string
		sub     string // working directory below the fixture
		message string // $DIR stands for the fixture's directory
		args    []string
	}{
		{name: "audit", message: "audit ."},
		{name: "audit-default-path", message: "audit"},
		{name: "find-todo", message: "find TODO in ."},
		{name: "find-all-slashes", message: "find TODO/FIXME/XXX/HACK in ."},
		{name: "find-sub-ancestor-ignore", message: "find TODO and FIXME in sub"},
		{name: "find-ignored-target", message: "find todos in generated"},
		{name: "find-named-file", message: "find TODO in ignored-secret.txt"},
		{name: "find-absolute", message: "find HACK in $DIR/sub"},
		{name: "find-outside-dir", sub: "sub", message: "find XXX in .."},
		{name: "find-with-pace", message: "find HACK in sub", args: []string{"--pace", "1ms"}},
		{name: "summarize", message: "summarize ."},
		{name: "summarize-sub", message: "summarize sub"},
		{name: "summarize-file", message: "summarize main.go"},
		{name: "missing-path", message: "audit nope"},
		{name: "missing-absolute-path", message: "summarize /nonexistent/subdash-audit"},
		{name: "not-understood", message: "make coffee"},
		{name: "unknown-marker", message: "find BUGS in ."},
		{name: "empty", message: "  "},
		{name: "bad-pace", message: "audit", args: []string{"--pace", "soon"}},
		{name: "negative-pace", message: "audit", args: []string{"--pace", "-1s"}},
		{name: "unexpected-argument", message: "audit", args: []string{"audit"}},
	}
	dir := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			message := strings.ReplaceAll(tt.message, "$DIR", dir)
			got := runAgent(context.Background(), filepath.Join(dir, tt.sub), message, tt.args...)
			checkGolden(t, tt.name, got.format(dir))
		})
	}
}

func TestRunTooLargeFile(t *testing.T) {
	dir := newFixture(t)
	cfg := config{dir: dir, fsys: os.DirFS("/"), maxFileSize: 200}
	var stdout, stderr bytes.Buffer
	status := run(context.Background(), cfg, "find TODO in .", &stdout, &stderr)
	checkGolden(t, "find-too-large", result{status, stdout.String(), stderr.String()}.format(dir))
}

// failingFS fails to open or list the names in fail, to stand for files
// and directories that cannot be read (tests run as root, where chmod does
// not help).
type failingFS struct {
	fs.FS
	fail map[string]bool
}

func (f failingFS) Open(name string) (fs.File, error) {
	if f.fail[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f.FS.Open(name)
}

func TestRunUnreadableEntriesWarnAndCarryOn(t *testing.T) {
	dir := newFixture(t)
	name := fsName(dir)
	cfg := config{dir: dir, maxFileSize: defaultMaxFileSize, fsys: failingFS{
		FS: os.DirFS("/"),
		fail: map[string]bool{
			name + "/notes.md":       true,
			name + "/sub/deeper":     true,
			name + "/sub/.gitignore": true,
		},
	}}
	for _, message := range []string{"audit .", "summarize ."} {
		var stdout, stderr bytes.Buffer
		status := run(context.Background(), cfg, message, &stdout, &stderr)
		name := "unreadable-" + strings.Fields(message)[0]
		checkGolden(t, name, result{status, stdout.String(), stderr.String()}.format(dir))
	}
}

func TestRunUnreadableTarget(t *testing.T) {
	dir := newFixture(t)
	cfg := config{dir: dir, maxFileSize: defaultMaxFileSize, fsys: failingFS{
		FS:   os.DirFS("/"),
		fail: map[string]bool{fsName(dir) + "/sub": true},
	}}
	var stdout, stderr bytes.Buffer
	status := run(context.Background(), cfg, "audit sub", &stdout, &stderr)
	if status != StatusError || stdout.Len() != 0 || stderr.String() != "cannot read sub: permission denied\n" {
		t.Errorf("got status %d, stdout %q, stderr %q; want 1, nothing, a permission error", status, stdout.String(), stderr.String())
	}
}
