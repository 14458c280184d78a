package logview

import (
	"sort"
	"strings"

	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/internal/cells"
)

// searchState is the current search: the query's matcher, the absolute
// numbers of the items that match (ascending), and which of them is
// current.
type searchState struct {
	match   termtext.Matcher
	matches []int64
	current int // index into matches, -1 when none is current
}

// SetQuery starts a new search for query ("" ends the search); matches come
// later through AddMatches. Matching items are highlighted at once, with
// the matcher the host counts them with (termtext.Matcher: smart case).
func (m *Model) SetQuery(query string) {
	m.search = searchState{match: termtext.NewMatcher(query), current: -1}
	m.cache = map[int64]cached{}
	m.Refresh()
}

// Query returns the current search query.
func (m Model) Query() string { return m.search.match.Query() }

// AddMatches records the absolute numbers of matching items, ascending;
// numbers not after the last known match are ignored.
func (m *Model) AddMatches(abs []int64) {
	for _, a := range abs {
		if n := len(m.search.matches); n == 0 || a > m.search.matches[n-1] {
			m.search.matches = append(m.search.matches, a)
		}
	}
}

// Matches returns the 1-based number of the current match (0 when none is
// current) and the number of matches.
func (m Model) Matches() (current, count int) {
	return m.search.current + 1, len(m.search.matches)
}

// CurrentMatch returns the absolute item number of the current match.
func (m Model) CurrentMatch() (int64, bool) {
	s := m.search
	if s.current < 0 || s.current >= len(s.matches) {
		return 0, false
	}
	return s.matches[s.current], true
}

// CurrentMatchCut reports whether the current match cannot be seen
// because its line is cut at the pane's right edge (wrap off) before the
// first occurrence of the query ends: the row shows no highlight at all.
// It is false when the match's item is not held (the pane shows it once
// fetched) or wrap is on.
func (m *Model) CurrentMatchCut() bool {
	abs, ok := m.CurrentMatch()
	if !ok || m.wrap || m.search.match.Query() == "" {
		return false
	}
	it, ok := m.item(abs)
	if !ok {
		return false
	}
	for _, line := range strings.Split(it.Text, "\n") {
		plain := cells.Strip(line)
		if sp, ok := m.search.match.Index(plain); ok {
			// The last cell of a cut line holds the ellipsis.
			end := cells.Width(plain[:sp.End])
			return end > m.width-1 && cells.Width(plain) > m.width
		}
	}
	return false
}

// NearestMatch makes current the first match at or below the top row of
// the view, as less does, else (the view is past the last match, as when
// following) the last match above it, and shows it. It reports whether
// there was a match.
func (m *Model) NearestMatch() bool {
	n := len(m.search.matches)
	if n == 0 {
		return false
	}
	top := m.st.Top.Item
	i := sort.Search(n, func(i int) bool { return m.search.matches[i] >= top })
	m.setCurrent(min(i, n-1))
	return true
}

// NextMatch shows the next match towards the end of the log, wrapping to
// the first.
func (m *Model) NextMatch() bool { return m.step(1) }

// PrevMatch shows the previous match towards the start, wrapping to the
// last.
func (m *Model) PrevMatch() bool { return m.step(-1) }

func (m *Model) step(d int) bool {
	n := len(m.search.matches)
	if n == 0 {
		return false
	}
	if m.search.current < 0 {
		return m.NearestMatch()
	}
	m.setCurrent(((m.search.current+d)%n + n) % n)
	return true
}

func (m *Model) setCurrent(i int) {
	if old, ok := m.CurrentMatch(); ok {
		delete(m.cache, old)
	}
	m.search.current = i
	abs := m.search.matches[i]
	delete(m.cache, abs)
	m.GotoItem(abs)
}

// prune forgets matches trimmed from the log.
func (s *searchState) prune(first int64) {
	i := sort.Search(len(s.matches), func(i int) bool { return s.matches[i] >= first })
	if i == 0 {
		return
	}
	s.matches = s.matches[i:]
	if s.current >= 0 {
		s.current = max(s.current-i, 0)
	}
}

// highlight returns line as plain text with every occurrence of the query
// drawn in the match style (the current match's item in the active style;
// the attribute-only marks without colour), or false when the line does not
// contain the query.
func (m *Model) highlight(abs int64, line string) (string, bool) {
	plain := cells.Strip(line)
	spans := m.search.match.Spans(plain)
	if len(spans) == 0 {
		return "", false
	}
	mark := m.mark(abs)
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(plain[at:sp.Start])
		b.WriteString(mark(plain[sp.Start:sp.End]))
		at = sp.End
	}
	b.WriteString(plain[at:])
	return b.String(), true
}

// mark returns how the matches in item abs are drawn: in the match style, or
// the active one for the current match; with NoColor in the attribute-only
// marks, since lipgloss draws no attribute without colour.
func (m *Model) mark(abs int64) func(string) string {
	cur, ok := m.CurrentMatch()
	active := ok && cur == abs
	st := m.Styles
	switch {
	case st.NoColor && active:
		return st.MatchActiveMark.Render
	case st.NoColor:
		return st.MatchMark.Render
	case active:
		return func(s string) string { return st.MatchActive.Render(s) }
	}
	return func(s string) string { return st.Match.Render(s) }
}
