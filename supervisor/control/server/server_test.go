package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/control/wire"
	"github.com/subdash/subdash/supervisor/proto"
)

func TestEveryOperationOverTheSocket(t *testing.T) {
	s := newSupervisor(t, 2)
	_, c := serve(t, s)
	ctx := context.Background()

	list, err := c.List(ctx)
	if err != nil || list.Agents == nil || len(list.Agents) != 0 {
		t.Fatalf("list of none = %+v, %v; want an empty, non-null list", list, err)
	}

	sp, err := c.Spawn(ctx, "  hello  ")
	if err != nil {
		t.Fatal(err)
	}
	if sp.Status != proto.StatusRunning || sp.LastMessage != "hello" || sp.SubmissionID == "" || sp.LastSubmissionID != sp.SubmissionID {
		t.Fatalf("spawn = %+v", sp)
	}
	d := waitFinal(t, c, sp.AgentID)
	if d.Status != proto.StatusCompleted || *d.LastOutput != "got: hello" || d.LastError != nil {
		t.Fatalf("wait detail = %+v", d)
	}
	if text, err := logsOf(ctx, c, sp.AgentID, 0, false); err != nil || text != "got: hello\n" {
		t.Fatalf("logs = %q, %v", text, err)
	}

	// send: a new submission of a final agent; logs of each submission.
	if res, err := c.Send(ctx, sp.AgentID, "fail now", false); err != nil || res.Status != proto.StatusRunning || res.SubmissionID == sp.SubmissionID {
		t.Fatalf("send = %+v, %v", res, err)
	}
	if d := waitFinal(t, c, sp.AgentID); d.Status != proto.StatusErrored || *d.LastError != "submission failed with exit code 3" {
		t.Fatalf("after failing send: %+v", d)
	}
	if text, err := logsOf(ctx, c, sp.AgentID, 1, false); err != nil || text != "got: hello\n" {
		t.Fatalf("logs of submission 1 = %q, %v", text, err)
	}

	// A running agent: busy, interrupt, send with interrupt, the limit.
	run, err := c.Spawn(ctx, "sleep a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(ctx, run.AgentID, "x", false)
	specError(t, err, proto.CodeBusy, "agent "+run.AgentID+" is busy; set interrupt=true to cancel current submission")
	if res, err := c.Send(ctx, run.AgentID, "sleep b", true); err != nil || res.Status != proto.StatusRunning {
		t.Fatalf("send with interrupt = %+v, %v", res, err)
	}
	other, err := c.Spawn(ctx, "sleep c")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Spawn(ctx, "one too many")
	specError(t, err, proto.CodeLimit, "subagent concurrency limit reached (2)")
	if res, err := c.Interrupt(ctx, other.AgentID); err != nil || res.Status != proto.StatusErrored {
		t.Fatalf("interrupt = %+v, %v", res, err)
	}
	_, err = c.Interrupt(ctx, other.AgentID)
	specError(t, err, proto.CodeNotRunning, "agent "+other.AgentID+" is not running")

	// close while running, close again, send to closed, resume.
	for range 2 {
		if res, err := c.Close(ctx, run.AgentID); err != nil || res.Status != proto.StatusClosed {
			t.Fatalf("close = %+v, %v", res, err)
		}
	}
	_, err = c.Send(ctx, run.AgentID, "x", false)
	specError(t, err, proto.CodeClosed, "agent "+run.AgentID+" is closed; run resume_agent first")
	if res, err := c.Resume(ctx, run.AgentID); err != nil || res.Status != proto.StatusErrored {
		t.Fatalf("resume = %+v, %v", res, err)
	}

	list, err = c.List(ctx)
	if err != nil || len(list.Agents) != 3 || list.Agents[0].AgentID != sp.AgentID || list.Agents[2].AgentID != other.AgentID {
		t.Fatalf("list = %+v, %v", list, err)
	}
}

func TestOperationErrorsOverTheSocket(t *testing.T) {
	s := newSupervisor(t, 4)
	_, c := serve(t, s)
	ctx := context.Background()
	zero, negative := 0, -5
	for _, tc := range []struct {
		name    string
		call    func() error
		code    proto.ErrorCode
		message string
	}{
		{"spawn empty", func() error { _, err := c.Spawn(ctx, " \n "); return err }, proto.CodeInvalid, "message must not be empty"},
		{"send empty", func() error { _, err := c.Send(ctx, "nope", "", false); return err }, proto.CodeInvalid, "message must not be empty"},
		{"send unknown", func() error { _, err := c.Send(ctx, "nope", "x", false); return err }, proto.CodeNotFound, "agent not found: nope"},
		{"interrupt unknown", func() error { _, err := c.Interrupt(ctx, "nope"); return err }, proto.CodeNotFound, "agent not found: nope"},
		{"close unknown", func() error { _, err := c.Close(ctx, "a/b?c#d"); return err }, proto.CodeNotFound, "agent not found: a/b?c#d"},
		{"close dot", func() error { _, err := c.Close(ctx, ".."); return err }, proto.CodeNotFound, "agent not found: .."},
		{"close empty id", func() error { _, err := c.Close(ctx, ""); return err }, proto.CodeNotFound, "agent not found: "},
		{"resume unknown", func() error { _, err := c.Resume(ctx, "nope"); return err }, proto.CodeNotFound, "agent not found: nope"},
		{"logs unknown", func() error { _, err := logsOf(ctx, c, "nope", 0, false); return err }, proto.CodeNotFound, "agent not found: nope"},
		{"wait no ids", func() error { _, err := c.Wait(ctx, nil, nil); return err }, proto.CodeInvalid, "ids must not be empty"},
		{"wait zero", func() error { _, err := c.Wait(ctx, []string{"x"}, &zero); return err }, proto.CodeInvalid, "timeout_ms must be greater than zero"},
		{"wait negative", func() error { _, err := c.Wait(ctx, []string{"x"}, &negative); return err }, proto.CodeInvalid, "timeout_ms must be greater than zero"},
	} {
		t.Run(tc.name, func(t *testing.T) { specError(t, tc.call(), tc.code, tc.message) })
	}

	res, err := c.Wait(ctx, []string{"ghost"}, nil)
	if err != nil || res.TimedOut || res.Status["ghost"] != proto.StatusNotFound || res.Details["ghost"].LastOutput != nil {
		t.Fatalf("wait for an unknown id = %+v, %v", res, err)
	}
}

func TestHTTPStatusAndErrorBody(t *testing.T) {
	s := newSupervisor(t, 4)
	_, c := serve(t, s)
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               proto.ErrorCode
	}{
		{"POST", "/v1/agents", `{"message":""}`, http.StatusBadRequest, proto.CodeInvalid},
		{"POST", "/v1/agents", `{"msg":"x"}`, http.StatusBadRequest, proto.CodeInvalid},
		{"POST", "/v1/agents/nope/close", ``, http.StatusNotFound, proto.CodeNotFound},
		{"GET", "/v1/agents/nope/logs?submission=x", ``, http.StatusBadRequest, proto.CodeInvalid},
	} {
		req, _ := http.NewRequest(tc.method, "http://subdash"+tc.path, strings.NewReader(tc.body))
		resp, err := rawHTTP(t, c).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var eb wire.ErrorBody
		err = json.NewDecoder(resp.Body).Decode(&eb)
		resp.Body.Close() //nolint:errcheck // a response body, read: its Close cannot lose data
		if err != nil || resp.StatusCode != tc.status || eb.Code != tc.code || eb.Error == "" {
			t.Errorf("%s %s %s: %d %+v %v; want %d %s", tc.method, tc.path, tc.body, resp.StatusCode, eb, err, tc.status, tc.code)
		}
	}
}

