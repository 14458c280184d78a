package builtin

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

const (
	// largestCount is how many of the largest files a summary lists.
	largestCount = 5
	// progressEvery is how many files pass between progress lines.
	progressEvery = 1000
	// readChunk is the buffer size for counting lines, in bytes.
	readChunk = 32 << 10
)

// languageStats counts the files of one language.
type languageStats struct {
	name  string
	files int
	lines int
	bytes int64
}

// summarize prints a table of files, lines and bytes per language under
// t.path, sorted by lines (then name), followed by the largest files.
// Binary files (see isBinary) form their own row with no lines.
func summarize(ctx context.Context, cfg config, t task, out *printer, stderr io.Writer) error {
	w := &walker{fsys: cfg.fsys, dir: cfg.dir, out: out, stderr: stderr}
	target, err := w.resolve(t.path)
	if err != nil {
		return err
	}
	byLang := map[string]*languageStats{}
	var all []file
	err = w.walk(ctx, target, func(f file) error {
		lines, size, binary, err := countLines(ctx, cfg, f)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.cannotRead(f.display, err)
			return nil
		}
		lang := language(f.name)
		if binary {
			lang, lines = "binary", 0
		}
		s := byLang[lang]
		if s == nil {
			s = &languageStats{name: lang}
			byLang[lang] = s
		}
		s.files++
		s.lines += lines
		s.bytes += size
		f.size = size
		all = append(all, f)
		if len(all)%progressEvery == 0 {
			out.printf("… %d files", len(all))
			return out.err
		}
		return nil
	})
	if err != nil {
		return err
	}

	rows := make([]*languageStats, 0, len(byLang))
	total := languageStats{name: "total"}
	for _, s := range byLang {
		rows = append(rows, s)
		total.files += s.files
		total.lines += s.lines
		total.bytes += s.bytes
	}
	slices.SortFunc(rows, func(a, b *languageStats) int {
		return cmp.Or(cmp.Compare(b.lines, a.lines), cmp.Compare(b.bytes, a.bytes), strings.Compare(a.name, b.name))
	})
	header := fmt.Sprintf("summary of %s: %s", target.display, plural(total.files, "file"))
	if w.ignored > 0 {
		header += fmt.Sprintf(" (%d ignored by .gitignore)", w.ignored)
	}
	out.printf("%s", header)
	if total.files == 0 {
		return out.err
	}
	printTable(out, append(rows, &total))

	slices.SortStableFunc(all, func(a, b file) int { return cmp.Compare(b.size, a.size) })
	all = all[:min(len(all), largestCount)]
	out.printf("")
	out.printf("largest files:")
	width := 0
	for _, f := range all {
		width = max(width, len(formatSize(f.size)))
	}
	for _, f := range all {
		out.printf("  %*s  %s", width, formatSize(f.size), f.display)
	}
	return out.err
}

// printTable prints rows as aligned columns under a header line; the last
// row is the total.
func printTable(out *printer, rows []*languageStats) {
	cells := [][4]string{{"language", "files", "lines", "bytes"}}
	for _, r := range rows {
		cells = append(cells, [4]string{r.name, fmt.Sprint(r.files), fmt.Sprint(r.lines), formatSize(r.bytes)})
	}
	var widths [4]int
	for _, c := range cells {
		for i, s := range c {
			widths[i] = max(widths[i], len(s))
		}
	}
	for _, c := range cells {
		out.printf("%-*s  %*s  %*s  %*s", widths[0], c[0], widths[1], c[1], widths[2], c[2], widths[3], c[3])
	}
}

// countLines reads file f whole and returns its number of lines (a last
// line without a newline counts), its size in bytes and whether it looks
// binary (a NUL byte in its first sniffLen bytes). It stops early when ctx
// is cancelled.
func countLines(ctx context.Context, cfg config, f file) (lines int, size int64, binary bool, err error) {
	r, err := cfg.fsys.Open(f.name)
	if err != nil {
		return 0, 0, false, err
	}
	defer r.Close() //nolint:errcheck // read only: its Close cannot lose data
	buf := make([]byte, readChunk)
	var last byte = '\n'
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if size < sniffLen && bytes.IndexByte(buf[:min(n, sniffLen-int(size))], 0) >= 0 {
				binary = true
			}
			lines += bytes.Count(buf[:n], []byte{'\n'})
			size += int64(n)
			last = buf[n-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, false, err
		}
		if err := ctx.Err(); err != nil {
			return 0, 0, false, err
		}
	}
	if last != '\n' {
		lines++
	}
	return lines, size, binary, nil
}

// languages maps lower-case file extensions to language names.
var languages = map[string]string{
	".go": "Go", ".md": "Markdown", ".markdown": "Markdown",
	".sh": "Shell", ".bash": "Shell", ".zsh": "Shell", ".fish": "Shell",
	".json": "JSON", ".jsonl": "JSON", ".yaml": "YAML", ".yml": "YAML",
	".toml": "TOML", ".xml": "XML", ".ini": "INI", ".txt": "Text",
	".py": "Python", ".pyi": "Python",
	".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript", ".jsx": "JavaScript",
	".ts": "TypeScript", ".tsx": "TypeScript", ".mts": "TypeScript", ".cts": "TypeScript",
	".html": "HTML", ".htm": "HTML", ".css": "CSS", ".scss": "CSS",
	".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".cxx": "C++", ".hpp": "C++", ".hh": "C++",
	".rs": "Rust", ".java": "Java", ".kt": "Kotlin", ".swift": "Swift", ".cs": "C#",
	".rb": "Ruby", ".php": "PHP", ".lua": "Lua", ".sql": "SQL", ".proto": "Protocol Buffers",
	".mk": "Makefile",
}

// languageFiles maps whole file names to language names, for files whose
// extension says nothing.
var languageFiles = map[string]string{
	"go.mod": "Go module", "go.sum": "Go module", "go.work": "Go module", "go.work.sum": "Go module",
	"Makefile": "Makefile", "GNUmakefile": "Makefile", "makefile": "Makefile",
	"Dockerfile": "Dockerfile",
}

// language names the language of a file by its name, "other" when unknown.
func language(name string) string {
	base := path.Base(name)
	if l, ok := languageFiles[base]; ok {
		return l
	}
	if l, ok := languages[strings.ToLower(path.Ext(base))]; ok {
		return l
	}
	return "other"
}
