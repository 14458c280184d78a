package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// maxIgnoreFileSize caps how much of one .gitignore is read, in bytes.
const maxIgnoreFileSize = 1 << 20

// walker visits the regular files under one named path in a deterministic
// order (fs.ReadDir's name order, depth first), skipping .git, symbolic
// links, special files, pseudo file systems (see pseudoFilesystem) and
// whatever the applicable .gitignore files exclude.
type walker struct {
	fsys   fs.FS
	dir    string    // absolute working directory, for display paths
	out    *printer  // a line for each pseudo file system skipped
	stderr io.Writer // warnings about unreadable entries

	shallow bool            // visit the files directly in the target, no folder below it
	ignored int             // files and directories skipped because of .gitignore
	warned  map[string]bool // display paths already warned about
}

// cannotRead warns on stderr that the file or directory shown as display
// could not be read; the task carries on. A path is warned about once, even
// when it fails twice (a .gitignore read for its rules, then scanned).
func (w *walker) cannotRead(display string, err error) {
	if w.warned[display] {
		return
	}
	if w.warned == nil {
		w.warned = map[string]bool{}
	}
	w.warned[display] = true
	warnf(w.stderr, "warning: cannot read %s: %v\n", display, cause(err))
}

// file is one regular file handed to a visit function.
type file struct {
	name    string // path in fsys, for opening
	display string // path for the output, see displayPath
	size    int64  // in bytes, from the directory listing
}

// target is a path named in a task, resolved against the working directory.
type target struct {
	abs     string // absolute, cleaned
	name    string // the same path in fsys
	display string
	info    fs.FileInfo
}

// resolve finds p (relative to w.dir, or absolute) and reports a missing or
// unreadable path as an error for the user.
func (w *walker) resolve(p string) (target, error) {
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(w.dir, p)
	}
	abs = filepath.Clean(abs)
	t := target{abs: abs, name: fsName(abs), display: displayPath(w.dir, abs)}
	info, err := fs.Stat(w.fsys, t.name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if filepath.IsAbs(p) {
			return t, fmt.Errorf("path not found: %s", p)
		}
		return t, fmt.Errorf("path not found: %s (relative to %s)", p, w.dir)
	case err != nil:
		return t, fmt.Errorf("cannot read %s: %v", p, cause(err))
	}
	t.info = info
	return t, nil
}

// fsName turns an absolute, cleaned OS path into a name in a file system
// rooted at "/".
func fsName(abs string) string {
	name := strings.TrimPrefix(filepath.ToSlash(abs), "/")
	if name == "" {
		return "."
	}
	return name
}

// walk calls visit for every file under t in order. A target that is a
// file is visited alone, whatever .gitignore says, since it was named. A
// target directory on a pseudo file system is skipped like one met below
// it (see skipPseudo). It stops at the first error from visit, ctx or
// w.out; an unreadable directory below t is a warning, an unreadable t an
// error.
func (w *walker) walk(ctx context.Context, t target, visit func(file) error) error {
	visit = w.out.steered(visit) // steered messages are taken between files
	if !t.info.IsDir() {
		if !t.info.Mode().IsRegular() {
			return fmt.Errorf("not a regular file or directory: %s", t.display)
		}
		return visit(file{name: t.name, display: t.display, size: t.info.Size()})
	}
	if skip, err := w.skipPseudo(t.abs); skip {
		return err
	}
	comps, patterns := w.ancestorPatterns(t)
	if len(patterns) > 0 && gitignore.NewMatcher(patterns).Match(comps, true) {
		warnf(w.stderr, "note: %s is ignored by .gitignore; scanning it anyway, without the ignore rules above it\n", t.display)
		comps, patterns = nil, nil
	}
	entries, err := fs.ReadDir(w.fsys, t.name)
	if err != nil {
		return fmt.Errorf("cannot read %s: %v", t.display, cause(err))
	}
	return w.walkEntries(ctx, t.name, t.abs, comps, patterns, entries, visit)
}

// walkDir reads the directory name and walks it, unless it is on a pseudo
// file system; failing to read it is a warning.
func (w *walker) walkDir(ctx context.Context, name, abs string, comps []string, patterns []gitignore.Pattern, visit func(file) error) error {
	if skip, err := w.skipPseudo(abs); skip {
		return err
	}
	entries, err := fs.ReadDir(w.fsys, name)
	if err != nil {
		w.cannotRead(displayPath(w.dir, abs)+"/", err)
		return nil
	}
	return w.walkEntries(ctx, name, abs, comps, patterns, entries, visit)
}

