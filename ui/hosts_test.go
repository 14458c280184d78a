package ui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
)

// fakeHosts is a viewer's backend of several hosts over fakeSup: each
// agent's Host says its host; a spawn lands on the host proto.WithHost
// names and is recorded with it.
type fakeHosts struct {
	*fakeSup
	hmu    sync.Mutex
	states []proto.HostState
}

func (f *fakeHosts) Hosts() []proto.HostState {
	f.hmu.Lock()
	defer f.hmu.Unlock()
	return append([]proto.HostState(nil), f.states...)
}

func (f *fakeHosts) SpawnAgent(ctx context.Context, req proto.SpawnRequest) (proto.SpawnResult, error) {
	host := proto.HostOf(ctx)
	f.mu.Lock()
	f.record("on %s:", host)
	f.mu.Unlock()
	r, err := f.fakeSup.SpawnAgent(ctx, req)
	if err == nil {
		f.mu.Lock()
		f.find(r.AgentID).info.Host = host
		f.mu.Unlock()
		f.changed(r.AgentID)
	}
	return r, err
}

// setHosts changes the hosts' states and says so, as the backend does.
func (f *fakeHosts) setHosts(states []proto.HostState) {
	f.hmu.Lock()
	f.states = states
	f.hmu.Unlock()
	f.feed.Publish(proto.Change{Hosts: states})
}

// on puts agent id on host.
func (f *fakeHosts) on(host string, a *fakeAgent) { a.info.Host = host }

// twoHostsFake is laptop: review (running), lint (completed); box:
// review (running).
func twoHostsFake() *fakeHosts {
	f := &fakeHosts{fakeSup: newFake(), states: []proto.HostState{
		{Name: "laptop", Dir: "/home/me/app", PID: 41, MaxAgents: 4, Command: "sh ./agent.sh"},
		{Name: "box", Where: "ssh://box/src/app", Dir: "/src/app", PID: 42, MaxAgents: 2, Command: "sh ./agent.sh"},
	}}
	f.cfg.Features = []string{proto.FeatureTextMessage, proto.FeatureTree, proto.FeatureCloseMany}
	f.on("laptop", f.child("", idA, "review", "review the parser", proto.StatusRunning))
	f.on("laptop", f.child("", idB, "lint", "lint it", proto.StatusCompleted))
	f.on("box", f.child("", idC, "review", "review the box", proto.StatusRunning))
	return f
}

