package logview

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/internal/cells"
)

// memSource is a log held in memory; trim drops items from the front, as
// the supervisor's scrollback does.
type memSource struct {
	first int64
	items []Item
	calls int
}

// page answers req as the dashboard's fetch command does.
func (s *memSource) page(req Request) Page {
	s.calls++
	total := s.first + int64(len(s.items))
	from, n := req.From, req.N
	if from < 0 {
		from = total - int64(n)
	}
	from = max(from, s.first)
	pg := Page{First: s.first, Total: total, From: from}
	for i := from; i < total && n > 0; i++ {
		pg.Items = append(pg.Items, s.items[i-s.first])
		n--
	}
	return pg
}

// serve answers the pane's requests until it needs nothing more, as the
// dashboard's commands do one Update at a time.
func serve(t *testing.T, m *Model, s *memSource) {
	t.Helper()
	for i := 0; ; i++ {
		req, ok := m.Request()
		if !ok {
			return
		}
		if i > 20 {
			t.Fatalf("the pane keeps asking: %+v", req)
		}
		m.SetPage(req, s.page(req), nil)
	}
}

// changed tells the pane what the events would: new bounds, new content.
func changed(t *testing.T, m *Model, s *memSource) {
	t.Helper()
	m.SetBounds(s.first, s.first+int64(len(s.items)))
	m.Changed()
	serve(t, m, s)
}

func (s *memSource) add(format string, from, to int) {
	for i := from; i < to; i++ {
		s.items = append(s.items, Item{Text: fmt.Sprintf(format, i)})
	}
}

func (s *memSource) trim(n int) {
	s.items = s.items[n:]
	s.first += int64(n)
}

func newPane(t *testing.T, src *memSource, w, h int) Model {
	t.Helper()
	m := New(DefaultStyles(theme.Plain()))
	m.SetSize(w, h)
	m.SetLog(State{Follow: true})
	serve(t, &m, src)
	return m
}

func rows(m Model) []string { return strings.Split(m.View(), "\n") }

func checkShape(t *testing.T, m Model) {
	t.Helper()
	r := rows(m)
	if len(r) != m.Height() {
		t.Fatalf("view has %d rows, want %d", len(r), m.Height())
	}
	for i, row := range r {
		if w := ansi.StringWidth(row); w != m.Width() {
			t.Fatalf("row %d is %d cells wide, want %d: %q", i, w, m.Width(), row)
		}
	}
}

func TestFollowShowsBottom(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 100)
	m := newPane(t, src, 20, 5)
	checkShape(t, m)
	if got := strings.TrimSpace(rows(m)[4]); got != "line 99" {
		t.Fatalf("bottom row %q, want line 99", got)
	}
	src.add("line %d", 100, 103)
	changed(t, &m, src)
	if got := strings.TrimSpace(rows(m)[4]); got != "line 102" {
		t.Fatalf("after new lines bottom row %q, want line 102", got)
	}
	if !m.Following() || m.NewItems() != 0 {
		t.Fatal("should still follow")
	}
}

func TestPausedViewStaysStillAsLinesArriveAndAreTrimmed(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 200)
	m := newPane(t, src, 20, 5)
	m.ScrollUp(95) // top row was line 195; now line 100
	serve(t, &m, src)
	if m.Following() {
		t.Fatal("scrolling up must pause following")
	}
	if got := strings.TrimSpace(rows(m)[0]); got != "line 100" {
		t.Fatalf("top row %q, want line 100", got)
	}
	src.add("line %d", 200, 260)
	src.trim(50)
	changed(t, &m, src)
	if got := strings.TrimSpace(rows(m)[0]); got != "line 100" {
		t.Fatalf("after arrivals and trimming, top row %q, want line 100", got)
	}
	if m.NewItems() != 60 {
		t.Fatalf("NewItems = %d, want 60", m.NewItems())
	}
	// Trimmed past the top line: keep to the oldest held.
	src.trim(80)
	changed(t, &m, src)
	if got := strings.TrimSpace(rows(m)[0]); got != "line 130" {
		t.Fatalf("after trimming the top line, top row %q, want line 130", got)
	}
	checkShape(t, m)
}

func TestFollowResumesOnlyAtBottom(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 50)
	m := newPane(t, src, 20, 5)
	m.ScrollUp(3)
	serve(t, &m, src)
	src.add("line %d", 50, 52)
	changed(t, &m, src)
	m.ScrollDown(1)
	serve(t, &m, src)
	if m.Following() {
		t.Fatal("one row down of five is not the bottom")
	}
	m.ScrollDown(3)
	serve(t, &m, src)
	if m.Following() {
		t.Fatal("still one row above the bottom: 2 lines arrived")
	}
	m.ScrollDown(1)
	serve(t, &m, src)
	if !m.Following() {
		t.Fatal("reaching the bottom must resume following")
	}
	if got := strings.TrimSpace(rows(m)[4]); got != "line 51" {
		t.Fatalf("bottom row %q", got)
	}
}

