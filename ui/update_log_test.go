package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
	"github.com/subdash/subdash/theme"
)

// Update()/View() tests of the log pane: submissions, scrolling, follow
// mode, search, the pager and transcripts.

func TestMoveBetweenSubmissions(t *testing.T) {
	f := newFake()
	f.add(idB, "three runs", proto.StatusCompleted, proto.StatusErrored, proto.StatusCompleted)
	for seq := 1; seq <= 3; seq++ {
		f.print(idB, seq, fmt.Sprintf("output of run %d", seq))
	}
	h := newHarness(t, f, 100, 30)
	h.wantScreen("7b9e4c21 · #3/3")
	h.wantScreen("output of run 3")
	h.keys("[")
	h.wantScreen("7b9e4c21 · #2/3")
	h.wantScreen("output of run 2")
	h.keys("[", "[")
	h.wantScreen("already at the first submission (#1 of 3)")
	h.wantScreen("output of run 1")
	h.keys("]", "]")
	h.wantScreen("#3/3")
	h.keys("]")
	h.wantScreen("already at the latest submission")
}

func TestScrollKeysAndFollow(t *testing.T) {
	f := newFake()
	f.add(idA, "count", proto.StatusRunning)
	for i := 0; i < 200; i++ {
		f.print(idA, 1, fmt.Sprintf("line %d", i))
	}
	h := newHarness(t, f, 100, 30) // log pane: 15 rows
	top := func() string {
		for _, l := range strings.Split(h.screen(), "\n") {
			if i := strings.Index(l, "│line "); i >= 0 {
				return strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(l[i+len("│"):]), "│"), " ")
			}
		}
		return ""
	}
	h.wantScreen("following")
	if top() != "line 185" {
		t.Fatalf("top %q", top())
	}
	for _, c := range []struct{ key, want string }{
		{"K", "line 184"}, {"ctrl+y", "line 183"}, {"J", "line 184"}, {"ctrl+e", "line 185"},
	} {
		h.keys(c.key)
		if top() != c.want {
			t.Fatalf("after %s: top %q, want %q", c.key, top(), c.want)
		}
	}
	h.wantScreen("following") // scrolled back down to the bottom
	for _, c := range []struct{ key, want string }{
		{"ctrl+u", "line 178"}, {"pgup", "line 164"}, {"b", "line 150"}, {"ctrl+d", "line 157"},
		{"pgdown", "line 171"}, {"g", "line 0"}, {"space", "line 14"}, {"G", "line 185"},
		{"home", "line 0"}, {"end", "line 185"},
	} {
		h.keys(c.key)
		if top() != c.want {
			t.Fatalf("after %s: top %q, want %q", c.key, top(), c.want)
		}
	}
	h.keys("f")
	h.wantScreen("paused")
	f.print(idA, 1, "line 200", "line 201")
	h.sync(idA)
	h.wantScreen("↓ 2 new lines · G follows")
	if top() != "line 185" {
		t.Fatalf("paused view moved: top %q", top())
	}
	h.keys("f")
	h.wantScreen("following")
	h.noScreen("new lines")
	h.keys("w")
	h.wantScreen("wrap · following")
}

func TestLinesArriveAndAreTrimmedWhileScrolledUp(t *testing.T) { // H18 at the model level
	f := newFake()
	f.add(idA, "count", proto.StatusRunning)
	for i := 0; i < 300; i++ {
		f.print(idA, 1, fmt.Sprintf("line %d", i))
	}
	h := newHarness(t, f, 100, 30)
	for i := 0; i < 300 && !strings.Contains(h.view(), "│line 100 "); i++ {
		h.keys("K")
	}
	row := func() int {
		for i, l := range strings.Split(h.view(), "\n") {
			if strings.Contains(l, "│line 100 ") {
				return i
			}
		}
		return -1
	}
	want := row()
	for i := 300; i < 600; i += 50 {
		for j := i; j < i+50; j++ {
			f.print(idA, 1, fmt.Sprintf("line %d", j))
		}
		f.trim(idA, 1, 10)
		h.sync(idA)
		if got := row(); got != want {
			t.Fatalf("line 100 moved from row %d to %d:\n%s", want, got, h.screen())
		}
	}
	h.wantScreen("↓ 300 new lines")
}

