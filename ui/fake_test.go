package ui

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/termtext"
	"github.com/subdash/subdash/supervisor/transcript"
)

// t0 is the fake clock's time.
var t0 = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// fakeSup is an in-memory supervisor with fixed ids and times: operations
// act at once, are recorded in calls, and publish what they changed on
// feed, whose changes carry the agent's snapshot, as a supervisor's do (the
// harness delivers them as the forwarder would). Every method fails the
// test when it is called while the model's Update or View runs (the
// harness sets inUpdate around them): all I/O belongs in commands.
type fakeSup struct {
	t        testing.TB
	inUpdate atomic.Bool
	feed     proto.Feed
	// agentsCalls counts the snapshots of every agent (Agents) taken.
	agentsCalls atomic.Int64
	mu          sync.Mutex
	cfg         proto.HostConfig
	agents      []*fakeAgent
	calls       []string
	fail        map[string]error // op name → error to return
	ids         int
	shutdown    bool
	windows     map[string]int    // Window calls per agent
	reads       map[string]int    // Window and Transcript calls per agent
	whole       map[string]string // agent → its whole latest message, when the snapshot holds a head
}

type fakeAgent struct {
	info    proto.AgentInfo
	lines   map[int][]proto.Line // per seq
	first   map[int]int64
	entries map[int][]transcript.Entry
	evicted map[int]bool
}

func newFake() *fakeSup {
	f := &fakeSup{
		cfg:     proto.HostConfig{Command: "sh ./agent.sh", MaxAgents: 4},
		fail:    map[string]error{},
		windows: map[string]int{},
		reads:   map[string]int{},
	}
	f.feed.Payload = func(c *proto.Change) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if a := f.find(c.AgentID); a != nil {
			info := f.snapshot(a)
			c.Info = &info
		}
	}
	return f
}

// changed publishes a change of agent id, as the supervisor does after an
// operation.
func (f *fakeSup) changed(id string) { f.feed.Publish(proto.Change{AgentID: id, Agent: true}) }

// noIO fails the test when the model calls op while Update or View runs.
func (f *fakeSup) noIO(op string) {
	if f.inUpdate.Load() {
		f.t.Errorf("%s called while Update or View runs: it belongs in a tea.Cmd", op)
	}
}

func (f *fakeSup) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

// Calls returns the recorded operations.
func (f *fakeSup) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// add adds an agent with submissions of the given statuses (the last one
// decides the agent's status; "running" leaves it running).
func (f *fakeSup) add(id, message string, statuses ...proto.Status) *fakeAgent {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := &fakeAgent{lines: map[int][]proto.Line{}, first: map[int]int64{}, entries: map[int][]transcript.Entry{}, evicted: map[int]bool{}}
	a.info.AgentID = id
	a.info.LastMessage = message
	a.info.CreatedAt = proto.Time{Time: t0.Add(-10 * time.Minute)}
	for i, st := range statuses {
		sub := proto.SubmissionInfo{ID: fmt.Sprintf("%s-sub%d", id[:8], i+1), Seq: i + 1, Message: message,
			StartedAt: t0.Add(-time.Duration(75+i) * time.Second), Status: st, LogPath: "/logs/" + id + ".log"}
		if st != proto.StatusRunning {
			sub.EndedAt = sub.StartedAt.Add(42 * time.Second)
			code := 0
			if st == proto.StatusErrored {
				code = 2
				le := "submission failed with exit code 2"
				sub.LastError = &le
			}
			sub.ExitCode = &code
		}
		a.info.Submissions = append(a.info.Submissions, sub)
		a.info.Status = st
	}
	f.agents = append(f.agents, a)
	return a
}

// print appends display lines to submission seq of agent id.
func (f *fakeSup) print(id string, seq int, lines ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.find(id)
	for _, l := range lines {
		a.lines[seq] = append(a.lines[seq], proto.Line{Text: l, Width: len(l)})
	}
}

// trim drops the oldest n lines of submission seq of agent id.
func (f *fakeSup) trim(id string, seq, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.find(id)
	a.lines[seq] = a.lines[seq][n:]
	a.first[seq] += int64(n)
}

func (f *fakeSup) find(id string) *fakeAgent {
	for _, a := range f.agents {
		if a.info.AgentID == id || len(id) >= 4 && strings.HasPrefix(a.info.AgentID, id) {
			return a
		}
	}
	return nil
}

func (f *fakeSup) HostConfig() proto.HostConfig {
	f.noIO("HostConfig")
	return f.cfg
}

func (f *fakeSup) Agents() []proto.AgentInfo {
	f.noIO("Agents")
	f.agentsCalls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]proto.AgentInfo, len(f.agents))
	for i, a := range f.agents {
		out[i] = f.snapshot(a)
	}
	return out
}