func TestWaitStopsWhenTheClientGoesAway(t *testing.T) {
	s := newSupervisor(t, 4)
	srv, c := serve(t, s)
	sp, err := c.Spawn(context.Background(), "sleep")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		ms := proto.MaxWaitTimeoutMS
		_, err := c.Wait(ctx, []string{sp.AgentID}, &ms)
		done <- err
	}()
	testkit.Eventually(t, 5*time.Second, "wait request arrives", func() bool { return srv.waiting.Load() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait returned %v, want context.Canceled", err)
	}
	// The server's handler, and the supervisor's Wait under it, end at once
	// (well before the agent's 30 s or the wait's 300 s).
	testkit.Eventually(t, 2*time.Second, "server stops waiting", func() bool { return srv.waiting.Load() == 0 })
}

func TestCloseEndsWaitsInProgress(t *testing.T) {
	s := newSupervisor(t, 4)
	srv, c := serve(t, s)
	sp, err := c.Spawn(context.Background(), "sleep")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Wait(context.Background(), []string{sp.AgentID}, nil)
		done <- err
	}()
	testkit.Eventually(t, 5*time.Second, "wait request arrives", func() bool { return srv.waiting.Load() == 1 })
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), srv.Path()) {
			t.Fatalf("wait during close returned %v, want an error naming the socket", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait still blocked after Close")
	}
}

