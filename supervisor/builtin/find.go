package builtin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// sniffLen is how much of a file is searched for a NUL byte to call it
	// binary, in bytes.
	sniffLen = 8 << 10
	// maxTextLen is how much of a matching line is shown, in characters.
	maxTextLen = 160
	// textLead is how many characters before the first marker are kept when
	// a long line is cut.
	textLead = 40
)

// findStats counts what a find task saw.
type findStats struct {
	scanned int
	binary  int
	large   []file // skipped for their size
	lines   map[string]int
	files   map[string]int
}

// find lists every line of every file under t.path holding one of
// t.markers as a word (see markerAt), then a summary per marker and the
// number of files scanned and skipped.
func find(ctx context.Context, cfg config, t task, out *printer, stderr io.Writer) error {
	w := &walker{fsys: cfg.fsys, dir: cfg.dir, out: out, stderr: stderr}
	target, err := w.resolve(t.path)
	if err != nil {
		return err
	}
	st := findStats{lines: map[string]int{}, files: map[string]int{}}
	err = w.walk(ctx, target, func(f file) error {
		return findInFile(cfg, w, t.markers, f, out, &st)
	})
	if err != nil {
		return err
	}

	if out.lines > 0 {
		out.printf("")
	}
	for _, m := range t.markers {
		if st.lines[m] == 0 {
			out.printf("%s: 0", m)
			continue
		}
		out.printf("%s: %d in %s", m, st.lines[m], plural(st.files[m], "file"))
	}
	summary := fmt.Sprintf("scanned %s in %s", plural(st.scanned, "file"), target.display)
	var skipped []string
	if st.binary > 0 {
		skipped = append(skipped, fmt.Sprintf("%d binary", st.binary))
	}
	if len(st.large) > 0 {
		skipped = append(skipped, fmt.Sprintf("%d over %s", len(st.large), formatSize(cfg.maxFileSize)))
	}
	if w.ignored > 0 {
		skipped = append(skipped, fmt.Sprintf("%d ignored by .gitignore", w.ignored))
	}
	if len(skipped) > 0 {
		summary += "; skipped " + strings.Join(skipped, ", ")
	}
	out.printf("%s", summary)
	for _, f := range st.large {
		out.printf("  not scanned (%s): %s", formatSize(f.size), f.display)
	}
	return out.err
}

// findInFile prints the matching lines of one file and counts them in st.
// An unreadable file is a warning through w; only an output error stops
// the walk.
func findInFile(cfg config, w *walker, ms []string, f file, out *printer, st *findStats) error {
	if f.size > cfg.maxFileSize {
		st.large = append(st.large, f)
		return nil
	}
	data, err := readHead(cfg.fsys, f.name, cfg.maxFileSize)
	if err != nil {
		w.cannotRead(f.display, err)
		return nil
	}
	if int64(len(data)) > cfg.maxFileSize {
		f.size = int64(len(data)) // grew since it was listed
		st.large = append(st.large, f)
		return nil
	}
	if isBinary(data) {
		st.binary++
		return nil
	}
	st.scanned++
	if !containsAny(data, ms) {
		return nil
	}

	seen := map[string]bool{}
	for n, line := range splitLines(data) {
		first := -1
		for _, m := range ms {
			if i := markerIndex(line, m); i >= 0 {
				st.lines[m]++
				if !seen[m] {
					seen[m] = true
					st.files[m]++
				}
				if first < 0 || i < first {
					first = i
				}
			}
		}
		if first >= 0 {
			if out.printf("%s:%d: %s", f.display, n+1, lineText(line, first)); out.err != nil {
				return out.err
			}
		}
	}
	return nil
}

// isBinary reports whether data has a NUL byte in its first sniffLen bytes.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0
}

// containsAny reports whether any of ms occurs in data at all, a cheap test
// before looking at lines.
func containsAny(data []byte, ms []string) bool {
	for _, m := range ms {
		if bytes.Contains(data, []byte(m)) {
			return true
		}
	}
	return false
}

// splitLines returns the lines of data without their "\n" or "\r\n"; a
// final line without a newline counts, an empty tail does not.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// markerIndex returns the byte offset of the first occurrence of marker m
// in line as a word, or -1. An occurrence is a word when the characters
// right before and after it (if any) are neither letters, digits nor '_',
// the characters of an identifier: "TODO:", "// FIXME(ana)", "XXX" and
// "TODO-list" count; "TODOS", "myTODO", "TODO_x" and "XXXX" do not. The
// match is case-sensitive, so "hack" and "todo" in prose do not count.
func markerIndex(line, m string) int {
	for off := 0; ; {
		i := strings.Index(line[off:], m)
		if i < 0 {
			return -1
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(line[:i])
		after, _ := utf8.DecodeRuneInString(line[i+len(m):])
		if !isWordRune(before) && !isWordRune(after) {
			return i
		}
		off = i + 1
	}
}

// isWordRune reports whether r can be part of an identifier. The
// utf8.RuneError that DecodeRune returns at either end of the line is not.
func isWordRune(r rune) bool {
	return r == '_' || (r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)))
}

// lineText is how a matching line is shown: trimmed, made safe for a
// terminal, and cut to maxTextLen characters around the first marker,
// which starts at byte offset at.
func lineText(line string, at int) string {
	lead := len(line) - len(strings.TrimLeftFunc(line, unicode.IsSpace))
	runes := []rune(sanitize(strings.TrimSpace(line)))
	if len(runes) <= maxTextLen {
		return string(runes)
	}
	start := max(0, utf8.RuneCountInString(line[lead:max(lead, at)])-textLead)
	start = min(start, len(runes)-maxTextLen)
	text := string(runes[start : start+maxTextLen])
	if start > 0 {
		text = "…" + text
	}
	if start+maxTextLen < len(runes) {
		text += "…"
	}
	return text
}

// sanitize replaces invalid UTF-8 and control characters (escape
// sequences included) with U+FFFD and tabs with spaces, so a file cannot
// restyle or move the reader's terminal.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r):
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// plural formats n with noun, adding an "s" unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// formatSize formats n bytes with a binary unit: "512 B", "1.5 KiB",
// "4 MiB".
func formatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0") + " " + suffix
}
