// Package search finds a query in submissions' log files without holding
// them in memory (SPEC §6 search): a prefilter over the raw bytes, then a
// confirm on the display text the dashboard shows (package termtext), so
// what is found is what a person read: SGR inside a word and `\r`
// rewrites do not hide a match, and a match in an escape sequence is not
// one.
//
// The prefilter (Scan) reads a file in 1 MiB reads and takes as a
// candidate every line whose raw bytes hold the query (smart case folded
// as ASCII, with the two non-ASCII letters that lower-case to ASCII), and
// every line whose display text may differ from its bytes: one holding
// ESC, a bare `\r`, another control character, a tab (when the query
// holds a space) or a code point the display drops (termtext.Dropped).
// Any other line is its own display text, so a line not found in its
// bytes cannot match. Only candidates are converted and matched with the
// one matcher of the log search (termtext.Matcher) or the regular
// expression. For a structured preset's log the question is whether the
// file may hold a match at all (Candidate): a match is on a line of the
// transcript view, where marks and words such as "✓ result" surround the
// entries' fields, so the file must hold the longest run of letters of
// the query only a field can show (transcript.FieldText); JSON escapes a
// letter only as `\u` (and ESC as `\u001b`), so a line with a `\u`
// escape is a candidate too; the transcript entries are then matched by
// the engine.
package search

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
)

// Pattern is a compiled query: what the prefilter looks for in raw bytes
// and the confirm on display text. Make it with Compile; it is safe for
// concurrent use.
type Pattern struct {
	query  string
	regex  *regexp.Regexp   // nil for a plain query
	chunk  *regexp.Regexp   // regex with ^ and $ at line ends: the prefilter's
	crs    bool             // every \r makes a candidate, \r\n too
	m      termtext.Matcher // the plain query's matcher
	fold   bool             // smart case: the query has no upper-case letter
	needle []byte           // looked for in the (folded) raw bytes; nil: every line is a candidate
	space  bool             // the query holds a space or a tab: a tab shows as spaces
	// field is what a structured log's raw bytes must hold for a match:
	// the part of the query only an entry's fields show
	// (transcript.FieldText), letters, which JSON escapes only as `\u`;
	// nil: any log may match.
	field []byte
	// others are the raw forms of letters that lower-case to an ASCII
	// letter of the query (U+212A KELVIN SIGN for k, U+0130 for i): a
	// line holding one is a candidate.
	others [][]byte
}

// Compile compiles query: a plain text, or with regex a regular
// expression (Go's RE2 syntax); either ignores case when it has no
// upper-case letter (smart case, as the log search). Errors: an empty
// query; a regular expression that does not compile, in words
// (`bad regular expression "(": missing closing )`).
func Compile(query string, regex bool) (*Pattern, error) {
	if err := (proto.SearchRequest{Query: query, Regex: regex}).Check(); err != nil {
		return nil, err
	}
	p := &Pattern{query: query, fold: strings.ToLower(query) == query}
	if regex {
		expr := query
		if p.fold {
			expr = "(?i)" + expr
		}
		re := regexp.MustCompile(expr)
		p.regex = re
		p.chunk = regexp.MustCompile("(?m)" + re.String()) // ^ and $ at line ends, as per line
		p.space, p.crs = true, true                        // \s and classes may match a tab's spaces; $ before a \r\n
		return p, nil
	}
	p.m = termtext.NewMatcher(query)
	p.space = strings.ContainsAny(query, " \t")
	p.needle = p.literal(anchor(query, p.fold))
	p.field = p.literal(anchor(transcript.FieldText(query), p.fold))
	if p.fold {
		if strings.ContainsRune(query, 'k') {
			p.others = append(p.others, []byte("\u212a"))
		}
		if strings.ContainsRune(query, 'i') {
			p.others = append(p.others, []byte("\u0130"))
		}
	}
	return p, nil
}

// Query returns the query as given.
func (p *Pattern) Query() string { return p.query }

// Regex reports whether the query is a regular expression.
func (p *Pattern) Regex() bool { return p.regex != nil }

// Match returns the first match in text, a display line or transcript
// text without escape sequences, in bytes of text.
func (p *Pattern) Match(text string) (termtext.Span, bool) {
	if p.regex != nil {
		loc := p.regex.FindStringIndex(text)
		if loc == nil {
			return termtext.Span{}, false
		}
		return termtext.Span{Start: loc[0], End: loc[1]}, true
	}
	return p.m.Index(text)
}

// literal folds b as the prefilter folds raw bytes (see foldWord) when
// the query ignores case; nil b stays nil.
func (p *Pattern) literal(b []byte) []byte {
	if b == nil {
		return nil
	}
	if p.fold {
		out := make([]byte, len(b))
		for i, c := range b {
			out[i] = c | 0x20
		}
		return out
	}
	return b
}

// anchor returns the longest part of query whose bytes must appear as
// they are in a raw line holding a match: with fold, a run of ASCII
// characters and of characters without case (a letter with an
// upper-case form may be written either way in the raw bytes). nil when
// there is none (only cased non-ASCII letters): every line is then a
// candidate.
func anchor(query string, fold bool) []byte {
	if !fold {
		return []byte(query)
	}
	best, start := "", 0
	for i, r := range query + "\x00" {
		if i < len(query) && (r < utf8.RuneSelf || !hasCase(r)) {
			continue
		}
		if i-start > len(best) {
			best = query[start:i]
		}
		start = i + utf8.RuneLen(r)
	}
	if best == "" {
		return nil
	}
	return []byte(best)
}

// hasCase reports whether r has another case a fold would match.
func hasCase(r rune) bool { return unicode.SimpleFold(r) != r || unicode.ToLower(r) != r }
