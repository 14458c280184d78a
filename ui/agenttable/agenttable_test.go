package agenttable

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/theme"
)

var now = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

func info(id string, st proto.Status, sub proto.SubmissionInfo) proto.AgentInfo {
	a := proto.AgentInfo{Submissions: []proto.SubmissionInfo{sub}}
	a.AgentID, a.Status, a.LastMessage = id, st, "do the\tthing\nnow \x1b[2J"
	return a
}

func ptr[T any](v T) *T { return &v }

// TestRowOfStatusAndReason: the status cell is one of five words, why an
// errored agent ended is NOW's (the host's Summary.Now, else its reason
// from an older host), and NOW is one clean line.
func TestRowOfStatusAndReason(t *testing.T) {
	start := now.Add(-90 * time.Second)
	for _, c := range []struct {
		a           proto.AgentInfo
		stop        bool
		status, now string
	}{
		{info("aaaaaaaa-1", proto.StatusRunning, proto.SubmissionInfo{StartedAt: start}), false, "⠋ running", "do the thing now"},
		{info("aaaaaaaa-2", proto.StatusRunning, proto.SubmissionInfo{StartedAt: start}), true, "◌ stopping", "do the thing now"},
		{info("aaaaaaaa-3", proto.StatusCompleted, proto.SubmissionInfo{StartedAt: start, EndedAt: now, ExitCode: ptr(0)}), false, "✓ completed", "do the thing now"},
		{info("aaaaaaaa-4", proto.StatusErrored, proto.SubmissionInfo{StartedAt: start, EndedAt: now, ExitCode: ptr(2),
			LastError: ptr("submission failed with exit code 2")}), false, "✗ errored", "exit 2"},
		{info("aaaaaaaa-5", proto.StatusErrored, proto.SubmissionInfo{StartedAt: start, EndedAt: now, Signal: "SIGKILL",
			LastError: ptr("interrupted")}), false, "✗ errored", "interrupted"},
		{info("aaaaaaaa-6", proto.StatusErrored, proto.SubmissionInfo{StartedAt: start, EndedAt: now, Signal: "SIGSEGV",
			LastError: ptr("submission killed by signal SIGSEGV")}), false, "✗ errored", "SIGSEGV"},
		{info("aaaaaaaa-7", proto.StatusErrored, proto.SubmissionInfo{StartedAt: start, EndedAt: now, ExitCode: ptr(0),
			LastError: ptr("ended without a result")}), false, "✗ errored", "no result"},
		{info("aaaaaaaa-8", proto.StatusErrored, proto.SubmissionInfo{StartedAt: start, EndedAt: now,
			LastError: ptr("timed out after 5m0s")}), false, "✗ errored", "timed out"},
		{info("aaaaaaaa-9", proto.StatusClosed, proto.SubmissionInfo{StartedAt: start, EndedAt: now}), false, "■ closed", "do the thing now"},
	} {
		r := RowOf(c.a, now, c.stop)
		if got := StatusText(r, 0); got != c.status {
			t.Errorf("%s: status %q, want %q", c.a.AgentID, got, c.status)
		}
		if r.Message != c.now {
			t.Errorf("%s: now %q, want %q", c.a.AgentID, r.Message, c.now)
		}
		// the host's now wins, cleaned
		c.a.Now = "oops:\tdisk\x1b[31m full · exit 3"
		if r := RowOf(c.a, now, c.stop); r.Message != "oops: disk full · exit 3" {
			t.Errorf("%s: the host's now %q", c.a.AgentID, r.Message)
		}
	}
	if r := RowOf(info("x", proto.StatusRunning, proto.SubmissionInfo{StartedAt: start}), now, false); Elapsed(r.Elapsed) != "1m30s" {
		t.Errorf("elapsed %q", Elapsed(r.Elapsed))
	}
}

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 59 * time.Second: "59s", 61 * time.Second: "1m01s", 3599 * time.Second: "59m59s",
		3600 * time.Second: "1h00m", 100 * time.Hour: "100h",
	} {
		if got := Elapsed(d); got != want || len([]rune(got)) > 6 {
			t.Errorf("Elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

// agents returns n completed agents, each with i+1 submissions.
func agents(n int) []proto.AgentInfo {
	as := make([]proto.AgentInfo, n)
	for i := range as {
		as[i].AgentID = string(rune('a'+i)) + "0000000-id"
		as[i].Status, as[i].LastMessage = proto.StatusCompleted, "message"
		for j := 0; j <= i; j++ {
			as[i].Submissions = append(as[i].Submissions, proto.SubmissionInfo{Seq: j + 1, Status: proto.StatusCompleted, StartedAt: now, EndedAt: now})
		}
	}
	return as
}

func table(n, w, h int) Model {
	m := New(DefaultStyles(theme.Plain()))
	m.SetAgents(agents(n), nil)
	m.SetSize(w, h)
	return m
}

func TestViewSizeAndScrolling(t *testing.T) {
	for _, w := range []int{1, 10, 30, 58, 100} {
		m := table(20, w, 6)
		for i := 0; i < 25; i++ {
			m, _ = m.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
			lines := strings.Split(m.View(), "\n")
			if len(lines) != 6 {
				t.Fatalf("width %d: %d lines", w, len(lines))
			}
			for _, l := range lines {
				if ansi.StringWidth(l) != w {
					t.Fatalf("width %d: line of %d cells: %q", w, ansi.StringWidth(l), l)
				}
			}
			if w >= 30 && !strings.Contains(m.View(), "› "+termtext.ShortID(m.SelectedID())) {
				t.Fatalf("selected row not visible:\n%s", m.View())
			}
		}
	}
}

func TestSelectionFollowsTheAgent(t *testing.T) {
	m := table(3, 60, 6)
	m.MoveDown()
	id := m.SelectedID()
	as := append([]proto.AgentInfo{{Summary: proto.Summary{AgentID: "new00000-id"}}}, agents(3)...)
	m.SetAgents(as, nil)
	if m.SelectedID() != id {
		t.Fatalf("selection moved to %s", m.SelectedID())
	}
	m.SetAgents(as[:1], nil)
	if m.SelectedID() != "new00000-id" {
		t.Fatalf("selection lost: %q", m.SelectedID())
	}
	m.SetAgents(nil, nil)
	if m.SelectedID() != "" || !strings.Contains(m.View(), "no agents yet") {
		t.Fatalf("empty table:\n%s", m.View())
	}
}

func TestNarrowDropsColumnsNotStatus(t *testing.T) {
	m := table(1, 34, 3)
	v := m.View()
	if !strings.Contains(v, "✓ completed") {
		t.Fatalf("status lost at 34 cells:\n%s", v)
	}
	if strings.Contains(v, "TIME") {
		t.Fatalf("TIME kept at 34 cells:\n%s", v)
	}
}

// TestUsageColumn: the cost (else the tokens) gets a column of its own
// (a long NOW cannot push it out), which narrow tables drop after # and
// before TIME; a table of agents that report no usage has no column.
func TestUsageColumn(t *testing.T) {
	m := table(2, 100, 4)
	if strings.Contains(m.View(), "USAGE") {
		t.Fatalf("USAGE column without usage:\n%s", m.View())
	}
	as := agents(2)
	as[0].Usage = proto.Usage{InputTokens: 38000, OutputTokens: 400, CostUSD: 0.1937}
	as[0].LastMessage = strings.Repeat("a long message ", 10)
	m.SetAgents(as, nil)
	v := m.View()
	if !strings.Contains(v, "USAGE") || !strings.Contains(v, "    $0.1937 a long message") {
		t.Fatalf("usage at 100 cells:\n%s", v)
	}
	m.SetSize(84, 4) // no room for #, TIME and USAGE: # goes first
	if v := m.View(); !strings.Contains(v, "TIME") || !strings.Contains(v, "$0.1937") || strings.Contains(v, " # ") {
		t.Fatalf("at 84 cells:\n%s", v)
	}
	m.SetSize(70, 4) // NOW keeps MinNow cells: TIME goes too, # comes back
	if v := m.View(); strings.Contains(v, "USAGE") || strings.Contains(v, "TIME") || !strings.Contains(v, " # ") {
		t.Fatalf("at 70 cells:\n%s", v)
	}
}