func TestShortLogDoesNotPause(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 3)
	m := newPane(t, src, 20, 5)
	m.ScrollUp(1)
	serve(t, &m, src)
	if !m.Following() {
		t.Fatal("nothing to scroll: must keep following")
	}
	if got := strings.TrimSpace(rows(m)[0]); got != "line 0" {
		t.Fatalf("top row %q", got)
	}
}

func TestWrapScrollsByRows(t *testing.T) {
	src := &memSource{}
	src.items = []Item{{Text: "aaaaaaaaaabbbbbbbbbbcccccccccc"}, {Text: "short"}, {Text: "ddddddddddeeeeeeeeee"}}
	m := newPane(t, src, 10, 2)
	m.SetWrap(true)
	serve(t, &m, src)
	checkShape(t, m)
	if r := rows(m); r[0] != "dddddddddd" || r[1] != "eeeeeeeeee" {
		t.Fatalf("wrapped bottom: %q", r)
	}
	m.ScrollUp(2)
	serve(t, &m, src)
	if r := rows(m); r[0] != "cccccccccc" || strings.TrimSpace(r[1]) != "short" {
		t.Fatalf("two rows up: %q", r)
	}
	m.GotoTop()
	serve(t, &m, src)
	if r := rows(m); r[0] != "aaaaaaaaaa" || r[1] != "bbbbbbbbbb" {
		t.Fatalf("top: %q", r)
	}
	m.SetWrap(false)
	serve(t, &m, src)
	if r := rows(m); r[0] != "aaaaaaaaa…" {
		t.Fatalf("cut line: %q", r)
	}
}

func TestStyledLinesEndResetAndStayInside(t *testing.T) {
	src := &memSource{}
	src.items = []Item{
		{Text: "\x1b[31;1mRED-NO-RESET and a long tail that goes on\x1b[m"},
		{Text: "\x1b[7mREVERSE\x1b[m"},
		{Text: "plain\tthing"},
		{Text: "\x1b[2Jcleared\x1b[5;5H"},
	}
	m := New(DefaultStyles(theme.New(theme.Options{Profile: 1, Dark: true})))
	m.SetSize(12, 4)
	m.SetLog(State{Follow: true})
	serve(t, &m, src)
	checkShape(t, m)
	for i, r := range rows(m) {
		if strings.Contains(r, "\x1b[") && !strings.HasSuffix(strings.TrimRight(r, " "), "\x1b[m") {
			t.Errorf("row %d does not end reset: %q", i, r)
		}
		if strings.Contains(r, "\t") || strings.Contains(r, "\x1b[2J") || strings.Contains(r, "\x1b[5;5H") {
			t.Errorf("row %d leaks a control: %q", i, r)
		}
	}
}

// search starts a search for query and answers the pane's scans from src
// as the host would (the supervisor's Search with the same matcher).
func search(t *testing.T, m *Model, src *memSource, query string) {
	t.Helper()
	m.Search(query)
	if err := answerScans(t, m, src); err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
}

// answerScans answers every Scan the pane asks for from src and returns
// what the first answer said.
func answerScans(t *testing.T, m *Model, src *memSource) error {
	t.Helper()
	var said error
	for i := 0; ; i++ {
		sc, ok := m.NextScan()
		if !ok {
			return said
		}
		if i > 20 {
			t.Fatalf("the pane keeps scanning: %+v", sc)
		}
		match := termtext.NewMatcher(sc.Query)
		var ms []int64
		for j := max(sc.From-src.first, 0); j < int64(len(src.items)); j++ {
			if match.Match(cells.Strip(src.items[j].Text)) {
				ms = append(ms, src.first+j)
			}
		}
		if _, err := m.SetScan(sc, ms, src.first+int64(len(src.items)), nil); err != nil && said == nil {
			said = err
		}
	}
}

func TestSearchHighlightsAndMoves(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 100)
	m := newPane(t, src, 20, 5)
	search(t, &m, src, "line 4")
	if _, n := m.Matches(); n != 11 {
		t.Fatalf("matches = %d, want 11", n)
	}
	serve(t, &m, src)
	if cur, _ := m.CurrentMatch(); cur != 49 {
		t.Fatalf("nearest match %d, want 49", cur)
	}
	m.NextMatch()
	serve(t, &m, src)
	if cur, _ := m.CurrentMatch(); cur != 4 {
		t.Fatalf("next after the last wraps to %d, want 4", cur)
	}
	if m.Following() {
		t.Fatal("jumping to a match pauses following")
	}
	found := false
	for _, r := range rows(m) {
		found = found || strings.TrimSpace(ansi.Strip(r)) == "line 4"
	}
	if !found {
		t.Fatalf("match not on screen: %q", rows(m))
	}
}