// skipPseudo reports whether the directory at abs is on a pseudo file
// system (see pseudoFilesystem), whose files are not data and may block a
// reader, and if so says on w.out that the tree is skipped, with the
// printer's error.
func (w *walker) skipPseudo(abs string) (bool, error) {
	fsType := pseudoFilesystem(abs)
	if fsType == "" {
		return false, nil
	}
	w.out.printf("skipped %s: %s filesystem", displayPath(w.dir, abs), fsType)
	return true, w.out.err
}

// walkEntries visits the entries of directory name. comps are the
// directory's path components relative to the directory that patterns are
// rooted at (the repository root, or the walked target outside a
// repository).
func (w *walker) walkEntries(ctx context.Context, name, abs string, comps []string, patterns []gitignore.Pattern, entries []fs.DirEntry, visit func(file) error) error {
	patterns = append(slices.Clip(patterns), w.readIgnoreFile(name, abs, comps)...)
	matcher := gitignore.NewMatcher(patterns)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.Name() == ".git" {
			continue
		}
		typ := e.Type()
		if !typ.IsDir() && !typ.IsRegular() {
			continue // symbolic links, sockets, pipes, devices
		}
		childComps := append(slices.Clip(comps), e.Name())
		if len(patterns) > 0 && matcher.Match(childComps, typ.IsDir()) {
			w.ignored++
			continue
		}
		childName, childAbs := path.Join(name, e.Name()), filepath.Join(abs, e.Name())
		if typ.IsDir() {
			if w.shallow {
				continue
			}
			if err := w.walkDir(ctx, childName, childAbs, childComps, patterns, visit); err != nil {
				return err
			}
			continue
		}
		info, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since the directory was read
			}
			w.cannotRead(displayPath(w.dir, childAbs), err)
			continue
		}
		if err := visit(file{name: childName, display: displayPath(w.dir, childAbs), size: info.Size()}); err != nil {
			return err
		}
	}
	return nil
}

// ancestorPatterns finds the git repository holding directory t (the
// nearest ancestor with a .git entry) and reads the .gitignore files from
// the repository root down to t's parent. It returns t's path components
// relative to the repository root and those patterns; outside a repository
// it returns nothing, and only t's own and nested .gitignore files apply.
func (w *walker) ancestorPatterns(t target) ([]string, []gitignore.Pattern) {
	root := t.abs
	for {
		if _, err := fs.Stat(w.fsys, path.Join(fsName(root), ".git")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return nil, nil // no repository above t
		}
		root = parent
	}
	if root == t.abs {
		return nil, nil // t is the repository root
	}
	rel, err := filepath.Rel(root, t.abs)
	if err != nil {
		return nil, nil
	}
	comps := strings.Split(filepath.ToSlash(rel), "/")
	var patterns []gitignore.Pattern
	abs := root
	for i := range comps {
		patterns = append(patterns, w.readIgnoreFile(fsName(abs), abs, comps[:i])...)
		abs = filepath.Join(abs, comps[i])
	}
	return comps, patterns
}

// readIgnoreFile parses the .gitignore in directory name, if there is one,
// with comps as the patterns' domain. Failing to read it is a warning.
func (w *walker) readIgnoreFile(name, abs string, comps []string) []gitignore.Pattern {
	ignoreName := path.Join(name, ".gitignore")
	display := displayPath(w.dir, filepath.Join(abs, ".gitignore"))
	info, err := fs.Stat(w.fsys, ignoreName)
	if err != nil || !info.Mode().IsRegular() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			w.cannotRead(display, err)
		}
		return nil
	}
	data, err := readHead(w.fsys, ignoreName, maxIgnoreFileSize)
	if err != nil {
		w.cannotRead(display, err)
		return nil
	}
	return parseIgnore(data, comps)
}

// parseIgnore turns the lines of a .gitignore into patterns rooted at
// domain, skipping blank lines and comments as git does.
func parseIgnore(data []byte, domain []string) []gitignore.Pattern {
	var patterns []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxIgnoreFileSize)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		patterns = append(patterns, gitignore.ParsePattern(line, domain))
	}
	return patterns
}

// readHead reads at most limit+1 bytes of the named file, so a caller can
// tell a file over limit from one at it.
func readHead(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read only: its Close cannot lose data
	return io.ReadAll(io.LimitReader(f, limit+1))
}
