package supervisor

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// evalCommand runs each message as a shell snippet, so one supervisor can
// host children of different behaviour. The evaluation is the child's own
// doing: the supervisor only writes the message to its stdin.
const evalCommand = `read -r line; eval "$line"`

func TestSpawnResultFieldsAndJSON(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	res, err := s.Spawn(t.Context(), "  echo hello  ")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != proto.StatusRunning || res.LastMessage != "echo hello" || res.SubmissionID != res.LastSubmissionID ||
		res.HasLastOutput || res.HasLastError {
		t.Fatalf("spawn result = %+v", res)
	}
	b, _ := json.Marshal(res)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"agent_id", "submission_id", "status", "created_at", "updated_at", "last_message",
		"last_submission_id", "has_last_output", "has_last_error"} {
		if _, ok := m[k]; !ok {
			t.Errorf("spawn JSON lacks %q: %s", k, b)
		}
	}
	if _, err := time.Parse(time.RFC3339, m["created_at"].(string)); err != nil {
		t.Errorf("created_at not RFC3339: %v", err)
	}
	d := waitFinal(t, s, res.AgentID)
	if d.Status != proto.StatusCompleted || d.LastOutput == nil || *d.LastOutput != "hello" || d.LastError != nil {
		t.Fatalf("detail = %+v", d)
	}
	list := listOf(s)
	if len(list) != 1 || !list[0].HasLastOutput || list[0].HasLastError {
		t.Fatalf("list = %+v", list)
	}
}

func TestEmptyMessageIsAnError(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	for _, msg := range []string{"", "   ", "\n\t"} {
		if _, err := s.Spawn(t.Context(), msg); errText(err) != "message must not be empty" {
			t.Errorf("spawn(%q) error = %v", msg, err)
		}
	}
	id := spawn(t, s, "true")
	waitFinal(t, s, id)
	if _, err := s.Send(t.Context(), id, " ", false); errText(err) != "message must not be empty" {
		t.Errorf("send error = %v", err)
	}
	if n := len(listOf(s)); n != 1 {
		t.Errorf("agents = %d, want 1", n)
	}
}

