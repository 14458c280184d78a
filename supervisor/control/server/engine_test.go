package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

// fakeEngine is an Engine that records each call it gets, in words, and
// answers it with what names the call back; a method the server should
// not call panics (the embedded nil Engine).
type fakeEngine struct {
	Engine
	feed  proto.Feed
	mu    sync.Mutex
	calls []string
}

func (f *fakeEngine) did(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, a...))
}

// took returns the calls since the last took.
func (f *fakeEngine) took() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func (f *fakeEngine) Config() supervisor.Config {
	return supervisor.Config{Dir: "/fake", Command: "fake-agent", MaxAgents: 3, Preset: &supervisor.Preset{Name: "claude", Format: "claude"}}
}
func (f *fakeEngine) RunDir() string               { return "/fake/run" }
func (f *fakeEngine) Restored() int                { return 2 }
func (f *fakeEngine) Failure() string              { return "" }
func (f *fakeEngine) Spend() proto.Spend           { return proto.Spend{FleetSpentUSD: 1.5} }
func (f *fakeEngine) Stopped() <-chan struct{}     { return nil }
func (f *fakeEngine) WhenStateRemade(func() error) {}
func (f *fakeEngine) Storage(context.Context) (proto.Storage, error) {
	return proto.Storage{RunsDir: "/fake/runs", Bytes: 42}, nil
}
func (f *fakeEngine) Agents() []proto.AgentInfo {
	return []proto.AgentInfo{{Summary: proto.Summary{AgentID: "a1", Status: proto.StatusRunning}}}
}
func (f *fakeEngine) Subscribe() *proto.Subscription { return f.feed.Subscribe() }
func (f *fakeEngine) Counts(id string, seq int) (proto.OutputCounts, int, error) {
	f.did("Counts(%s, %d)", id, seq)
	return proto.OutputCounts{Lines: 1}, 1, nil
}
func (f *fakeEngine) CheckNesting(int) error { return nil }
func (f *fakeEngine) CallerAgent(int) string { return "" }
func (f *fakeEngine) ReadMessage(r io.Reader) (*supervisor.Message, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return supervisor.NewMessage(string(b))
}
func (f *fakeEngine) SpawnMessage(ctx context.Context, m *supervisor.Message, taskName string) (proto.SpawnResult, error) {
	f.did("Spawn(%s, %s, %s)", m.Head(), taskName, proto.OriginOf(ctx))
	return proto.SpawnResult{Summary: proto.Summary{AgentID: "a1"}, SubmissionID: "s1"}, nil
}
func (f *fakeEngine) SendMessage(_ context.Context, id string, m *supervisor.Message, interrupt bool) (proto.SendResult, error) {
	f.did("Send(%s, %s, %v)", id, m.Head(), interrupt)
	return proto.SendResult{AgentID: id}, nil
}
func (f *fakeEngine) QueueMessage(_ context.Context, id string, m *supervisor.Message) (proto.SendResult, error) {
	if m.Len() > 100 {
		f.did("Queue(%s, %d bytes)", id, m.Len())
	} else {
		f.did("Queue(%s, %s)", id, m.Head())
	}
	return proto.SendResult{AgentID: id, Queued: true}, nil
}
func (f *fakeEngine) SteerMessage(_ context.Context, id string, m *supervisor.Message) (proto.SendResult, error) {
	f.did("Steer(%s, %s)", id, m.Head())
	return proto.SendResult{AgentID: id}, nil
}
func (f *fakeEngine) Resend(_ context.Context, id string, interrupt, queue bool) (proto.SendResult, error) {
	f.did("Resend(%s, %v, %v)", id, interrupt, queue)
	return proto.SendResult{AgentID: id}, nil
}
func (f *fakeEngine) WriteMessage(_ context.Context, w io.Writer, id string, seq int) error {
	f.did("WriteMessage(%s, %d)", id, seq)
	_, err := io.WriteString(w, "the message")
	return err
}
func (f *fakeEngine) status(op, id string) (proto.StatusResult, error) {
	f.did("%s(%s)", op, id)
	return proto.StatusResult{AgentID: id, Status: proto.StatusClosed}, nil
}
func (f *fakeEngine) Interrupt(_ context.Context, id string) (proto.StatusResult, error) {
	return f.status("Interrupt", id)
}
func (f *fakeEngine) Close(_ context.Context, id string) (proto.StatusResult, error) {
	return f.status("Close", id)
}
func (f *fakeEngine) Resume(_ context.Context, id string) (proto.StatusResult, error) {
	return f.status("Resume", id)
}
func (f *fakeEngine) Forget(_ context.Context, id string) (proto.StatusResult, error) {
	return f.status("Forget", id)
}
func (f *fakeEngine) MarkSeen(_ context.Context, id string) (proto.StatusResult, error) {
	return f.status("MarkSeen", id)
}
func (f *fakeEngine) CancelQueue(_ context.Context, id string) (proto.StatusResult, error) {
	return f.status("CancelQueue", id)
}
func (f *fakeEngine) CloseMany(_ context.Context, req proto.CloseManyRequest) (proto.CloseManyResult, error) {
	f.did("CloseMany(%v, %s)", req.All, req.Status)
	return proto.CloseManyResult{Closed: []string{"a1"}}, nil
}
func (f *fakeEngine) Approve(_ context.Context, id, requestID string, always bool) (proto.ApprovalResult, error) {
	f.did("Approve(%s, %s, %v)", id, requestID, always)
	return proto.ApprovalResult{AgentID: id, Decision: "allow"}, nil
}
func (f *fakeEngine) Answer(_ context.Context, id, requestID string, answers map[string][]string) (proto.QuestionResult, error) {
	f.did("Answer(%s, %s, %v)", id, requestID, answers)
	return proto.QuestionResult{AgentID: id, RequestID: requestID, Answers: map[string]string{"Which DB?": strings.Join(answers["DB"], ", ")}}, nil
}
func (f *fakeEngine) Deny(_ context.Context, id, requestID, message string) (proto.ApprovalResult, error) {
	f.did("Deny(%s, %s, %s)", id, requestID, message)
	return proto.ApprovalResult{AgentID: id, Decision: "deny"}, nil
}
func (f *fakeEngine) Wait(_ context.Context, ids []string, ms *int) (proto.WaitResult, error) {
	f.did("Wait(%v, %d)", ids, *ms)
	return proto.WaitResult{Status: map[string]proto.Status{ids[0]: proto.StatusCompleted}}, nil
}
func (f *fakeEngine) List(context.Context) (proto.ListResult, error) {
	f.did("List()")
	return proto.ListResult{Agents: []proto.Summary{{AgentID: "a1"}}}, nil
}
func (f *fakeEngine) WriteLogs(_ context.Context, w io.Writer, id string, seq int, raw bool) error {
	f.did("WriteLogs(%s, %d, %v)", id, seq, raw)
	_, err := io.WriteString(w, "the log")
	return err
}
func (f *fakeEngine) WriteRawLog(_ context.Context, w io.Writer, id string, seq int, gaps func([]proto.LogGap)) error {
	f.did("WriteRawLog(%s, %d)", id, seq)
	gaps([]proto.LogGap{{At: 3, Bytes: 9}})
	_, err := io.WriteString(w, "raw")
	return err
}
func (f *fakeEngine) Window(_ context.Context, id string, seq int, from int64, n int) (proto.Window, error) {
	f.did("Window(%s, %d, %d, %d)", id, seq, from, n)
	return proto.Window{Total: 1, Lines: []proto.Line{{Text: "a line"}}}, nil
}
func (f *fakeEngine) Transcript(_ context.Context, id string, seq int, from int64, n int) (proto.TranscriptWindow, bool, error) {
	f.did("Transcript(%s, %d, %d, %d)", id, seq, from, n)
	return proto.TranscriptWindow{Total: 0}, true, nil
}
func (f *fakeEngine) Search(_ context.Context, id string, seq int, transcript bool, query string, from int64) (proto.SearchResult, error) {
	f.did("Search(%s, %d, %v, %s, %d)", id, seq, transcript, query, from)
	return proto.SearchResult{Matches: []int64{4}}, nil
}
func (f *fakeEngine) WriteLines(_ context.Context, w io.Writer, id string, seq int, keepSGR bool) error {
	f.did("WriteLines(%s, %d, %v)", id, seq, keepSGR)
	_, err := io.WriteString(w, "lines")
	return err
}
func (f *fakeEngine) WriteChanges(_ context.Context, w io.Writer, id string, seq int, color bool) error {
	f.did("WriteChanges(%s, %d, %v)", id, seq, color)
	_, err := io.WriteString(w, "diff")
	return err
}
func (f *fakeEngine) SearchAgents(_ context.Context, req proto.SearchRequest, emit func(proto.SearchHit) error) (proto.SearchSummary, error) {
	f.did("SearchAgents(%s, %s)", req.Query, req.Agent)
	return proto.SearchSummary{Hits: 1}, emit(proto.SearchHit{AgentID: "a1", Text: "a hit"})
}
func (f *fakeEngine) tree(format string, a ...any) (proto.TreeAgent, error) {
	f.did(format, a...)
	return proto.TreeAgent{AgentID: "a1", AgentPath: "/root/t"}, nil
}
func (f *fakeEngine) SpawnTree(ctx context.Context, message, taskName string) (proto.TreeAgent, error) {
	return f.tree("SpawnTree(%s, %s, %s)", message, taskName, proto.CallerOf(ctx).Session)
}
func (f *fakeEngine) MessageAgent(_ context.Context, target, message string, trigger bool) (proto.TreeAgent, error) {
	return f.tree("MessageAgent(%s, %s, %v)", target, message, trigger)
}
func (f *fakeEngine) InterruptAgent(_ context.Context, target string) (proto.TreeAgent, error) {
	return f.tree("InterruptAgent(%s)", target)
}
func (f *fakeEngine) WaitMailbox(_ context.Context, ms *int, ack uint64) (proto.MailboxResult, error) {
	f.did("WaitMailbox(%d, %d)", *ms, ack)
	return proto.MailboxResult{TimedOut: true}, nil
}
func (f *fakeEngine) ListTree(_ context.Context, pathPrefix string) (proto.TreeList, error) {
	f.did("ListTree(%s)", pathPrefix)
	return proto.TreeList{}, nil
}

