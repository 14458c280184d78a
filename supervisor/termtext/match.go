package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Matcher finds a search query in plain text (a display line or a
// transcript entry without escape sequences: see Plain). It is the one
// matcher of the log search: the host counts the lines it matches
// (GET /v1/agents/{id}/search) and the log pane highlights the spans it
// returns, so what is counted is what is marked.
//
// A query without an upper-case letter ignores case ("smart case", as in
// less and vim): every character of the text is compared lower-cased
// (unicode.ToLower), so "é" finds "É" and "CAFÉ"; a query with one
// matches exactly. The zero Matcher has an empty query.
type Matcher struct {
	query string // as given; with fold, it has no upper-case letter
	fold  bool
}

// Span is a match: the bytes [Start, End) of the text searched.
type Span struct{ Start, End int }

// NewMatcher returns the matcher of query.
func NewMatcher(query string) Matcher {
	lower := strings.ToLower(query)
	return Matcher{query: query, fold: lower == query}
}

// Query returns the query as given.
func (m Matcher) Query() string { return m.query }

// Match reports whether s contains the query. An empty query matches every
// text.
func (m Matcher) Match(s string) bool {
	_, ok := m.Index(s)
	return ok || m.query == ""
}

// Index returns the first match in s, or false when there is none (or the
// query is empty).
func (m Matcher) Index(s string) (Span, bool) {
	hay, offs := m.haystack(s)
	sp, _, ok := m.next(hay, offs, 0)
	return sp, ok
}

// Spans returns every match in s, leftmost first and not overlapping, in
// bytes of s; nil when there is none or the query is empty.
func (m Matcher) Spans(s string) []Span {
	hay, offs := m.haystack(s)
	var spans []Span
	for at := 0; ; {
		sp, end, ok := m.next(hay, offs, at)
		if !ok {
			return spans
		}
		spans = append(spans, sp)
		at = end
	}
}

// haystack returns what the query is looked for in: s, or s lower-cased
// with its offsets (see fold).
func (m Matcher) haystack(s string) (string, []int) {
	if m.fold && m.query != "" {
		return fold(s)
	}
	return s, nil
}

// next returns the first match in hay from byte at on, as a span of the
// text hay was made from, and where it ends in hay.
func (m Matcher) next(hay string, offs []int, at int) (Span, int, bool) {
	if m.query == "" {
		return Span{}, 0, false
	}
	i := strings.Index(hay[at:], m.query)
	if i < 0 {
		return Span{}, 0, false
	}
	start, end := at+i, at+i+len(m.query)
	if offs != nil {
		return Span{offs[start], offs[end]}, end, true
	}
	return Span{start, end}, end, true
}

// fold returns s with every character lower-cased and, when that changed
// the length in bytes of any character, where each byte of the result
// came from in s: offs[i] is the offset in s of the character that byte i
// belongs to, and offs[len(result)] is len(s). A match of a lower-cased
// query starts and ends on character boundaries, where offs is exact.
func fold(s string) (string, []int) {
	ascii, upper := true, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if ascii {
		if !upper {
			return s, nil
		}
		b := []byte(s)
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			}
		}
		return string(b), nil
	}
	b := make([]byte, 0, len(s))
	var offs []int // nil while each byte of b is at the same offset in s
	for i, r := range s {
		w := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, w = utf8.DecodeRuneInString(s[i:]) // an invalid byte stays one byte
		}
		at := len(b)
		if lr := unicode.ToLower(r); lr != r {
			b = utf8.AppendRune(b, lr)
		} else {
			b = append(b, s[i:i+w]...)
		}
		if offs == nil && len(b)-at != w {
			offs = make([]int, at, len(s)+8)
			for j := range offs {
				offs[j] = j
			}
		}
		for j := at; offs != nil && j < len(b); j++ {
			offs = append(offs, i)
		}
	}
	if offs != nil {
		offs = append(offs, len(s))
	}
	return string(b), offs
}
