package termtext

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/subdash/subdash/internal/testkit"
)

// unicodeData is where Debian's unicode-data package puts the Unicode
// Character Database.
const unicodeData = "/usr/share/unicode"

// corpus is one test string of Unicode's own files and where it is.
type corpus struct {
	where string // file:line
	text  string
}

// readCorpora returns every test string of emoji/emoji-test.txt (each
// data line whole: code points, status, the emoji itself and its name)
// and auxiliary/GraphemeBreakTest.txt (the code points of each line
// between its ÷ and × marks). Without the files the test is skipped, or
// fails under SUBDASH_REQUIRE_TOOLS=1 (testkit.Missing).
func readCorpora(t *testing.T) []corpus {
	t.Helper()
	var all []corpus
	read := func(name string, each func(line string) (string, error)) {
		path := filepath.Join(unicodeData, name)
		f, err := os.Open(path)
		if err != nil {
			testkit.Missing(t, fmt.Sprintf("%s is missing: apt-get install unicode-data", path))
		}
		defer f.Close() //nolint:errcheck // read only
		sc := bufio.NewScanner(f)
		n, before := 0, len(all)
		for sc.Scan() {
			n++
			text, err := each(sc.Text())
			if err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			if text != "" {
				all = append(all, corpus{fmt.Sprintf("%s:%d", name, n), text})
			}
		}
		if err := sc.Err(); err != nil || len(all)-before < 500 {
			t.Fatalf("%s: %d test strings read (%v); is it Unicode's file?", path, len(all)-before, err)
		}
	}
	read("emoji/emoji-test.txt", func(line string) (string, error) {
		if strings.HasPrefix(line, "#") {
			return "", nil
		}
		return line, nil
	})
	read("auxiliary/GraphemeBreakTest.txt", func(line string) (string, error) {
		data, _, _ := strings.Cut(line, "#")
		var b strings.Builder
		for _, f := range strings.Fields(data) {
			if f == "÷" || f == "×" {
				continue
			}
			cp, err := strconv.ParseUint(f, 16, 32)
			if err != nil {
				return "", err
			}
			b.WriteRune(rune(cp))
		}
		return b.String(), nil
	})
	return all
}

// replaced reports what SPEC §5 says never reaches display text as it
// came: the zero-width joiner, variation selectors, tag characters and
// skin tone modifiers (emoji sequences terminals disagree on), regional
// indicators (drawn as letters), control characters, and the invisible
// format characters (shown as U+FFFD).
func replaced(r rune) bool {
	return widthAmbiguous(r) || isRegional(r) || unicode.IsControl(r) || Invisible(r)
}

// TestUnicodeCorpora feeds every test string of Unicode's emoji-test.txt
// and GraphemeBreakTest.txt through the cleaning of an agent's output for
// the log pane (a Converter, styled and plain) and of
// the one-line texts (OneLine: the table, notes), and checks SPEC §5 on
// each: the width reported is ansi.StringWidth's (graphemes) and the sum
// of the characters' own widths (tmux's), and no joiner, variation
// selector, regional indicator, control or invisible character survives;
// each invisible one shows as one U+FFFD.
func TestUnicodeCorpora(t *testing.T) {
	corpora := readCorpora(t)
	// One stream each, as an agent's output: every string ends its lines,
	// so the lines of a Feed are its string's. How a string is split into
	// reads is the other tests' (convertAll, FuzzConverter).
	converters := map[bool]*Converter{false: newConverter(DefaultMaxWidth, false), true: newConverter(DefaultMaxWidth, true)}
	for _, c := range corpora {
		fffds := strings.Count(c.text, "\uFFFD")
		for _, r := range c.text {
			if Invisible(r) {
				fffds++
			}
		}
		// checkLine checks the width (ansi.StringWidth's and tmux's) and
		// that no control byte is left; survivors the rest of SPEC §5.
		survivors := func(how, text string) {
			t.Helper()
			for _, r := range text {
				if r != '\x1b' && replaced(r) {
					t.Errorf("%s %+q, %s: %U survives in %+q", c.where, c.text, how, r, text)
				}
			}
			if n := strings.Count(text, "\uFFFD"); n != fffds {
				t.Errorf("%s %+q, %s: %d U+FFFD shown in %+q, want %d (one for each invisible character)", c.where, c.text, how, n, text, fffds)
			}
		}
		for _, plain := range []bool{false, true} {
			how, in := "log pane", "\x1b[1;31m"+c.text+"\n"
			if plain {
				how, in = "plain log pane", c.text+"\n"
			}
			var lines []line
			converters[plain].Feed([]byte(in), func(text []byte, w int) { lines = append(lines, line{string(text), w}) })
			shown := ""
			for _, l := range lines {
				checkLine(t, fmt.Sprintf("%s %+q, %s", c.where, c.text, how), l, DefaultMaxWidth, plain)
				shown += l.text
			}
			survivors(how, shown)
		}
		one := OneLine(c.text, 0)
		checkLine(t, fmt.Sprintf("%s %+q, OneLine", c.where, c.text), line{one, ansiWidth(one)}, DefaultMaxWidth, true)
		survivors("OneLine", one)
		if t.Failed() {
			return // one string's failures say it; thousands would bury it
		}
	}
	t.Logf("%d test strings of %s", len(corpora), unicodeData)
}