func TestOutputOfOtherAgentsLeavesTheLogAlone(t *testing.T) {
	f := threeAgents()
	h := newHarness(t, f, 100, 30)
	before := f.windowCalls(idA)
	f.print(idB, 1, "more changelog")
	h.sync(idB)
	if got := f.windowCalls(idA); got != before {
		t.Fatalf("output of an agent not shown read the shown log: %d window calls", got-before)
	}
	f.print(idA, 1, "new step")
	h.sync(idA)
	h.wantScreen("new step")
}

// TestUpdateReadsNoWindowItself: the log pane's windows are fetched in
// commands (for a viewer each is a call on the socket), never inside
// Update, and a view paused above the end fetches nothing while lines
// arrive: the snapshot's counts say what changed (SPEC §9).
func TestUpdateReadsNoWindowItself(t *testing.T) {
	f := newFake()
	f.add(idA, "count", proto.StatusRunning)
	for i := 0; i < 200; i++ {
		f.print(idA, 1, fmt.Sprintf("line %d", i))
	}
	h := newHarness(t, f, 100, 30)
	h.wantScreen("line 199")
	update := func(msg tea.Msg) tea.Cmd {
		before := f.windowCalls(idA)
		nm, cmd := h.m.Update(msg)
		h.m = nm.(Model)
		if got := f.windowCalls(idA); got != before {
			t.Fatalf("Update(%T) read %d windows itself", msg, got-before)
		}
		return cmd
	}
	f.print(idA, 1, "line 200")
	cmd := update(ChangesMsg{Changes: changesOf(h.m.agents, f.Agents(), idA)})
	h.noScreen("line 200")
	before := f.windowCalls(idA)
	h.send(cmd()) // the command fetches; its answer draws
	if f.windowCalls(idA) != before+1 {
		t.Fatalf("one change cost %d window reads, want 1", f.windowCalls(idA)-before)
	}
	h.wantScreen("line 200")

	for i := 0; i < 20; i++ {
		h.keys("K") // paused, 20 rows above the end
	}
	before = f.windowCalls(idA)
	for i := 201; i < 260; i++ {
		f.print(idA, 1, fmt.Sprintf("line %d", i))
		h.sync(idA)
	}
	if got := f.windowCalls(idA) - before; got != 0 {
		t.Fatalf("a paused view read %d windows while 59 lines arrived below it", got)
	}
	h.wantScreen("59 new lines")
}

func TestPager(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("o")
	h.wantScreen("no pager configured")
	var opened strings.Builder
	var feed func(context.Context, io.Writer) error
	h.m.opts.Pager = func(f func(context.Context, io.Writer) error) tea.ExecCommand { feed = f; return nil }
	h.keys("o")
	_ = feed(context.Background(), &opened) // as tea.Exec runs it: in the pager's goroutine, after Update
	if opened.String() != "lines of 3fa2c1d0 #1\n" || h.execs != 1 {
		t.Fatalf("pager opened %q (%d execs)", opened.String(), h.execs)
	}
	h.send(pagerDoneMsg{err: errors.New("exit status 1")})
	h.wantScreen("✗ pager failed (exit status 1); set $PAGER to a pager such as less")
	h.wantScreen("3fa2c1d0 · #1/1") // the dashboard is intact
}

// TestPagerNotFoundInPlainWords: a pager that is not installed says which
// command failed and what to do, not just "exit status 127".
func TestPagerNotFoundInPlainWords(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.m.opts.Pager = func(func(context.Context, io.Writer) error) tea.ExecCommand { return nil }
	h.m.opts.PagerCommand = "nonexistentpager"
	h.keys("o")
	h.send(pagerDoneMsg{err: errors.New("exit status 127")})
	h.wantScreen(`✗ pager "nonexistentpager" failed (exit status 127); set $PAGER to a pager such as less`)
	checkFrame(t, h.view(), 100, 30)
}