// snapshot returns a's snapshot with its output counts. Call with f.mu
// held.
func (f *fakeSup) snapshot(a *fakeAgent) proto.AgentInfo {
	info := a.info
	info.Submissions = append([]proto.SubmissionInfo(nil), a.info.Submissions...)
	info.Structured = info.Structured || f.cfg.Structured()
	for j := range info.Submissions {
		seq := j + 1
		c := &info.Submissions[j].Output
		c.FirstLine, c.Lines, c.Evicted = a.first[seq], a.first[seq]+int64(len(a.lines[seq])), a.evicted[seq]
		c.Entries = int64(len(a.entries[seq]))
	}
	return info
}

func (f *fakeSup) Spawn(ctx context.Context, message string) (proto.SpawnResult, error) {
	f.noIO("Spawn")
	f.mu.Lock()
	f.record("spawn %q", message)
	if err := f.fail["spawn"]; err != nil {
		f.mu.Unlock()
		return proto.SpawnResult{}, err
	}
	id := f.newID()
	f.mu.Unlock()
	f.add(id, message, proto.StatusRunning)
	f.changed(id)
	return proto.SpawnResult{Summary: proto.Summary{AgentID: id, Status: proto.StatusRunning}}, nil
}

func (f *fakeSup) Send(ctx context.Context, id, message string, interrupt bool) (proto.SendResult, error) {
	f.noIO("Send")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("send %s %q interrupt=%v", id[:8], message, interrupt)
	a := f.find(id)
	if a == nil {
		return proto.SendResult{}, proto.ErrNotFound(id)
	}
	if a.info.Status == proto.StatusClosed {
		return proto.SendResult{}, proto.ErrClosed(id)
	}
	if a.info.Running() && !interrupt {
		return proto.SendResult{}, proto.ErrBusy(id)
	}
	f.end(a, "interrupted")
	seq := len(a.info.Submissions) + 1
	a.info.Submissions = append(a.info.Submissions, proto.SubmissionInfo{ID: fmt.Sprintf("sub%d", seq), Seq: seq, Message: message, StartedAt: t0, Status: proto.StatusRunning})
	a.info.Status, a.info.LastMessage = proto.StatusRunning, message
	f.changed(a.info.AgentID)
	return proto.SendResult{AgentID: id, Status: proto.StatusRunning}, nil
}

// end ends a's running submission with reason. Call with f.mu held.
func (f *fakeSup) end(a *fakeAgent, reason string) {
	n := len(a.info.Submissions)
	if n == 0 || !a.info.Submissions[n-1].EndedAt.IsZero() {
		return
	}
	s := &a.info.Submissions[n-1]
	s.EndedAt, s.Status, s.LastError = t0, proto.StatusErrored, &reason
	if a.info.Status != proto.StatusClosed {
		a.info.Status = proto.StatusErrored
	}
}

func (f *fakeSup) Interrupt(ctx context.Context, id string) (proto.StatusResult, error) {
	f.noIO("Interrupt")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("interrupt %s", id[:8])
	a := f.find(id)
	if !a.info.Running() {
		return proto.StatusResult{}, proto.ErrNotRunning(id)
	}
	f.end(a, "interrupted")
	f.changed(a.info.AgentID)
	return proto.StatusResult{AgentID: id, Status: a.info.Status}, nil
}

// MarkSeen clears the agent's needs-you mark.
func (f *fakeSup) MarkSeen(ctx context.Context, id string) (proto.StatusResult, error) {
	f.noIO("MarkSeen")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("seen %s", id[:8])
	a := f.find(id)
	if a == nil {
		return proto.StatusResult{}, proto.ErrNotFound(id)
	}
	a.info.NeedsYou = nil
	f.changed(a.info.AgentID)
	return proto.StatusResult{AgentID: id, Status: a.info.Status}, nil
}

// finish ends agent id's running submission with status, as the
// supervisor does: the agent needs you (Attention.Seq n).
func (f *fakeSup) finish(id string, status proto.Status, n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.find(id)
	s := &a.info.Submissions[len(a.info.Submissions)-1]
	s.EndedAt, s.Status = t0, status
	a.info.Status = status
	a.info.NeedsYou = &proto.Attention{Reason: string(status), Since: proto.Time{Time: t0.Add(time.Duration(n) * time.Second)}, Seq: n,
		Text: "agent " + id[:8] + " " + string(status) + ": " + a.info.LastMessage}
}

func (f *fakeSup) Resume(ctx context.Context, id string) (proto.StatusResult, error) {
	f.noIO("Resume")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("resume %s", id[:8])
	a := f.find(id)
	if a.info.Status == proto.StatusClosed {
		a.info.Status = a.info.Submissions[len(a.info.Submissions)-1].Status
	}
	f.changed(a.info.AgentID)
	return proto.StatusResult{AgentID: id, Status: a.info.Status}, nil
}

