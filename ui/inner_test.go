package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// innerAgents is the tree scene on a host of inner agents: review's
// claude started an Explore inner agent, which started a nested one, and
// a second that completed; lint's earlier submission had one (not shown:
// rows show the latest submission's).
func innerAgents() *fakeSup {
	f := treeAgents()
	f.cfg.Features = append(f.cfg.Features, proto.FeatureInnerAgents)
	at := func(d time.Duration) proto.Time { return proto.Time{Time: t0.Add(-d)} }
	f.find(idReview).info.InnerAgents = []proto.InnerAgent{
		{TaskID: "t1", SubmissionSeq: 1, Description: "Explore the parser", TaskType: "local_agent", Status: proto.InnerRunning,
			LastTool: "Grep", ToolCount: 7, Tokens: 18400, StartedAt: at(50 * time.Second)},
		{TaskID: "t2", ParentTaskID: "t1", SubmissionSeq: 1, Description: "Read the lexer", TaskType: "local_agent", Status: proto.InnerRunning,
			LastTool: "Read", ToolCount: 2, StartedAt: at(20 * time.Second)},
		{TaskID: "t3", SubmissionSeq: 1, Description: "Check the docs", TaskType: "local_agent", Status: proto.InnerCompleted,
			CLIStatus: "completed", LastTool: "Read", ToolCount: 1, ElapsedMS: 12500, StartedAt: at(70 * time.Second),
			EndedAt: at(57 * time.Second), Summary: "docs match the grammar"},
	}
	lint := f.find(idLint)
	lint.info.InnerAgents = []proto.InnerAgent{{TaskID: "old", SubmissionSeq: 0, Description: "an earlier one", Status: proto.InnerCompleted}}
	withRates(f)
	return f
}

// withRates puts the host's output rates on f's agents (the activity
// column): review writes more and more, unit went quiet a minute ago, lint
// (running) wrote nothing in two minutes: a flat line; the rest ended.
func withRates(f *fakeSup) {
	f.cfg.Features = append(f.cfg.Features, proto.FeatureOutputRate)
	newest := proto.Time{Time: t0.Truncate(proto.RateBucket)}
	if a := f.find(idReview); a != nil {
		a.info.OutputRate = &proto.OutputRate{BucketSeconds: 15, Newest: newest, Bytes: [proto.RateBuckets]int64{0, 40, 300, 1500, 5000, 20000, 90000, 3000}}
	}
	if a := f.find(idUnit); a != nil {
		a.info.OutputRate = &proto.OutputRate{BucketSeconds: 15, Newest: proto.Time{Time: newest.Add(-time.Minute)}, Bytes: [proto.RateBuckets]int64{0, 0, 0, 9000, 9000, 9000, 9000, 9000}}
	}
	if a := f.find(idA); a != nil {
		a.info.OutputRate = &proto.OutputRate{BucketSeconds: 15, Newest: newest, Bytes: [proto.RateBuckets]int64{10, 10, 0, 0, 200, 2000, 2000, 800}}
	}
}

// TestGoldenActivity: the ACTIVITY column at three widths, where it fits:
// 3fa2c1d0 writes more and more, the others ended.
func TestGoldenActivity(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {100, 40}, {120, 35}, {160, 45}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			var f *fakeSup
			if sz[0] == 100 {
				f = innerAgents() // stacked: the tree, inner rows and the column
			} else {
				f = threeAgents()
				withRates(f)
			}
			h := newHarness(t, f, sz[0], sz[1])
			checkFrame(t, h.view(), sz[0], sz[1])
			golden.RequireEqual(t, []byte(h.view()))
		})
	}
}

func TestGoldenInner(t *testing.T) {
	runGoldens(t, []goldenScene{
		{"inner", innerAgents, nil},
		{"inner_selected", innerAgents, func(h *harness) { h.keys("j", "j") }}, // Read the lexer
		{"inner_folded", innerAgents, func(h *harness) { h.keys("z") }},        // review
	}, treeSizes)
}

