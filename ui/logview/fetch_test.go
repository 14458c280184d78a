package logview

import (
	"fmt"
	"strings"
	"testing"
)

// Tests of what the pane asks for and when (Request, SetPage, SetBounds,
// Changed): the owner fetches in commands, the pane never reads a log.

// TestPausedPaneFetchesNothingWhileLinesArriveBelow: the events' bounds
// are enough for a view that does not show the end; the "N new" count
// follows them.
func TestPausedPaneFetchesNothingWhileLinesArriveBelow(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 200)
	m := newPane(t, src, 20, 5)
	m.ScrollUp(50)
	serve(t, &m, src)
	top := rows(m)[0]
	src.calls = 0
	for i := 0; i < 10; i++ {
		src.add("line %d", 200+i*10, 210+i*10)
		changed(t, &m, src)
	}
	if src.calls != 0 {
		t.Fatalf("a paused view fetched %d times while lines arrived below it", src.calls)
	}
	if m.NewItems() != 100 || rows(m)[0] != top {
		t.Fatalf("NewItems = %d, top row %q (was %q)", m.NewItems(), rows(m)[0], top)
	}
}

// TestFollowingPaneAsksOncePerChangeOneInFlight: changes that come while
// a fetch is out cost one more fetch when it is answered, not one each.
func TestFollowingPaneAsksOncePerChangeOneInFlight(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 20)
	m := newPane(t, src, 20, 5)
	src.add("line %d", 20, 25)
	m.SetBounds(0, 25)
	m.Changed()
	req, ok := m.Request()
	if !ok || req.From >= 0 {
		t.Fatalf("following after a change: request %+v %v, want the last items", req, ok)
	}
	src.add("line %d", 25, 30)
	m.Changed()
	m.Changed()
	if _, again := m.Request(); again {
		t.Fatal("a second request while one is in flight")
	}
	m.SetPage(req, src.page(req), nil)
	if got := strings.TrimSpace(rows(m)[4]); got != "line 29" {
		t.Fatalf("bottom row %q after the first answer, want line 29 (the page is newer than the request)", got)
	}
	req, ok = m.Request()
	if !ok {
		t.Fatal("changes during the fetch must make one more request")
	}
	m.SetPage(req, src.page(req), nil)
	if _, again := m.Request(); again {
		t.Fatal("nothing changed since the last answer: no more requests")
	}
}

// TestAnswerForAnEarlierLogIsDropped: a page fetched for the log shown
// before SetLog never lands in the next one.
func TestAnswerForAnEarlierLogIsDropped(t *testing.T) {
	a, b := &memSource{}, &memSource{}
	a.add("a %d", 0, 10)
	b.add("b %d", 0, 10)
	m := newPane(t, a, 20, 5)
	a.add("a %d", 10, 11)
	m.Changed()
	old, _ := m.Request()
	m.SetLog(State{Follow: true})
	m.SetPage(old, a.page(old), nil)
	if strings.Contains(m.View(), "a ") {
		t.Fatalf("the earlier log's page was drawn: %q", rows(m))
	}
	serve(t, &m, b)
	if got := strings.TrimSpace(rows(m)[4]); got != "b 9" {
		t.Fatalf("bottom row %q, want b 9", got)
	}
}

// TestFailedFetchIsKeptAndNotRetriedUntilSomethingChanges: the error
// reaches Err for the owner to show; the pane does not spin on it.
func TestFailedFetchIsKeptAndNotRetriedUntilSomethingChanges(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 10)
	m := newPane(t, src, 20, 5)
	m.Changed()
	req, _ := m.Request()
	m.SetPage(req, Page{}, fmt.Errorf("host does not answer"))
	if m.Err() == nil || !strings.Contains(m.Err().Error(), "does not answer") {
		t.Fatalf("Err = %v", m.Err())
	}
	if got := strings.TrimSpace(rows(m)[4]); got != "line 9" {
		t.Fatalf("what the pane held is still drawn: bottom row %q", got)
	}
	if _, ok := m.Request(); ok {
		t.Fatal("retried at once after a failure")
	}
	m.Changed()
	req, ok := m.Request()
	if !ok {
		t.Fatal("a change must retry")
	}
	m.SetPage(req, src.page(req), nil)
	if m.Err() != nil {
		t.Fatalf("Err after a good page = %v", m.Err())
	}
}

// TestScrollsWhileAPageIsOutAddUp: keys pressed while the items they
// scroll to are being fetched (a hundred J sent at once) all count.
func TestScrollsWhileAPageIsOutAddUp(t *testing.T) {
	src := &memSource{}
	src.add("line %d", 0, 500)
	m := newPane(t, src, 20, 5)
	m.GotoTop()
	serve(t, &m, src)
	var out []Request
	for i := 0; i < 100; i++ {
		m.ScrollDown(1)
		if req, ok := m.Request(); ok {
			out = append(out, req)
		}
	}
	m.ScrollUp(3)
	for len(out) > 0 {
		req := out[0]
		out = out[1:]
		m.SetPage(req, src.page(req), nil)
		if req, ok := m.Request(); ok {
			out = append(out, req)
		}
	}
	if got := strings.TrimSpace(rows(m)[0]); got != "line 97" {
		t.Fatalf("100 rows down and 3 up from the top: top row %q, want line 97", got)
	}
}