// TestShutdownThenCloseAnswersWaits: when the supervisor shuts down before
// the socket closes (what serve, the dashboard and mcp do on a signal), a
// wait in progress answers with the final status instead of an error
// (SPEC §3: wait returns as soon as an id becomes final).
func TestShutdownThenCloseAnswersWaits(t *testing.T) {
	s := newSupervisor(t, 4)
	srv, c := serve(t, s)
	sp, err := c.Spawn(context.Background(), "sleep")
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		res proto.WaitResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := c.Wait(context.Background(), []string{sp.AgentID}, nil)
		done <- answer{res, err}
	}()
	testkit.Eventually(t, 5*time.Second, "wait request arrives", func() bool { return srv.waiting.Load() == 1 })
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatalf("wait during shutdown: %v, want the final status", a.err)
	}
	d := a.res.Details[sp.AgentID]
	if a.res.Status[sp.AgentID] != proto.StatusErrored || d.LastError == nil || *d.LastError != "interrupted" {
		t.Fatalf("wait during shutdown = %+v, want errored/interrupted", a.res)
	}
}

// TestBodyLimitLeavesRoomForEscaping: the body limit holds a JSON message
// of proto.MaxMessageBytes of prose or code, its line ends, tabs and
// quotes escaped (<, > and & are not escaped at all), and a message of the
// worst bytes (control characters, 6 bytes each in JSON) reaches the
// supervisor whole: a client sends any long message as a text/plain body,
// streamed. The sizes come from encoding a sample, so a change of encoder
// shows here. (A message over the limit gets the supervisor's error:
// TestMessageLimit.)
func TestBodyLimitLeavesRoomForEscaping(t *testing.T) {
	const n = 1000
	overhead := len(wire.Marshal(wire.SendRequest{Message: "", Interrupt: true}))
	for _, text := range []string{"a line of text\n", "\tif x == \"a\" && y < 2 { return }\n", "<", "&", "ü"} {
		sample := strings.Repeat(text, n)
		grown := float64(len(wire.Marshal(wire.SendRequest{Message: sample, Interrupt: true}))-overhead) / float64(len(sample))
		if need := int64(grown*proto.MaxMessageBytes) + int64(overhead); need > maxBody {
			t.Errorf("a 64 MiB message of %q encodes to %d bytes, over the body limit %d", text, need, maxBody)
		}
	}
	if got := string(wire.Marshal(proto.SpawnRequest{Message: "if a < b && c > d"})); got != `{"message":"if a < b && c > d"}` {
		t.Fatalf("wire.Marshal escapes HTML: %s", got)
	}

	// And a real 1 MiB message of control characters, a common size, gets
	// through whole.
	s := newSupervisor(t, 4)
	_, c := serve(t, s)
	msg := strings.Repeat("\x01", 1<<20)
	sp, err := c.Spawn(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if whole, err := s.Message(t.Context(), sp.AgentID, 0); err != nil || whole != msg {
		t.Fatalf("the supervisor did not get the whole message (%d bytes, %v)", len(whole), err)
	}
}

// endless is a body that never ends: {"message":"xxxx…
type endless struct{ head bool }

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	if !e.head {
		n = copy(p, `{"message":"`)
		e.head = true
	}
	for i := n; i < len(p); i++ {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestBodyOverTheLimit: a body longer than maxBody (lowered here) is
// refused with 413 and an error that says what to do, as it is read: a
// body that never ends is answered, on every route that reads a body.
func TestBodyOverTheLimit(t *testing.T) {
	defer func(n int64) { maxBody = n }(maxBody)
	maxBody = 1 << 10
	s := newSupervisor(t, 4)
	_, c := serve(t, s)
	for _, path := range []string{"/v1/agents", "/v1/agents/x/send", "/v1/wait", "/v1/close", "/v1/agents/x/approve", "/v1/multi-agent/spawn"} {
		resp, err := rawHTTP(t, c).Post("http://subdash"+path, "application/json", &endless{})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var eb wire.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || eb.Code != proto.CodeTooLarge ||
			!strings.Contains(eb.Error, "request body longer than 1024 bytes; a message may be at most 67108864 bytes (64 MiB): send a long message as a text/plain body (feature text-message), or put the task in a file and send its path") {
			t.Errorf("%s: a body over the limit: %d %+v", path, resp.StatusCode, eb)
		}
	}
}

// TestBodyLimitIsNearTheMessageLimit: a JSON body of 90 MB is refused once
// maxBody bytes of it are read, not read whole and decoded first (a body
// of several messages' size would take the host's memory to several
// times that).
func TestBodyLimitIsNearTheMessageLimit(t *testing.T) {
	if maxBody > proto.MaxMessageBytes*3/2 {
		t.Fatalf("the body limit %d is over 1.5 messages (%d)", maxBody, proto.MaxMessageBytes)
	}
	s := newSupervisor(t, 4)
	_, c := serve(t, s)
	body := io.MultiReader(strings.NewReader(`{"message":"`), io.LimitReader(&endless{head: true}, 90<<20), strings.NewReader(`"}`))
	resp, err := rawHTTP(t, c).Post("http://subdash/v1/agents", "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() //nolint:errcheck // a response body, read: its Close cannot lose data
	var eb wire.ErrorBody
	_ = json.NewDecoder(resp.Body).Decode(&eb)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || eb.Code != proto.CodeTooLarge {
		t.Fatalf("a 90 MB body: %d %+v", resp.StatusCode, eb)
	}
}

// TestWaitTimeoutForms: timeout_ms may be any integral JSON number (huge
// ones are clamped like any other, SPEC §3) or null for the default; a
// fraction is refused with a message in words.
func TestWaitTimeoutForms(t *testing.T) {
	s := newSupervisor(t, 4)
	_, c := serve(t, s)
	sp := spawnFinal(t, c, "hello")
	for _, tc := range []struct {
		timeout string
		status  int
		want    string
	}{
		{`1e20`, http.StatusOK, `"completed"`},
		{`100000000000000000000000`, http.StatusOK, `"completed"`},
		{`null`, http.StatusOK, `"completed"`},
		{`15000`, http.StatusOK, `"completed"`},
		{`-1e20`, http.StatusBadRequest, "timeout_ms must be greater than zero"},
		{`1.5`, http.StatusBadRequest, "timeout_ms must be a whole number of milliseconds, not 1.5"},
		{`"soon"`, http.StatusBadRequest, `timeout_ms must be a whole number of milliseconds, not \"soon\"`},
	} {
		body := `{"ids":["` + sp.AgentID + `"],"timeout_ms":` + tc.timeout + `}`
		resp, err := rawHTTP(t, c).Post("http://subdash/v1/wait", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close() //nolint:errcheck // a response body, read: its Close cannot lose data
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("timeout_ms %s: %d %s; want %d and %s", tc.timeout, resp.StatusCode, b, tc.status, tc.want)
		}
	}
}

func TestEventsCarrySummaries(t *testing.T) {
	s := newSupervisor(t, 4)
	_, c := serve(t, s)
	first := spawnFinal(t, c, "first")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var seen []proto.Summary
	var second proto.SpawnResult
	err := c.Events(ctx, func(sum proto.Summary) error {
		seen = append(seen, sum)
		if len(seen) == 1 {
			var err error
			second, err = c.Spawn(ctx, "second")
			return err
		}
		if sum.AgentID == second.AgentID && sum.Status == proto.StatusCompleted {
			return io.EOF // done
		}
		return nil
	})
	if !errors.Is(err, io.EOF) {
		t.Fatalf("events ended with %v; seen %+v", err, seen)
	}
	if seen[0].AgentID != first.AgentID || seen[0].Status != proto.StatusCompleted {
		t.Fatalf("first event = %+v, want the existing agent's summary", seen[0])
	}
}

func TestInfoAndServeEnd(t *testing.T) {
	s := newSupervisor(t, 3)
	srv, err := Listen(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	c := client.NewClient(srv.Path(), s.Config().Dir)
	info, err := c.Info(context.Background())
	if err != nil || info.Dir != s.Config().Dir || info.Socket != srv.Path() || info.MaxAgents != 3 || info.PID == 0 {
		t.Fatalf("info = %+v, %v", info, err)
	}
	c.CloseIdleConnections()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve returned %v, want context.Canceled", err)
	}
	_, err = c.List(context.Background())
	var ns *client.NotServingError
	if !errors.As(err, &ns) {
		t.Fatalf("after Serve ended: %v, want NotServingError", err)
	}
	want := "no subdash is serving " + s.Config().Dir + " (socket " + srv.Path() + "); start subdash or subdash serve"
	if err.Error() != want {
		t.Fatalf("error = %q, want %q", err, want)
	}
}

// A client that goes away ends its wait at once, also when its body has
// bytes after the JSON object (the decoder stops at the closing brace, and
// net/http only watches for a disconnect once the body reached its end).
func TestWaitEndsWhenTheClientGoesAwayAfterTrailingBytes(t *testing.T) {
	s := newSupervisor(t, 4)
	srv, c := serve(t, s)
	sp, err := c.Spawn(context.Background(), "sleep")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("unix", srv.Path())
	if err != nil {
		t.Fatal(err)
	}
	// whitespace beyond what the decoder reads ahead
	body := `{"ids":["` + sp.AgentID + `"],"timeout_ms":300000}` + strings.Repeat(" ", 8192) + "\n"
	if _, err := fmt.Fprintf(conn, "POST /v1/wait HTTP/1.1\r\nHost: subdash\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, "wait request arrives", func() bool { return srv.waiting.Load() == 1 })
	conn.Close() //nolint:errcheck // the client going away is the point; its Close error is not
	testkit.Eventually(t, 5*time.Second, "the wait ends with its client", func() bool { return srv.waiting.Load() == 0 })
}

// logsOf returns what Client.Logs writes.
func logsOf(ctx context.Context, c *client.Client, id string, seq int, raw bool) (string, error) {
	var b strings.Builder
	err := c.WriteLogs(ctx, &b, id, seq, raw)
	return b.String(), err
}

// logs streams plain text, or with raw the log file's bytes.
func TestLogsPlainAndRaw(t *testing.T) {
	s := newSupervisor(t, 4)
	_, c := serve(t, s)
	ctx := context.Background()
	sp, err := c.Spawn(ctx, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, []string{sp.AgentID}, nil); err != nil {
		t.Fatal(err)
	}
	path, _ := s.LogPath(sp.AgentID, 0)
	if err := os.WriteFile(path, []byte("\x1b[31mred\x1b[m a\x00b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if text, err := logsOf(ctx, c, sp.AgentID, 0, false); err != nil || text != "red ab\n" {
		t.Errorf("plain: %q, %v", text, err)
	}
	if text, err := logsOf(ctx, c, sp.AgentID, 0, true); err != nil || text != "\x1b[31mred\x1b[m a\x00b\n" {
		t.Errorf("raw: %q, %v", text, err)
	}
}