// TestInnerRowsUnderTheirAgent: the inner agents of the latest submission
// are rows under their agent, before its child agents, nested by their
// parent task, marked inner, with status, tool, tool count, tokens and
// elapsed time; without the feature none shows.
func TestInnerRowsUnderTheirAgent(t *testing.T) {
	h := newHarness(t, innerAgents(), 160, 40)
	for _, want := range []string{
		"  ├─ ◇ Explore the parser ",
		"  │  └─ ◇ Read the lexer ",
		"  ├─ ◇ Check the docs ",
		"  ├─ tests ",
		"inner · → Grep · 7 tools",
		"inner · 1 tool, last Rea",
	} {
		h.wantScreen(want)
	}
	explore := h.line("◇ Explore the parser")
	if !strings.Contains(explore, "running") || !strings.Contains(explore, " 50s ") {
		t.Errorf("Explore's row lacks its status or elapsed time: %q", explore)
	}
	if docs := h.line("◇ Check the docs"); !strings.Contains(docs, "✓ completed") || !strings.Contains(docs, " 12s ") {
		t.Errorf("Check the docs' row: %q", docs)
	}
	h.noScreen("an earlier one")
	v := h.view()
	if strings.Index(v, "Read the lexer") > strings.Index(v, "Check the docs") || strings.Index(v, "Check the docs") > strings.Index(v, "├─ tests") {
		t.Fatalf("inner rows out of order:\n%s", v)
	}

	f := innerAgents()
	f.cfg.Features = []string{proto.FeatureTextMessage, proto.FeatureTree}
	old := newHarness(t, f, 100, 50)
	old.noScreen("Explore the parser")
}

// line returns the screen's first line holding substr.
func (h *harness) line(substr string) string {
	for _, l := range strings.Split(h.screen(), "\n") {
		if strings.Contains(l, substr) {
			return l
		}
	}
	return ""
}

// TestInnerRowRefusesAgentKeys: on an inner agent's row, send, close,
// resume, forget, interrupt and cancel-queue say what it is and do
// nothing; the log pane shows its agent's.
func TestInnerRowRefusesAgentKeys(t *testing.T) {
	h := newHarness(t, innerAgents(), 100, 40)
	h.keys("j") // Explore the parser
	if _, id, ok := h.m.table.SelectedInner(); !ok || id != idReview {
		t.Fatalf("j from review selects %v of %s, want review's first inner agent", ok, id)
	}
	if !strings.Contains(h.logTitle(), "review") {
		t.Errorf("the log pane on an inner row shows %q, want review's", h.logTitle())
	}
	for _, k := range []string{"s", "c", "r", "x", "i", "u"} {
		h.keys(k)
		h.wantScreen("Explore the parser is an inner agent of review: interrupt review to end it")
		if h.m.mode != modeNormal {
			t.Fatalf("%s on an inner row opened %v", k, h.m.mode)
		}
	}
	h.wantCalls()
	h.keys("j", "j") // Check the docs: ended
	h.keys("c")
	h.wantScreen("Check the docs is an inner agent of review and has ended (completed): select review to act on it")
	h.wantCalls()
}

// TestInnerRowsFoldAndWalk: z on an inner row folds its agent, which
// counts the inner agents it hides; ← goes to the parent row, → to the
// first nested inner agent.
func TestInnerRowsFoldAndWalk(t *testing.T) {
	h := newHarness(t, innerAgents(), 160, 40)
	h.keys("j", "right") // Explore, then its nested Read the lexer
	if in, _, _ := h.m.table.SelectedInner(); in.TaskID != "t2" {
		t.Fatalf("→ on Explore selected %q, want t2", in.TaskID)
	}
	h.keys("left")
	if in, _, _ := h.m.table.SelectedInner(); in.TaskID != "t1" {
		t.Fatalf("← on Read the lexer selected %q, want t1", in.TaskID)
	}
	h.keys("left")
	if _, _, ok := h.m.table.SelectedInner(); ok || h.m.table.SelectedID() != idReview {
		t.Fatalf("← on Explore selected %s, want review", h.m.table.SelectedID())
	}
	h.keys("j", "z")
	h.wantScreen("› review +7 ")
	h.wantScreen("4 agents: 1 running, 1 needs you, 1 errored,")
	h.noScreen("Explore the parser")
	h.keys("z")
	h.wantScreen("◇ Explore the parser")
}