func TestTranscriptToggle(t *testing.T) {
	f := newFake()
	f.cfg.PresetName, f.cfg.PresetFormat = "claude", "claude"
	a := f.add(idA, "explain", proto.StatusRunning)
	a.info.SessionID = idA
	a.info.Activity = "Bash: go test ./..."
	a.info.Usage = proto.Usage{InputTokens: 1234, OutputTokens: 345, CostUSD: 0.0123}
	f.print(idA, 1, `{"type":"assistant"}`)
	a.entries[1] = transcriptFixture()
	h := newHarness(t, f, 240, 35)
	h.wantScreen("3fa2c1d0 · #1/1 ● running · session 3fa2c1d0 · transcript")
	h.wantScreen("$0.0123 → Bash: go test ./...") // usage column (the cost), then the activity of an older host
	h.wantScreen("⚙ Bash  go test ./...")
	h.wantScreen("✓ result · 1.2k in / 345 out tokens · $0.0123")
	h.keys("t")
	h.wantScreen("· raw ·")
	h.wantScreen(`{"type":"assistant"}`)
	h.keys("t")
	h.wantScreen("⚙ Bash")
}

func TestRawOnlyWithoutPreset(t *testing.T) {
	h := newHarness(t, threeAgents(), 100, 30)
	h.keys("t")
	h.wantScreen("raw output only")
}

func TestEvictedSubmissionIsReadBack(t *testing.T) {
	f := newFake()
	a := f.add(idB, "runs", proto.StatusCompleted, proto.StatusCompleted, proto.StatusCompleted)
	f.print(idB, 1, "first run output")
	a.evicted[1] = true
	h := newHarness(t, f, 100, 30)
	h.keys("[", "[")
	h.wantCalls("load 7b9e4c21 1")
	h.wantScreen("first run output")
}

// TestTranscriptShowsStderr: a CLI that fails before its first event says
// why on stderr; the transcript view shows that line, marked and in the
// stderr style of the raw view.
func TestTranscriptShowsStderr(t *testing.T) {
	const line = "/bin/sh: 1: claude: not found"
	f := newFake()
	f.cfg.PresetName, f.cfg.PresetFormat = "claude", "claude"
	a := f.add(idC, "explain", proto.StatusErrored)
	a.lines[1] = []proto.Line{{Text: line, Width: len(line), Stderr: true}}
	a.entries[1] = []transcript.Entry{{Kind: transcript.KindStderr, Text: line + "\x1b[K"}}
	h := newHarness(t, f, 100, 30)
	h.wantScreen("· transcript ·")
	h.wantScreen("│stderr " + line + " ")
	checkFrame(t, h.view(), 100, 30)

	h.m = colourModel(h.m, f)
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	if want := h.m.styles.Stderr.Render("stderr " + line); !strings.Contains(h.view(), want) {
		t.Fatalf("the stderr entry is not in the stderr style %q:\n%q", want, h.view())
	}
}

// TestSubmissionTitleSaysHowItWent: the log pane's title names the shown
// submission, how it went and what it was asked, cut to fit, for earlier
// submissions as for the latest.
func TestSubmissionTitleSaysHowItWent(t *testing.T) {
	f := newFake()
	a := f.add(idB, "", proto.StatusCompleted, proto.StatusErrored, proto.StatusErrored, proto.StatusRunning)
	long := strings.TrimSpace(strings.Repeat("explain the parser in detail ", 8))
	stopped := "interrupted"
	a.info.Submissions[2].LastError, a.info.Submissions[2].ExitCode = &stopped, nil
	for i, msg := range []string{"write the changelog", "run the flaky tests\ntwice", "stop halfway", long} {
		a.info.Submissions[i].Message = msg
	}
	a.info.LastMessage = long
	h := newHarness(t, f, 100, 30)
	want := "╭─ 7b9e4c21 · #4/4 ● running · following · “explain the parser in detail explain the parser in…” ──╮"
	if got := h.logTitle(); got != want {
		t.Fatalf("title\n%s\nwant\n%s", got, want)
	}
	for _, c := range []struct{ key, want string }{
		{"[", "╭─ 7b9e4c21 · #3/4 ✗ interrupted · following · “stop halfway” ─"},
		{"[", "╭─ 7b9e4c21 · #2/4 ✗ errored (exit 2) · following · “run the flaky tests twice” ─"},
		{"[", "╭─ 7b9e4c21 · #1/4 ✓ completed · following · “write the changelog” ─"},
	} {
		h.keys(c.key)
		if got := h.logTitle(); !strings.HasPrefix(got, c.want) {
			t.Fatalf("after %s: title\n%s\nwant\n%s", c.key, got, c.want)
		}
		checkFrame(t, h.view(), 100, 30)
	}
	h.keys("]", "]", "]")
	nm, _ := h.m.Update(keyMsg("i")) // the interrupt is asked for, not done yet
	h.m = nm.(Model)
	if got := h.logTitle(); !strings.HasPrefix(got, "╭─ 7b9e4c21 · #4/4 ◌ stopping · following · “explain") {
		t.Fatalf("title while stopping: %s", got)
	}
}

