package logview

import (
	"errors"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/ui/internal/cells"
)

// searchState is the search over the shown log: the query's matcher, the
// absolute numbers of the items that match (ascending), which of them is
// current, and how far the host has scanned. The query outlives SetLog: a
// search goes on in the next log shown.
type searchState struct {
	match    termtext.Matcher
	last     string // the last non-empty query: / then enter alone searches it again
	matches  []int64
	current  int   // index into matches, -1 when none is current
	gen      int   // increases with every query and every log: the answer to an older Scan is dropped
	inFlight bool  // a Scan is out
	to       int64 // the items before it were scanned
	jump     bool  // show the nearest match when the first answer comes
}

// Scan is the part of the shown log the search has not looked at yet: the
// owner asks the host for the items from From on that match Query (the
// supervisor's Search, GET /v1/agents/{id}/search) in a command, off the
// Update goroutine, and hands the answer to SetScan. One Scan is out at a
// time.
type Scan struct {
	Query string
	From  int64 // absolute number of the first item to look at
	gen   int
}

// ErrNoSearch is what a match key says when there is no search.
var ErrNoSearch = errors.New("no search")

// NoMatchError is what a search says when the log holds no match of its
// query.
type NoMatchError struct{ Query string }

// Error is the message line's text: no match for “query”.
func (e *NoMatchError) Error() string { return "no match for “" + e.Query + "”" }

// SearchMsg is what the pane's search keys have to say on the owner's
// message line: Err is ErrNoSearch or a *NoMatchError when a match key
// found nothing to show, nil when the search was cleared (what an earlier
// search said is stale then).
type SearchMsg struct{ Err error }

// Search starts a new search of the shown log for query ("" ends the
// search): matching items are highlighted at once with the matcher the
// host counts them with (termtext.Matcher: smart case), the matches come
// from the Scans the owner runs, and the first answer shows the nearest
// match (NearestMatch) or says there is none (SetScan).
func (m *Model) Search(query string) {
	last := m.search.last
	if query != "" {
		last = query
	}
	m.search = searchState{match: termtext.NewMatcher(query), last: last, current: -1, gen: m.search.gen + 1, jump: query != ""}
	m.Refresh()
}

// SearchAgain is "enter alone" at the search prompt, as in less and vi:
// the next match while the last search is the current one, else the last
// search again from the view. It returns the command that says there is
// nothing to show, if so.
func (m *Model) SearchAgain() tea.Cmd {
	switch {
	case m.search.last == "":
		return nil
	case m.Query() == m.search.last:
		return m.moveMatch(true)
	}
	m.Search(m.search.last)
	return nil
}

// LastQuery returns the last non-empty query, which SearchAgain searches.
func (m Model) LastQuery() string { return m.search.last }

// Query returns the current search query, "" when there is none.
func (m Model) Query() string { return m.search.match.Query() }

// NextScan returns the part of the log to scan next, if any: from where
// the last answer ended (or the oldest item held) to the newest, once
// items arrived since, or at once after a new query. It counts the Scan as
// out until SetScan gets its answer or the query or log changes.
func (m *Model) NextScan() (Scan, bool) {
	s := &m.search
	if !m.open || s.match.Query() == "" || s.inFlight {
		return Scan{}, false
	}
	from := max(s.to, m.first)
	if from >= m.total && !s.jump {
		return Scan{}, false
	}
	s.inFlight = true
	return Scan{Query: s.match.Query(), From: from, gen: s.gen}, true
}

// SetScan records the answer to Scan sc: the absolute numbers of the
// matching items (ascending) and where the scan ended. The answer to a
// Scan of an earlier query or log is dropped. After a new query it shows
// the nearest match and reports found, or returns a *NoMatchError; a
// failed scan returns its error (and is asked again once items arrive).
func (m *Model) SetScan(sc Scan, matches []int64, to int64, err error) (found bool, _ error) {
	s := &m.search
	if sc.gen != s.gen {
		return false, nil
	}
	s.inFlight = false
	if err != nil {
		return false, err
	}
	m.addMatches(matches)
	s.to = to
	if !s.jump {
		return false, nil
	}
	s.jump = false
	if !m.NearestMatch() {
		return false, &NoMatchError{Query: s.match.Query()}
	}
	return true, nil
}

// addMatches records the absolute numbers of matching items, ascending;
// numbers not after the last known match are ignored.
func (m *Model) addMatches(abs []int64) {
	for _, a := range abs {
		if n := len(m.search.matches); n == 0 || a > m.search.matches[n-1] {
			m.search.matches = append(m.search.matches, a)
		}
	}
}

// resetScan forgets what the search found in the log shown so far, for
// another log: the query stays, the next Scan starts from its oldest item.
func (s *searchState) resetScan() {
	s.matches, s.current = nil, -1
	s.gen++
	s.inFlight, s.to, s.jump = false, 0, false
}

// moveMatch shows the next or previous match; when there is none to show
// it returns the command saying why.
func (m *Model) moveMatch(next bool) tea.Cmd {
	if m.Query() == "" {
		return searchSays(ErrNoSearch)
	}
	var moved bool
	if next {
		moved = m.NextMatch()
	} else {
		moved = m.PrevMatch()
	}
	if !moved {
		return searchSays(&NoMatchError{Query: m.Query()})
	}
	return nil
}

func searchSays(err error) tea.Cmd { return func() tea.Msg { return SearchMsg{Err: err} } }

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
	m.search.current = i
	m.GotoItem(m.search.matches[i])
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
	return cells.Mark(plain, spans, m.mark(abs)), true
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