// TestInnerRowsFollowTheSnapshot: an inner agent that starts, gets its
// parent task and ends changes the rows as the snapshots come.
func TestInnerRowsFollowTheSnapshot(t *testing.T) {
	f := innerAgents()
	h := newHarness(t, f, 100, 50)
	lint := f.find(idLint)
	f.mu.Lock()
	lint.info.InnerAgents = append(lint.info.InnerAgents, proto.InnerAgent{TaskID: "n1", SubmissionSeq: 1, Description: "Run the linter", Status: proto.InnerRunning, StartedAt: proto.Time{Time: t0}},
		proto.InnerAgent{TaskID: "n2", SubmissionSeq: 1, Description: "Fix a finding", Status: proto.InnerRunning, StartedAt: proto.Time{Time: t0}})
	f.mu.Unlock()
	h.sync(idLint)
	h.wantScreen("  ├─ ◇ Run the linter ")
	h.wantScreen("  ├─ ◇ Fix a finding ")
	f.mu.Lock()
	lint.info.InnerAgents[2].ParentTaskID = "n1"
	lint.info.InnerAgents[2].Status = proto.InnerInterrupted
	f.mu.Unlock()
	h.keys(">", "k") // the last row is fmt; above it, Fix a finding
	if in, _, _ := h.m.table.SelectedInner(); in.TaskID != "n2" {
		t.Fatalf("selected %q, want n2", in.TaskID)
	}
	h.sync(idLint)
	h.wantScreen("› │  └─ ◇ Fix a finding ")
	if in, _, ok := h.m.table.SelectedInner(); !ok || in.TaskID != "n2" {
		t.Fatalf("the rows laid out again moved the selection off the inner agent to %s (inner %v %q)", h.m.table.SelectedID(), ok, in.TaskID)
	}
	if l := h.line("Fix a finding"); !strings.Contains(l, "✗ errored") || !strings.Contains(l, "inner interrupted") {
		t.Errorf("an interrupted inner agent's row: %q", l)
	}
}

// TestGoldenInnerTranscript: in the transcript an inner agent's frames
// (its prompt, tool calls and results, its task_* frames) are indented
// under the Agent call that started it (recorded claude 2.1.197, an inner
// agent that ran Bash).
func TestGoldenInnerTranscript(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "inner-agents", "claude-inner-bash.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := transcript.NewParser(transcript.FormatClaude)
	var entries []transcript.Entry
	for _, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		entries = append(entries, p.Line([]byte(line))...)
	}
	entries = append(entries, p.End()...)
	f := newFake()
	f.cfg.PresetName, f.cfg.PresetFormat, f.cfg.Command = "claude", "claude", "claude (preset)"
	f.cfg.Features = []string{proto.FeatureTextMessage, proto.FeatureTree, proto.FeatureInnerAgents}
	a := f.add(idA, "start an inner agent that runs sleep 3", proto.StatusCompleted)
	for _, in := range p.InnerAgents() {
		a.info.InnerAgents = append(a.info.InnerAgents, proto.InnerAgentOf(in, 1))
	}
	a.entries[1] = entries
	h := newHarness(t, f, 100, 30)
	checkFrame(t, h.view(), 100, 30)
	golden.RequireEqual(t, []byte(h.view()))
	h.wantScreen("│ ⚙ Bash")
	h.wantScreen("│ › RUN_BASH: sleep 3; echo inner-ok")
}