func TestUnknownIDIsAnErrorEverywhereButWait(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	const id = "00000000-0000-0000-0000-000000000000"
	want := "agent not found: " + id
	_, err1 := s.Send(t.Context(), id, "x", false)
	_, err2 := s.Interrupt(t.Context(), id)
	_, err3 := s.Close(t.Context(), id)
	_, err4 := s.Resume(t.Context(), id)
	_, err5 := s.Logs(id, 0)
	for i, err := range []error{err1, err2, err3, err4, err5} {
		if errText(err) != want || proto.CodeOf(err) != proto.CodeNotFound {
			t.Errorf("op %d error = %v, want %q", i+1, err, want)
		}
	}
	res, err := s.Wait(context.Background(), []string{id}, nil)
	if err != nil || res.TimedOut || res.Status[id] != proto.StatusNotFound {
		t.Fatalf("wait = %+v, %v", res, err)
	}
	d := res.Details[id]
	if d.LastOutput != nil || d.LastMessage != nil || d.LastError != nil || d.UpdatedAt != nil || d.LastSubmissionID != nil {
		t.Errorf("not_found detail has fields: %+v", d)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"last_output":null`) {
		t.Errorf("not_found JSON = %s", b)
	}
}

func TestSendBusyThenInterrupt(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	id := spawn(t, s, "echo first; sleep 60")
	waitForLine(t, s, id, "first", 5*time.Second)
	pg := groupOf(t, s, id)
	_, err := s.Send(t.Context(), id, "echo second", false)
	if want := "agent " + id + " is busy; set interrupt=true to cancel current submission"; errText(err) != want || proto.CodeOf(err) != proto.CodeBusy {
		t.Fatalf("send error = %v", err)
	}
	res, err := s.Send(t.Context(), id, "echo second", true)
	if err != nil || res.Status != proto.StatusRunning || res.AgentID != id {
		t.Fatalf("send interrupt = %+v, %v", res, err)
	}
	assertGroupGone(t, pg)
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusCompleted || *d.LastOutput != "second" || *d.LastMessage != "echo second" {
		t.Fatalf("detail = %+v", d)
	}
	info, _ := s.Agent(id)
	if len(info.Submissions) != 2 || *info.Submissions[0].LastError != "interrupted" || info.Submissions[0].Status != proto.StatusErrored {
		t.Fatalf("submissions = %+v", info.Submissions)
	}
}

func TestInterruptThenSend(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	id := spawn(t, s, "sleep 60")
	pg := groupOf(t, s, id)
	res, err := s.Interrupt(t.Context(), id)
	if err != nil || res.Status != proto.StatusErrored {
		t.Fatalf("interrupt = %+v, %v", res, err)
	}
	assertGroupGone(t, pg)
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusErrored || d.LastError == nil || *d.LastError != "interrupted" {
		t.Fatalf("detail after interrupt = %+v", d)
	}
	if _, err := s.Interrupt(t.Context(), id); errText(err) != "agent "+id+" is not running" {
		t.Fatalf("second interrupt error = %v", err)
	}
	if _, err := s.Send(t.Context(), id, "echo again", false); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted || *d.LastOutput != "again" || d.LastError != nil {
		t.Fatalf("detail after send = %+v", d)
	}
}

func TestCloseRunningThenResumeGivesErroredInterrupted(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	id := spawn(t, s, "sleep 60")
	pg := groupOf(t, s, id)
	res, err := s.Close(t.Context(), id)
	if err != nil || res.Status != proto.StatusClosed {
		t.Fatalf("close = %+v, %v", res, err)
	}
	assertGroupGone(t, pg)
	if d := waitFinal(t, s, id); d.Status != proto.StatusClosed {
		t.Fatalf("status after close = %s", d.Status)
	}
	if res, err := s.Close(t.Context(), id); err != nil || res.Status != proto.StatusClosed {
		t.Fatalf("second close = %+v, %v", res, err)
	}
	_, err = s.Send(t.Context(), id, "echo x", false)
	if want := "agent " + id + " is closed; run resume_agent first"; errText(err) != want || proto.CodeOf(err) != proto.CodeClosed {
		t.Fatalf("send to closed = %v", err)
	}
	if _, err := s.Send(t.Context(), id, "echo x", true); proto.CodeOf(err) != proto.CodeClosed {
		t.Fatalf("send interrupt to closed = %v", err)
	}
	res, err = s.Resume(t.Context(), id)
	if err != nil || res.Status != proto.StatusErrored {
		t.Fatalf("resume = %+v, %v", res, err)
	}
	if d := waitFinal(t, s, id); *d.LastError != "interrupted" {
		t.Fatalf("last_error = %v", *d.LastError)
	}
	if _, err := s.Send(t.Context(), id, "echo back", false); err != nil {
		t.Fatal(err)
	}
	if d := waitFinal(t, s, id); d.Status != proto.StatusCompleted {
		t.Fatalf("after resume+send: %+v", d)
	}
}

func TestCloseIdleThenResumeRestoresStatus(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	ok := spawn(t, s, "echo fine")
	bad := spawn(t, s, "exit 2")
	waitFinal(t, s, ok)
	waitFinal(t, s, bad)
	for id, want := range map[string]proto.Status{ok: proto.StatusCompleted, bad: proto.StatusErrored} {
		if _, err := s.Close(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		res, err := s.Resume(t.Context(), id)
		if err != nil || res.Status != want {
			t.Errorf("resume %s = %+v, %v; want %s", id, res, err, want)
		}
		// resume of an open agent changes nothing
		if res, err := s.Resume(t.Context(), id); err != nil || res.Status != want {
			t.Errorf("second resume = %+v, %v", res, err)
		}
	}
	if n := len(s.Agents()[0].Submissions); n != 1 {
		t.Errorf("resume started a submission: %d", n)
	}
}

func TestConcurrencyLimitLeavesNoAgentBehind(t *testing.T) {
	s := newTestSupervisor(t, evalCommand, func(c *Config) { c.MaxAgents = 2 })
	a := spawn(t, s, "sleep 60")
	b := spawn(t, s, "sleep 60")
	_, err := s.Spawn(t.Context(), "echo three")
	if errText(err) != "subagent concurrency limit reached (2)" || proto.CodeOf(err) != proto.CodeLimit {
		t.Fatalf("third spawn error = %v", err)
	}
	if n := len(listOf(s)); n != 2 {
		t.Fatalf("agents after refused spawn = %d, want 2", n)
	}
	// a send with interrupt replaces a's submission without needing a slot
	if _, err := s.Send(t.Context(), a, "sleep 60", true); err != nil {
		t.Fatalf("send interrupt at the limit: %v", err)
	}
	if _, err := s.Interrupt(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	c := spawn(t, s, "sleep 60") // not "echo": it could end, freeing its slot, before the send
	if _, err := s.Send(t.Context(), b, "echo b", false); errText(err) != "subagent concurrency limit reached (2)" {
		t.Fatalf("send at the limit = %v", err)
	}
	if _, err := s.Interrupt(t.Context(), c); err != nil { // returns once c's group is gone
		t.Fatal(err)
	}
	if _, err := s.Send(t.Context(), b, "echo b", false); err != nil {
		t.Fatalf("send after a slot freed: %v", err)
	}
}

func TestExitCodesAndSignals(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	cases := map[string]string{
		"exit 3":          "submission failed with exit code 3",
		"kill -SEGV $$":   "submission killed by signal SIGSEGV",
		"kill -KILL $$":   "submission killed by signal SIGKILL",
		"nonexistent-cmd": "submission failed with exit code 127",
	}
	ids := map[string]string{}
	for msg := range cases {
		ids[msg] = spawn(t, s, msg)
	}
	for msg, want := range cases {
		d := waitFinal(t, s, ids[msg])
		if d.Status != proto.StatusErrored || d.LastError == nil || *d.LastError != want {
			t.Errorf("%s: detail = %+v, want %q", msg, d, want)
		}
	}
}

func TestWaitArguments(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	if _, err := s.Wait(context.Background(), nil, nil); errText(err) != "ids must not be empty" {
		t.Errorf("empty ids: %v", err)
	}
	for _, ms := range []int{0, -5} {
		ms := ms
		if _, err := s.Wait(context.Background(), []string{"x"}, &ms); errText(err) != "timeout_ms must be greater than zero" {
			t.Errorf("timeout %d: %v", ms, err)
		}
	}
}

func TestWaitTimesOutWithEmptyMapsAfterClampedMinimum(t *testing.T) {
	t.Parallel()
	s := newTestSupervisor(t, evalCommand)
	id := spawn(t, s, "sleep 60")
	ms := 1 // clamped up to 10 s
	start := time.Now()
	res, err := s.Wait(context.Background(), []string{id}, &ms)
	elapsed := time.Since(start)
	if err != nil || !res.TimedOut || len(res.Status) != 0 || len(res.Details) != 0 {
		t.Fatalf("wait = %+v, %v", res, err)
	}
	if elapsed < proto.MinWaitTimeoutMS*time.Millisecond {
		t.Fatalf("wait returned after %s; timeout_ms 1 must be clamped to %d ms", elapsed, proto.MinWaitTimeoutMS)
	}
	b, _ := json.Marshal(res)
	if string(b) != `{"status":{},"details":{},"timed_out":true}` {
		t.Fatalf("timeout JSON = %s", b)
	}
}

func TestWaitReturnsFinalIDsOnly(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	slow := spawn(t, s, "sleep 60")
	fast := spawn(t, s, "echo done")
	ms := proto.MaxWaitTimeoutMS
	res, err := s.Wait(context.Background(), []string{slow, fast}, &ms)
	if err != nil || res.TimedOut {
		t.Fatal(res, err)
	}
	if _, ok := res.Status[slow]; ok || res.Status[fast] != proto.StatusCompleted || len(res.Details) != 1 {
		t.Fatalf("wait = %+v", res)
	}
}

func TestWaitIsCancelledWithItsContext(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	id := spawn(t, s, "sleep 60")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Wait(ctx, []string{id}, nil)
		done <- err
	}()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("wait after cancel = %v", err)
	}
}

func TestShortIDPrefix(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	id := spawn(t, s, "echo hi")
	waitFinal(t, s, id[:8])
	out, err := s.Logs(id[:8], 0)
	if err != nil || out != "hi\n" {
		t.Fatalf("logs by prefix = %q, %v", out, err)
	}
	if _, err := s.Logs(id[:3], 0); proto.CodeOf(err) != proto.CodeNotFound {
		t.Fatalf("3-char prefix = %v", err)
	}
}

func TestListOldestFirstAndLogsBySubmission(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	a := spawn(t, s, "echo one")
	b := spawn(t, s, "echo two")
	waitFinal(t, s, a)
	if _, err := s.Send(t.Context(), a, "echo three", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, a)
	list := listOf(s)
	if len(list) != 2 || list[0].AgentID != a || list[1].AgentID != b {
		t.Fatalf("list order = %+v", list)
	}
	for seq, want := range map[int]string{1: "one\n", 2: "three\n", 0: "three\n"} {
		if out, err := s.Logs(a, seq); err != nil || out != want {
			t.Errorf("logs seq %d = %q, %v", seq, out, err)
		}
	}
	if _, err := s.Logs(a, 3); err == nil || !strings.Contains(err.Error(), "has no submission 3") {
		t.Errorf("logs seq 3 = %v", err)
	}
}

func TestSubmissionEnvironment(t *testing.T) {
	s := newTestSupervisor(t, evalCommand, func(c *Config) {
		c.Environ = append(c.Environ, "MEMO_ENABLE_COLLAB_TOOLS=1", "SUBDASH_AGENT_ID=stale")
	})
	id := spawn(t, s, `echo "$SUBDASH_AGENT_ID $SUBDASH_SUBMISSION_SEQ $SUBDASH_SUBMISSION_ID $MEMO_ENABLE_COLLAB_TOOLS"`)
	d := waitFinal(t, s, id)
	want := id + " 1 " + *d.LastSubmissionID + " 0"
	if *d.LastOutput != want {
		t.Fatalf("environment = %q, want %q", *d.LastOutput, want)
	}
	nested := newTestSupervisor(t, evalCommand, func(c *Config) {
		c.AllowNested = true
		c.Environ = append(c.Environ, "MEMO_ENABLE_COLLAB_TOOLS=1")
	})
	id = spawn(t, nested, `echo "$MEMO_ENABLE_COLLAB_TOOLS"`)
	if d := waitFinal(t, nested, id); *d.LastOutput != "1" {
		t.Fatalf("--allow-nested: MEMO_ENABLE_COLLAB_TOOLS = %q", *d.LastOutput)
	}
}

func TestMessageReachesStdinLiterally(t *testing.T) {
	s := newTestSupervisor(t, "cat")
	marker := t.TempDir() + "/pwned"
	msg := "$(touch " + marker + "); ; | && `touch " + marker + "` 'quote\" \\"
	id := spawn(t, s, msg)
	d := waitFinal(t, s, id)
	if *d.LastOutput != msg {
		t.Fatalf("child read %q, want %q", *d.LastOutput, msg)
	}
	if _, err := statFile(marker); err == nil {
		t.Fatal("the message was executed")
	}
}

func TestMissingWorkingDirectoryErrorsTheAgent(t *testing.T) {
	s := newTestSupervisor(t, "echo hi", func(c *Config) { c.Dir = c.Dir + "/gone" })
	res, err := s.Spawn(t.Context(), "task")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != proto.StatusErrored || !res.HasLastError {
		t.Fatalf("spawn = %+v", res)
	}
	d := waitFinal(t, s, res.AgentID)
	if d.LastError == nil || !strings.Contains(*d.LastError, "working directory") || !strings.Contains(*d.LastError, "does not exist") {
		t.Fatalf("last_error = %v", d.LastError)
	}
}

func TestTimeout(t *testing.T) {
	s := newTestSupervisor(t, evalCommand, func(c *Config) { c.Timeout = 200 * time.Millisecond })
	id := spawn(t, s, "sleep 60")
	pg := groupOf(t, s, id)
	d := waitFinal(t, s, id)
	if d.Status != proto.StatusErrored || *d.LastError != "timed out after 200ms" {
		t.Fatalf("detail = %+v", d)
	}
	assertGroupGone(t, pg)
}

func TestShutdownTerminatesEverything(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	var groups []int
	for i := 0; i < 3; i++ {
		id := spawn(t, s, "sleep 300 & sleep 301; wait")
		groups = append(groups, groupOf(t, s, id))
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pg := range groups {
		assertGroupGone(t, pg)
	}
	if _, err := s.Spawn(t.Context(), "echo late"); proto.CodeOf(err) != proto.CodeShutdown {
		t.Fatalf("spawn after shutdown = %v", err)
	}
	for _, a := range listOf(s) {
		if a.Status != proto.StatusErrored {
			t.Errorf("agent %s status %s after shutdown", a.AgentID, a.Status)
		}
	}
}

// TestSkipGraceKillsAtOnce: with a grace period of an hour, agents that
// ignore SIGTERM (and a child that left the group) still end once
// SkipGrace is called during Shutdown: they get SIGKILL at once.
func TestSkipGraceKillsAtOnce(t *testing.T) {
	s := newTestSupervisor(t, evalCommand, func(c *Config) { c.Grace = time.Hour })
	var groups []int
	for i := 0; i < 2; i++ {
		id := spawn(t, s, "trap '' TERM; setsid sh -c 'trap \"\" TERM; exec sleep 301' & echo started; sleep 300 & wait")
		waitForLine(t, s, id, "started", 10*time.Second)
		groups = append(groups, groupOf(t, s, id))
	}
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	s.SkipGrace()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // fails instead of hanging for the hour
		t.Fatal("Shutdown still waits for the grace period after SkipGrace")
	}
	for _, pg := range groups {
		assertGroupGone(t, pg)
	}
	for _, a := range listOf(s) {
		if d := waitFinal(t, s, a.AgentID); d.Status != proto.StatusErrored || d.LastError == nil || *d.LastError != "interrupted" {
			t.Errorf("agent %s: %s %v after shutdown", a.AgentID, d.Status, d.LastError)
		}
	}
}

// TestJournalFailureIsInEverySummary: a journal that cannot be written is
// said, with its path, in every agent's summary and wait details (SPEC §5).
func TestJournalFailureIsInEverySummary(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	id := spawn(t, s, "true")
	waitFinal(t, s, id)
	if f := listOf(s)[0].Failure; f != "" {
		t.Fatalf("failure %q before anything failed", f)
	}
	path := filepath.Join(s.RunDir(), "journal.jsonl")
	breakJournal(t, path) // the journal's next write fails
	if _, err := s.Send(t.Context(), id, "true", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, id)
	want := "journal could not be written (bad file descriptor): " + path
	if f := listOf(s)[0].Failure; !strings.HasPrefix(f, want) {
		t.Fatalf("failure %q, want it to start %q", f, want)
	}
	res, err := s.Wait(context.Background(), []string{id}, nil)
	if err != nil || !strings.HasPrefix(res.Details[id].Failure, want) {
		t.Fatalf("wait details %+v, %v; want the journal's failure", res.Details[id], err)
	}
}