// viewerHarness is newHarness for a viewer (no Host) of backend f.
func viewerHarness(t *testing.T, f *fakeHosts, w, h int) *harness {
	t.Helper()
	st := theme.Plain()
	f.t = t
	m := New(f, Options{Styles: &st, Now: func() time.Time { return t0 }})
	m.tickFn = func() tea.Cmd { return nil }
	hs := &harness{t: t, m: m, f: f.fakeSup}
	hs.follow(&f.feed)
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// TestSeveralHostsInOneTable (SPEC §9 "Several hosts"): every host's
// agents in one table under a row per host; the counts cover both; a
// path two hosts have is said with its host.
func TestSeveralHostsInOneTable(t *testing.T) {
	h := viewerHarness(t, twoHostsFake(), 160, 30)
	s := h.screen()
	laptop, box := strings.Index(s, "laptop    /home/me/app"), strings.Index(s, "box       ssh://box")
	if laptop < 0 || box < 0 || laptop > box {
		t.Fatalf("host rows missing or out of order:\n%s", s)
	}
	if i := strings.Index(s, "lint"); i < laptop || i > box {
		t.Fatalf("laptop's agent not under laptop's row:\n%s", s)
	}
	h.wantScreen("/home/me/app · 2 agents: 1 running, 1 completed")
	h.wantScreen("ssh://box/src/app · 1 agent: 1 running")
	h.wantScreen("agents 3 · 2 hosts")
	h.wantScreen("● 2/6 running") // both hosts' running agents, both limits
	h.wantScreen("│ 2 hosts")
	if got := h.m.label(idA); got != "laptop:/root/review" {
		t.Errorf("label of laptop's review = %q, want laptop:/root/review", got)
	}
	if got := h.m.label(idB); got != "lint" {
		t.Errorf("label of lint = %q: no other host has it", got)
	}
	h.wantScreen("╭─ laptop:/root/review · #1/1") // the log pane's title
}

// TestCloseShownAsksOnceWithCountsPerHost: C asks once for every host's
// agents, with how many per host; yes closes them all in one call.
func TestCloseShownAsksOnceWithCountsPerHost(t *testing.T) {
	f := twoHostsFake()
	h := viewerHarness(t, f, 200, 30)
	h.keys("C")
	h.wantScreen("Close every agent: 3 agents (laptop 2, box 1), with their descendants? 2 agents running will be stopped (laptop 1, box 1).")
	h.keys("y")
	if calls := strings.Join(f.Calls(), "\n"); !strings.Contains(calls, "close-many "+idA[:8]+" "+idB[:8]+" "+idC[:8]) {
		t.Fatalf("calls after yes:\n%s", calls)
	}
}

// TestSpawnOnTheSelectedHost: n on a host's row, or on one of its agents,
// spawns on that host; with no row selected it asks which host first.
func TestSpawnOnTheSelectedHost(t *testing.T) {
	f := twoHostsFake()
	h := viewerHarness(t, f, 160, 30)
	h.keys(">") // box's review
	h.keys("n")
	h.wantScreen("spawn on box ›")
	h.typeText("audit")
	h.keys("enter")
	if calls := strings.Join(f.Calls(), "\n"); !strings.Contains(calls, "on box:") {
		t.Fatalf("the spawn did not go to box:\n%s", calls)
	}
	h.wantScreen("on box")

	h.keys("F")
	h.typeText("nothing matches this")
	h.keys("enter")
	h.keys("n")
	h.wantScreen("Spawn on which host? 1 laptop · 2 box")
	h.keys("1")
	h.wantScreen("spawn on laptop ›")
}

// TestHostRowKeysSayWhatToDo: a key that acts on an agent, on a host's
// row, says to select one of its agents.
func TestHostRowKeysSayWhatToDo(t *testing.T) {
	h := viewerHarness(t, twoHostsFake(), 160, 30)
	h.keys("<") // laptop's row
	h.keys("i")
	h.wantScreen("laptop is a host's row: select one of its agents (j/↓) to act on it; n spawns one there")
	h.wantScreen("host laptop") // the log pane says what the host is
	h.wantScreen("folder /home/me/app")
}

// TestLostHostOnItsRowAndTheStatusLine: a host lost says so on its row
// and in the status line, its agents kept and marked; back, the marks go.
func TestLostHostOnItsRowAndTheStatusLine(t *testing.T) {
	f := twoHostsFake()
	h := viewerHarness(t, f, 160, 30)
	lost := f.Hosts()
	lost[1].Lost, lost[1].LostAt = "no subdash is serving on socket /run/box.sock", t0
	f.setHosts(lost)
	h.send(nil)
	h.wantScreen("box       ✗ host lost: no subdash is serving on socket /run/box.sock")
	h.wantScreen("✗ host lost: box")
	h.wantScreen("agents 3 · 2 hosts, 1 lost")
	if row := h.row(idC); !strings.Contains(row, "✗ host lost · ") {
		t.Errorf("box's agent not marked: %q", row)
	}
	back := f.Hosts()
	back[1].Lost = ""
	f.setHosts(back)
	h.send(nil)
	h.noScreen("host lost")
}

// TestReadOnlyHostRefusesItsOperations: a host attached ?read-only
// refuses the operations on its agents, saying which host; another host
// takes them.
func TestReadOnlyHostRefusesItsOperations(t *testing.T) {
	f := twoHostsFake()
	f.states[1].ReadOnly = true
	h := viewerHarness(t, f, 160, 30)
	h.keys(">") // box's review
	h.keys("i")
	h.wantScreen("read-only viewer of box: interrupt refused; attach to it without ?read-only to change anything")
	h.keys("<", "j") // laptop's review
	h.keys("i")
	if calls := strings.Join(f.Calls(), "\n"); !strings.Contains(calls, "interrupt "+idA[:8]) {
		t.Fatalf("laptop's agent was not interrupted:\n%s", calls)
	}
}