func (f *fakeSup) Forget(ctx context.Context, id string) (proto.StatusResult, error) {
	f.noIO("Forget")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("forget %s", id[:8])
	for i, a := range f.agents {
		if a.info.AgentID != id {
			continue
		}
		if a.info.Running() {
			return proto.StatusResult{}, proto.ErrForgetRunning(id)
		}
		f.agents = append(f.agents[:i], f.agents[i+1:]...)
		f.feed.Publish(proto.Change{AgentID: id, Agent: true, Forgotten: true})
		return proto.StatusResult{AgentID: id, Status: proto.StatusForgotten}, nil
	}
	return proto.StatusResult{}, proto.ErrNotFound(id)
}

// Storage returns fixed figures.
func (f *fakeSup) Storage(ctx context.Context) (proto.Storage, error) {
	f.noIO("Storage")
	return proto.Storage{RunsDir: "/state/runs", Bytes: 12_300_000, Runs: 3, Retention: 30 * 24 * time.Hour}, nil
}

// Message returns the whole message set with setWhole, else the snapshot's.
func (f *fakeSup) Message(ctx context.Context, id string, seq int) (string, error) {
	f.noIO("Message")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("message %s", id[:8])
	if w, ok := f.whole[id]; ok {
		return w, nil
	}
	return f.find(id).info.LastMessage, nil
}

func (f *fakeSup) Window(ctx context.Context, id string, seq int, from int64, n int) (proto.Window, error) {
	f.noIO("Window")
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.find(id)
	f.windows[a.info.AgentID]++
	f.reads[a.info.AgentID]++
	if seq == 0 {
		seq = len(a.info.Submissions)
	}
	if a.evicted[seq] {
		// read back from the log file first, as proto.Reader's Window does
		f.record("load %s %d", id[:8], seq)
		delete(a.evicted, seq)
		f.changed(a.info.AgentID) // the counts are known again
	}
	lines, first := a.lines[seq], a.first[seq]
	w := proto.Window{First: first, Total: first + int64(len(lines))}
	if from < 0 {
		from = w.Total - int64(n)
	}
	from = max(from, first)
	for i := from; i < w.Total && n > 0; i++ {
		w.Lines = append(w.Lines, lines[i-first])
		n--
	}
	return w, nil
}

func (f *fakeSup) Transcript(ctx context.Context, id string, seq int, from int64, n int) (proto.TranscriptWindow, bool, error) {
	f.noIO("Transcript")
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.find(id)
	f.reads[a.info.AgentID]++
	es := a.entries[seq]
	if es == nil {
		return proto.TranscriptWindow{}, false, nil
	}
	if n > proto.MaxWindowItems {
		// as a viewer's host answers (control's range limit)
		return proto.TranscriptWindow{}, false, proto.ErrWindowCount(strconv.Itoa(n))
	}
	w := proto.TranscriptWindow{Total: int64(len(es))}
	if from < 0 {
		from = w.Total - int64(n)
	}
	for i := max(from, 0); i < w.Total && n > 0; i++ {
		w.Entries = append(w.Entries, es[i])
		n--
	}
	return w, true, nil
}

// WriteLines writes a line naming the submission, so that a test sees what
// the pager was fed.
func (f *fakeSup) WriteLines(ctx context.Context, w io.Writer, id string, seq int, keepSGR bool) error {
	f.noIO("WriteLines")
	_, err := fmt.Fprintf(w, "lines of %s #%d\n", id[:8], seq)
	return err
}

// Search scans the fake's windows as the supervisor scans its scrollback.
func (f *fakeSup) Search(ctx context.Context, id string, seq int, transcript bool, query string, from int64) (proto.SearchResult, error) {
	f.noIO("Search")
	match := termtext.NewMatcher(query)
	res := proto.SearchResult{To: from}
	for {
		var first, total int64
		var found []bool
		if transcript {
			w, _, err := f.Transcript(ctx, id, seq, res.To, 4096)
			if err != nil {
				return res, err
			}
			first, total = w.First, w.Total
			for _, e := range w.Entries {
				_, _, ok := e.Match(match.Index) // as the supervisor's Search
				found = append(found, ok)
			}
		} else {
			w, err := f.Window(ctx, id, seq, res.To, 4096)
			if err != nil {
				return res, err
			}
			first, total = w.First, w.Total
			for _, l := range w.Lines {
				found = append(found, match.Match(termtext.Plain([]byte(l.Text))))
			}
		}
		res.To = max(res.To, first)
		for i, ok := range found {
			if ok {
				res.Matches = append(res.Matches, res.To+int64(i))
			}
		}
		res.To += int64(len(found))
		if len(found) == 0 || res.To >= total {
			return res, nil
		}
	}
}

func (f *fakeSup) SkipGrace() {
	f.noIO("SkipGrace")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("skip-grace")
}

func (f *fakeSup) Shutdown(context.Context) error {
	f.noIO("Shutdown")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("shutdown")
	f.shutdown = true
	for _, a := range f.agents {
		f.end(a, "interrupted")
		f.changed(a.info.AgentID)
	}
	return nil
}

func (f *fakeSup) windowCalls(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.windows[id]
}

// readCalls counts the Window and Transcript calls of agent id.
func (f *fakeSup) readCalls(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[id]
}
