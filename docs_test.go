package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docFiles are the markdown files whose links TestDocLinks checks: the
// repository's own pages and the guide under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"*.md", "docs/*.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("found only %v: run the test from the repository root", files)
	}
	return files
}

var (
	// fence opens or closes a fenced code block, whose text holds no links.
	fence = regexp.MustCompile("^\\s*(```|~~~)")
	// codeSpan is inline code, whose text holds no links.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// mdLink is an inline link or image: [text](target) or ![alt](target).
	mdLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	// linkText is a link or image in a heading, its text kept.
	linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	// heading is an ATX heading, its level and text.
	heading = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// proseLines returns the lines of a markdown text outside fenced code
// blocks, with their line numbers (from 1), inline code removed.
func proseLines(text string) (lines []string, numbers []int) {
	in := false
	for i, l := range strings.Split(text, "\n") {
		if fence.MatchString(l) {
			in = !in
			continue
		}
		if in {
			continue
		}
		lines = append(lines, codeSpan.ReplaceAllString(l, ""))
		numbers = append(numbers, i+1)
	}
	return lines, numbers
}

// anchors returns the anchors GitHub gives the headings of a markdown
// text: the heading's text lower-cased, inline markup dropped (code
// spans keep their text, a link its text), every character but letters,
// digits, marks, '_', '-' and spaces removed, spaces made '-'; a repeated
// anchor gets -1, -2, ….
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	in := false
	for _, l := range strings.Split(text, "\n") {
		if fence.MatchString(l) {
			in = !in
			continue
		}
		m := heading.FindStringSubmatch(l)
		if in || m == nil {
			continue
		}
		h := linkText.ReplaceAllString(m[2], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r), r == '_', r == '-':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocLinks checks that every relative link of the repository's
// markdown pages (README, SPEC, CHANGELOG, BENCHMARKS, docs/) names a file
// that exists and, with a #fragment, a heading of that page: the guide
// links to SPEC's sections rather than repeating them, and a renamed
// section must not leave its links dangling.
func TestDocLinks(t *testing.T) {
	pages := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := pages[path]; ok {
			return a, nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		pages[path] = anchors(string(raw))
		return pages[path], nil
	}
	checked := 0
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines, numbers := proseLines(string(raw))
		for i, l := range lines {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				if path == "" {
					path = file
				} else {
					path = filepath.Join(filepath.Dir(file), path)
				}
				checked++
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %s: no such file %s", file, numbers[i], target, path)
					continue
				}
				if frag == "" {
					continue
				}
				if !strings.HasSuffix(path, ".md") {
					t.Errorf("%s:%d: link %s: a #fragment of a page that is not markdown", file, numbers[i], target)
					continue
				}
				a, err := anchorsOf(path)
				if err != nil {
					t.Fatal(err)
				}
				if !a[frag] {
					t.Errorf("%s:%d: link %s: %s has no heading whose anchor is #%s", file, numbers[i], target, path, frag)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d links; the link pattern no longer matches the pages", checked)
	}
}

// TestDocAnchors pins the anchor rule on headings of the kinds the pages
// have, so that TestDocLinks checks what GitHub renders.
func TestDocAnchors(t *testing.T) {
	text := "# Title\n" +
		"## 1. Words\n" +
		"### A host on another machine, over the user's ssh\n" +
		"## `[presets.NAME]`\n" +
		"## Automation: `subdash ctl`, `subdash mcp` and the control protocol\n" +
		"## What a submission changed: `±`\n" +
		"## SPEC §14, the [tree](SPEC.md)\n" +
		"```\n# not a heading\n```\n" +
		"## Tests\n## Tests\n"
	got := anchors(text)
	for _, want := range []string{
		"title", "1-words", "a-host-on-another-machine-over-the-users-ssh", "presetsname",
		"automation-subdash-ctl-subdash-mcp-and-the-control-protocol",
		"what-a-submission-changed-", "spec-14-the-tree", "tests", "tests-1",
	} {
		if !got[want] {
			t.Errorf("no anchor %q among %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a line in a code block made an anchor: %v", got)
	}
}

// TestREADMECommands keeps README's two commands what they promise: the
// first runs the dashboard, the second is exactly the test command that
// CI (.ci/run) runs, so a newcomer's run of the tests is CI's.
func TestREADMECommands(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "\n## Two commands\n")
	if !ok {
		t.Fatal(`README.md has no "## Two commands" section`)
	}
	_, block, ok := strings.Cut(rest, "```sh\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal(`README.md's "Two commands" has no sh code block`)
	}
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if len(cmds) != 2 || cmds[0] != "go run ." || !strings.HasPrefix(cmds[1], "go test ") {
		t.Fatalf("README.md's two commands are %q; want go run . and the test command", cmds)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(ci), "\n") {
		l = strings.TrimSpace(l)
		if l == cmds[1] || strings.HasPrefix(l, cmds[1]+" ") {
			return
		}
	}
	t.Errorf(".ci/run does not run README.md's test command %q", cmds[1])
}

// TestREADMEShort keeps README.md a front door: what subdash is, how to
// start, a tour and the keys; the rest belongs in a page of docs/.
func TestREADMEShort(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n > 200 {
		t.Errorf("README.md has %d lines, more than 200: move the detail to its page of docs/ and link to it", n)
	}
}