// TestEveryRouteOverAFakeEngine serves an Engine that is not the
// supervisor: each route of wire.Routes, called by the client, reaches
// the engine's method with the request's arguments, and its answer
// reaches the client. A route added to wire.Routes without a case here
// fails the test.
func TestEveryRouteOverAFakeEngine(t *testing.T) {
	f := &fakeEngine{}
	dir := t.TempDir()
	ln, err := listenUnix(filepath.Join(dir, "s.sock"), dir, os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(f, ln)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	defer func() {
		if err := srv.Close(); err != nil || <-done != nil {
			t.Errorf("close: %v", err)
		}
	}()
	c := client.NewClient(srv.Path(), dir).WithOrigin("ctl").WithSession("s9")
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ms := 20000
	var out bytes.Buffer
	text := func(err error) (string, error) { s := out.String(); out.Reset(); return s, err }
	// follow opens an event stream that names itself and, while it is
	// open, asks the host to follow req on it.
	follow := func(req wire.FollowRequest) (wire.FollowRequest, error) {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		named, ended := make(chan string, 1), make(chan error, 1)
		go func() {
			ended <- c.SSE(sctx, url.Values{"outputs": {"batch"}, "window": {"1"}}, func(ev client.Event) error {
				var se wire.StreamEvent
				if ev.Name == wire.EventStream && json.Unmarshal(ev.Data, &se) == nil {
					named <- se.Stream
				}
				return nil
			})
		}()
		defer func() { stop(); <-ended }() //nolint:errcheck // the stream ended on purpose: its error is the cancel's
		select {
		case name := <-named:
			return c.Follow(ctx, name, req)
		case err := <-ended:
			return wire.FollowRequest{}, err
		}
	}
	cases := []struct {
		rt   wire.Route
		call func() (any, error)
		want []string // the engine's calls
		got  string   // in the answer
	}{
		{wire.Info, func() (any, error) { return c.Info(ctx) }, nil, `PID:` + fmt.Sprint(os.Getpid())},
		{wire.Config, func() (any, error) {
			r, err := client.Attach(ctx, srv.Path(), dir, true)
			if err != nil {
				return nil, err
			}
			defer r.Detach()
			return r.HostConfig(), nil
		}, nil, "PresetName:claude"},
		{wire.List, func() (any, error) { return c.List(ctx) }, []string{"List()"}, "AgentID:a1"},
		{wire.Spawn, func() (any, error) { return c.SpawnAgent(ctx, proto.SpawnRequest{Message: "task", TaskName: "t"}) }, []string{"Spawn(task, t, ctl)"}, "SubmissionID:s1"},
		{wire.Send, func() (any, error) { return c.Send(ctx, "a1", "more", true) }, []string{"Send(a1, more, true)"}, "AgentID:a1"},
		{wire.Send, func() (any, error) { return c.Queue(ctx, "a1", "later") }, []string{"Queue(a1, later)"}, "Queued:true"},
		{wire.Send, func() (any, error) {
			return c.SendFrom(ctx, "a1", strings.NewReader(strings.Repeat("x", 70<<10)), false, true)
		}, []string{"Queue(a1, 71680 bytes)"}, "Queued:true"},
		{wire.Resend, func() (any, error) { return c.Resend(ctx, "a1", false, true) }, []string{"Resend(a1, false, true)"}, "AgentID:a1"},
		{wire.Message, func() (any, error) { return c.Message(ctx, "a1", 2) }, []string{"WriteMessage(a1, 2)"}, "the message"},
		{wire.Interrupt, func() (any, error) { return c.Interrupt(ctx, "a1") }, []string{"Interrupt(a1)"}, "Status:closed"},
		{wire.Close, func() (any, error) { return c.Close(ctx, "a.b") }, []string{"Close(a.b)"}, "AgentID:a.b"},
		{wire.CloseMany, func() (any, error) { return c.CloseMany(ctx, proto.CloseManyRequest{Status: proto.StatusRunning}) }, []string{"CloseMany(false, running)"}, "Closed:[a1]"},
		{wire.Resume, func() (any, error) { return c.Resume(ctx, "a1") }, []string{"Resume(a1)"}, "AgentID:a1"},
		{wire.Forget, func() (any, error) { return c.Forget(ctx, "a1") }, []string{"Forget(a1)"}, "AgentID:a1"},
		{wire.Seen, func() (any, error) { return c.MarkSeen(ctx, "a1") }, []string{"MarkSeen(a1)"}, "AgentID:a1"},
		{wire.CancelQueue, func() (any, error) { return c.CancelQueue(ctx, "a1") }, []string{"CancelQueue(a1)"}, "AgentID:a1"},
		{wire.Approve, func() (any, error) { return c.Approve(ctx, "a1", "r1", true) }, []string{"Approve(a1, r1, true)"}, "Decision:allow"},
		{wire.Deny, func() (any, error) { return c.Deny(ctx, "a1", "r1", "no") }, []string{"Deny(a1, r1, no)"}, "Decision:deny"},
		{wire.Answer, func() (any, error) { return c.Answer(ctx, "a1", "r1", map[string][]string{"DB": {"SQLite"}}) }, []string{"Answer(a1, r1, map[DB:[SQLite]])"}, "Answers:map[Which DB?:SQLite]"},
		{wire.Wait, func() (any, error) { return c.Wait(ctx, []string{"a1"}, &ms) }, []string{"Wait([a1], 20000)"}, "a1:completed"},
		{wire.Logs, func() (any, error) { return text(c.WriteLogs(ctx, &out, "a1", 1, false)) }, []string{"WriteLogs(a1, 1, false)"}, "the log"},
		{wire.Logs, func() (any, error) {
			gaps, err := c.WriteRawLog(ctx, &out, "a1", 2)
			s, _ := text(nil)
			return fmt.Sprint(s, gaps), err
		}, []string{"WriteRawLog(a1, 2)"}, "raw[{3 9 "},
		{wire.Window, func() (any, error) { return c.Window(ctx, "a1", 1, -1, 5) }, []string{"Window(a1, 1, -1, 5)"}, "a line"},
		{wire.Transcript, func() (any, error) {
			w, ok, err := c.Transcript(ctx, "a1", 1, 0, 5)
			return fmt.Sprint(w, ok), err
		}, []string{"Transcript(a1, 1, 0, 5)"}, "true"},
		{wire.Windows, func() (any, error) {
			ws, err := c.Windows(ctx, []proto.WindowRequest{{AgentID: "a1", Submission: 1, From: -1, N: 5}, {AgentID: "a1", Submission: 2, Transcript: true, N: 3}, {AgentID: "a1", Submission: 1}})
			return fmt.Sprint(ws), err
		}, []string{"Window(a1, 1, -1, 5)", "Transcript(a1, 2, 0, 3)"}, "a line"},
		{wire.LogSearch, func() (any, error) { return c.Search(ctx, "a1", 1, true, "x", 3) }, []string{"Search(a1, 1, true, x, 3)"}, "Matches:[4]"},
		{wire.Lines, func() (any, error) { return text(c.WriteLines(ctx, &out, "a1", 1, true)) }, []string{"WriteLines(a1, 1, true)"}, "lines"},
		{wire.Diff, func() (any, error) { return text(c.WriteChanges(ctx, &out, "a1", 1, true)) }, []string{"WriteChanges(a1, 1, true)"}, "diff"},
		{wire.Search, func() (any, error) {
			var hits []proto.SearchHit
			sum, err := c.SearchAgents(ctx, proto.SearchRequest{Query: "q", Agent: "a1"}, func(h proto.SearchHit) error { hits = append(hits, h); return nil })
			return fmt.Sprint(sum, hits), err
		}, []string{"SearchAgents(q, a1)"}, "a hit"},
		{wire.Events, func() (any, error) {
			var got []string
			err := c.Events(ctx, func(s proto.Summary) error { got = append(got, s.AgentID); return errors.New("enough") })
			return got, err
		}, nil, "a1"},
		{wire.Follow, func() (any, error) { return follow(wire.FollowRequest{AgentID: "a1", Submission: 1, N: 5}) }, []string{"Counts(a1, 1)"}, "AgentID:a1"},
		{wire.TreeSpawn, func() (any, error) { return c.SpawnTree(ctx, "task", "t") }, []string{"SpawnTree(task, t, s9)"}, "/root/t"},
		{wire.TreeMessage, func() (any, error) { return c.MessageAgent(ctx, "t", "note", true) }, []string{"MessageAgent(t, note, true)"}, "/root/t"},
		{wire.TreeInterrupt, func() (any, error) { return c.InterruptAgent(ctx, "t") }, []string{"InterruptAgent(t)"}, "/root/t"},
		{wire.TreeWait, func() (any, error) { return c.WaitMailbox(ctx, &ms, 7) }, []string{"WaitMailbox(20000, 7)"}, "TimedOut:true"},
		{wire.TreeList, func() (any, error) { return c.ListTree(ctx, "/root") }, []string{"ListTree(/root)"}, "Agents:[]"},
	}
	covered := map[wire.Route]bool{}
	for _, tc := range cases {
		covered[tc.rt] = true
		res, err := tc.call()
		if err != nil && !strings.Contains(fmt.Sprint(err), "enough") {
			t.Errorf("%s: %v", tc.rt.Pattern(), err)
			continue
		}
		if calls := f.took(); !slices.Equal(calls, tc.want) {
			t.Errorf("%s: the engine got %q, want %q", tc.rt.Pattern(), calls, tc.want)
		}
		if s := fmt.Sprintf("%+v", res); !strings.Contains(s, tc.got) {
			t.Errorf("%s answered %s, want it to hold %q", tc.rt.Pattern(), s, tc.got)
		}
	}
	for _, rt := range wire.Routes {
		if !covered[rt] {
			t.Errorf("%s is not called over the fake engine", rt.Pattern())
		}
	}
}