// TestSearchMarksWhatTheHostCounts: a lower-case query marks "É" as it
// marks "é", since the host counted the line by the same matcher
// (termtext.Matcher); before, "CAFÉ" was counted but drawn unmarked.
func TestSearchMarksWhatTheHostCounts(t *testing.T) {
	src := &memSource{}
	src.items = []Item{{Text: "CAFÉ au lait"}, {Text: "café noir"}}
	m := newPane(t, src, 30, 10)
	search(t, &m, src, "fé")
	serve(t, &m, src)
	r := rows(m)
	if want := "CA\x1b[1;4;7mFÉ\x1b[m au lait"; !strings.HasPrefix(r[0], want) {
		t.Fatalf("current match row %q, want it to start %q", r[0], want)
	}
	if want := "ca\x1b[7mfé\x1b[m noir"; !strings.HasPrefix(r[1], want) {
		t.Fatalf("other match row %q, want it to start %q", r[1], want)
	}
}

// TestSearchMarksMatchesWithoutColour: NO_COLOR forbids colour, not
// attributes. Matches are drawn in reverse video, the current one also bold
// and underlined, and nothing else on the row is styled.
func TestSearchMarksMatchesWithoutColour(t *testing.T) {
	src := &memSource{}
	src.add("item %d of the log", 0, 10)
	m := newPane(t, src, 30, 10)
	search(t, &m, src, "of")
	serve(t, &m, src)
	if cur, _ := m.CurrentMatch(); cur != 0 {
		t.Fatalf("current match %d, want 0", cur)
	}
	r := rows(m)
	if want := "item 0 \x1b[1;4;7mof\x1b[m the log"; !strings.HasPrefix(r[0], want) {
		t.Fatalf("current match row %q, want it to start %q", r[0], want)
	}
	if want := "item 1 \x1b[7mof\x1b[m the log"; !strings.HasPrefix(r[1], want) {
		t.Fatalf("other match row %q, want it to start %q", r[1], want)
	}
	checkShape(t, m)
}

func TestKeysScroll(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 100)
	m := newPane(t, src, 20, 10)
	press := func(k string) {
		var msg tea.KeyPressMsg
		switch k {
		case "pgup":
			msg = tea.KeyPressMsg{Code: tea.KeyPgUp}
		case "ctrl+d":
			msg = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
		default:
			msg = tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		}
		m, _ = m.Update(msg)
		serve(t, &m, src)
	}
	top := func() string { return strings.TrimSpace(rows(m)[0]) }
	press("K")
	if top() != "line 89" {
		t.Fatalf("K: top %q", top())
	}
	press("pgup")
	if top() != "line 80" {
		t.Fatalf("pgup: top %q", top())
	}
	press("ctrl+d")
	if top() != "line 85" {
		t.Fatalf("ctrl+d: top %q", top())
	}
	press("g")
	if top() != "line 0" {
		t.Fatalf("g: top %q", top())
	}
	press("G")
	if !m.Following() || top() != "line 90" {
		t.Fatalf("G: top %q following %v", top(), m.Following())
	}
	press("f")
	if m.Following() {
		t.Fatal("f pauses")
	}
	press("f")
	if !m.Following() {
		t.Fatal("f resumes")
	}
	press("w")
	if !m.Wrap() {
		t.Fatal("w wraps")
	}
}

func TestViewCostIndependentOfLogSize(t *testing.T) {
	small, big := &memSource{}, &memSource{}
	small.add("line %d", 0, 100)
	big.add("line %d", 0, 1_000_000)
	ms, mb := newPane(t, small, 80, 40), newPane(t, big, 80, 40)
	if len(ms.held.Items) != len(mb.held.Items) {
		t.Fatalf("the pane holds %d items of 100 and %d of 1,000,000", len(ms.held.Items), len(mb.held.Items))
	}
	small.calls, big.calls = 0, 0
	ms.ScrollUp(10)
	serve(t, &ms, small)
	mb.ScrollUp(10)
	serve(t, &mb, big)
	if small.calls != big.calls {
		t.Fatalf("source calls differ: %d vs %d", small.calls, big.calls)
	}
	if len(mb.held.Items) > 3*mb.Height() {
		t.Fatalf("after a scroll the pane holds %d items for a %d-row view", len(mb.held.Items), mb.Height())
	}
}