// TestPagerShowsTheTranscript: in the transcript view the pager is fed
// the transcript as drawn (not the CLI's JSON lines), no file written; the
// raw view feeds the display lines.
func TestPagerShowsTheTranscript(t *testing.T) {
	f := newFake()
	f.cfg.PresetName, f.cfg.PresetFormat = "claude", "claude"
	a := f.add(idA, "explain", proto.StatusCompleted)
	f.print(idA, 1, `{"type":"assistant"}`)
	a.entries[1] = transcriptFixture()
	h := newHarness(t, f, 180, 35)
	var feed func(context.Context, io.Writer) error
	h.m.opts.Pager = func(f func(context.Context, io.Writer) error) tea.ExecCommand { feed = f; return nil }
	// paged runs the feed as tea.Exec does: after Update, in the pager's
	// goroutine.
	paged := func() string {
		var b strings.Builder
		if err := feed(context.Background(), &b); err != nil {
			t.Errorf("feed: %v", err)
		}
		return b.String()
	}
	h.keys("o")
	content := paged()
	if !strings.Contains(content, "⚙ Bash  go test ./...") || strings.Contains(content, `{"type"`) {
		t.Fatalf("pager got %q", content)
	}
	h.send(pagerDoneMsg{})
	h.keys("t", "o")
	if content = paged(); content != "lines of 3fa2c1d0 #1\n" {
		t.Fatalf("raw view paged %q", content)
	}
}

// An agent on the Kubernetes runner shows its pod and node in the log
// pane's title (SPEC §13).
func TestLogTitleSaysWhereTheAgentRuns(t *testing.T) {
	f := newFake()
	a := f.add(idB, "task", proto.StatusRunning)
	a.info.Pod, a.info.Node = "subdash-7b9e4c21-x", "node-3"
	h := newHarness(t, f, 200, 30)
	if got := h.logTitle(); !strings.HasPrefix(got, "╭─ 7b9e4c21 · #1/1 ● running · pod subdash-7b9e4c21-x on node-3") {
		t.Fatalf("title %q does not say where the agent runs", got)
	}
}

// TestPagerFeedsTheWholeTranscript: the pager's feed in the transcript
// view writes every entry, asking for them a page at a time (a viewer's
// host answers at most 100,000 per request; asking for more gave an empty
// pager).
func TestPagerFeedsTheWholeTranscript(t *testing.T) {
	f := newFake()
	f.cfg.PresetName, f.cfg.PresetFormat = "claude", "claude"
	a := f.add(idA, "explain", proto.StatusCompleted)
	var es []transcript.Entry
	for i := range 25000 {
		es = append(es, transcript.Entry{Kind: transcript.KindText, Text: fmt.Sprintf("entry %d", i)})
	}
	a.entries[1] = es
	var b strings.Builder
	if err := writeTranscript(context.Background(), &b, f, idA, 1, theme.New(theme.Options{Profile: colorprofile.ASCII, Dark: true})); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "\n"); n != 25000 || !strings.Contains(out, "entry 0\n") || !strings.Contains(out, "entry 24999\n") {
		t.Fatalf("the pager got %d lines, from %q to %q", n, out[:min(len(out), 40)], out[max(0, len(out)-40):])
	}
}

// TestLogPaneSaysWhatTheLogFileMisses: an agent whose latest submission's
// log lost bytes to the cap (Summary.LogDropped, SPEC §5) has the count
// below its log pane; an earlier submission, whose log holds every byte,
// does not.
func TestLogPaneSaysWhatTheLogFileMisses(t *testing.T) {
	f := newFake()
	a := f.add(idA, "flood", proto.StatusCompleted, proto.StatusRunning)
	a.info.LogDropped = 3 << 30
	f.print(idA, 2, "y")
	h := newHarness(t, f, 200, 30)
	h.wantScreen("3.2 GB of this output not in its log file (o marks where)")
	h.keys("[")
	h.wantScreen("#1/2")
	h.noScreen("not in its log file")
}
