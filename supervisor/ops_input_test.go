package supervisor

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/subdash/subdash/supervisor/internal/journal"
	"github.com/subdash/subdash/supervisor/proto"
)

// Large inputs, concurrency and ambiguous ids: what a program driving the
// supervisor can throw at it.

func TestJSONResultsCutAHugeMessage(t *testing.T) {
	s := newTestSupervisor(t, "cat > /dev/null")
	msg := strings.Repeat("é", 3*proto.MaxJSONMessage)
	res, err := s.Spawn(t.Context(), msg)
	if err != nil {
		t.Fatal(err)
	}
	d := waitFinal(t, s, res.AgentID)
	for name, v := range map[string]any{"spawn": res, "list": proto.ListResult{Agents: listOf(s)}, "wait": d} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if name == "list" {
			b = []byte(strings.TrimSuffix(strings.TrimPrefix(string(b), `{"agents":[`), "]}"))
		}
		var m struct {
			LastMessage  string `json:"last_message"`
			SubmissionID string `json:"submission_id"`
			AgentID      string `json:"agent_id"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if n := len([]rune(m.LastMessage)); n != proto.MaxJSONMessage || !strings.HasSuffix(m.LastMessage, "...[truncated]") {
			t.Errorf("%s: last_message has %d characters, ends %q", name, n, m.LastMessage[len(m.LastMessage)-20:])
		}
		if name == "spawn" && (m.SubmissionID == "" || m.AgentID == "") {
			t.Errorf("spawn JSON lost fields: %s", b[:200])
		}
	}
	// Go callers, such as the dashboard's resend, get the whole message
	// from its file beside the log (SPEC §10); memory keeps a head.
	if whole, err := s.Message(t.Context(), res.AgentID, 1); err != nil || whole != msg {
		t.Errorf("Message gave %d bytes, %v; want the whole %d", len(whole), err, len(msg))
	}
	if info, _ := s.Agent(res.AgentID); len(info.LastMessage) > journal.MaxMessageHead+100 || !strings.HasPrefix(msg, strings.Split(info.LastMessage, "...[truncated")[0]) {
		t.Errorf("the snapshot holds %d bytes of the message; want a head of at most %d", len(info.LastMessage), journal.MaxMessageHead)
	}
}

// TestMessageLimit: a message over MaxMessageBytes is refused with an error
// that says what to do, and no agent is left behind; one at the limit
// reaches the agent whole.
func TestMessageLimit(t *testing.T) {
	s := newTestSupervisor(t, "wc -c")
	_, err := s.Spawn(t.Context(), strings.Repeat("x", proto.MaxMessageBytes+1))
	if proto.CodeOf(err) != proto.CodeTooLarge || !strings.Contains(err.Error(), "longer than the limit of 67108864 (64 MiB); put the task in a file and send its path") {
		t.Fatalf("spawn with a message over the limit: %v", err)
	}
	if n := len(listOf(s)); n != 0 {
		t.Fatalf("%d agents left behind", n)
	}
	res, err := s.Spawn(t.Context(), strings.Repeat("x", proto.MaxMessageBytes))
	if err != nil {
		t.Fatal(err)
	}
	d := waitFinal(t, s, res.AgentID)
	if d.LastOutput == nil || strings.TrimSpace(*d.LastOutput) != "67108865" { // with the newline after the message
		t.Fatalf("the agent read %v bytes", d.LastOutput)
	}
	if _, err := s.Send(t.Context(), res.AgentID, strings.Repeat("y", proto.MaxMessageBytes+1), false); proto.CodeOf(err) != proto.CodeTooLarge {
		t.Fatalf("send with a message over the limit: %v", err)
	}
}

// Readers (the dashboard, ctl logs, the nesting check) run while agents are
// spawned, sent to, interrupted and closed: under -race this finds state
// that is written without the supervisor's lock.
func TestConcurrentOperationsAndReaders(t *testing.T) {
	s := newTestSupervisor(t, evalCommand, func(c *Config) { c.MaxAgents = 3 })
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, a := range s.Agents() {
				_, _ = s.Window(t.Context(), a.AgentID, 0, 0, 50)
				_, _, _ = s.Transcript(t.Context(), a.AgentID, 0, 0, 10)
				_, _ = s.Logs(a.AgentID, 0)
			}
			_ = listOf(s)
			_ = s.CheckNesting(os.Getpid())
		}
	}()
	var ids []string
	for i := 0; i < 6; i++ {
		if res, err := s.Spawn(t.Context(), "echo spawned; sleep 0.2"); err == nil {
			ids = append(ids, res.AgentID)
		}
	}
	for i, id := range ids {
		switch i % 3 {
		case 0:
			_, _ = s.Send(t.Context(), id, "echo again", true)
		case 1:
			_, _ = s.Interrupt(t.Context(), id)
		case 2:
			_, _ = s.Close(t.Context(), id)
		}
	}
	close(stop)
	<-readerDone
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, a := range s.Agents() {
		if a.Running() {
			t.Errorf("agent %s still running after shutdown", a.AgentID)
		}
	}
}

// The journal records a huge message cut (the child gets all of it), so
// every journal line stays readable.
func TestJournalCutsAHugeMessage(t *testing.T) {
	s := newTestSupervisor(t, "wc -c")
	msg := strings.Repeat("x", 1<<20)
	id := spawn(t, s, msg)
	if d := waitFinal(t, s, id); strings.TrimSpace(*d.LastOutput) != "1048577" {
		t.Fatalf("the child got %q bytes, want the whole message and its newline", *d.LastOutput)
	}
	for _, line := range strings.Split(readJournal(t, s), "\n") {
		if len(line) > 2*(64<<10) { // twice the journal's cut of a message
			t.Fatalf("journal line of %d bytes", len(line))
		}
		if strings.Contains(line, `"event":"spawned"`) && !strings.Contains(line, "...[truncated: 1048576 bytes in all]") {
			t.Fatalf("spawned event does not say the message was cut: %.200s", line)
		}
	}
}

// An id prefix that matches two agents is an error in every operation,
// wait included (a caller would take not_found for an answer).
func TestAmbiguousPrefixIsAnError(t *testing.T) {
	s := newTestSupervisor(t, evalCommand)
	s.mu.Lock()
	for _, id := range []string{"abcd1111-0000-4000-8000-000000000001", "abcd2222-0000-4000-8000-000000000002"} {
		a := &agent{id: id, status: proto.StatusCompleted}
		s.agents[id] = a
		s.order = append(s.order, a)
	}
	s.mu.Unlock()
	want := "agent id prefix abcd matches more than one agent; give more characters"
	_, err1 := s.Wait(context.Background(), []string{"abcd"}, nil)
	_, err2 := s.Close(t.Context(), "abcd")
	_, err3 := s.Send(t.Context(), "abcd", "x", false)
	for i, err := range []error{err1, err2, err3} {
		if errText(err) != want || proto.CodeOf(err) != proto.CodeInvalid {
			t.Errorf("op %d: %v", i+1, err)
		}
	}
	if res, err := s.Wait(context.Background(), []string{"abcd1"}, nil); err != nil || res.Status["abcd1"] != proto.StatusCompleted {
		t.Errorf("a unique prefix: %+v, %v", res, err)
	}
	// UUIDs compare case-insensitively (RFC 9562): an id or prefix in
	// capitals, as some tools print them, finds the agent.
	for _, id := range []string{"ABCD1111-0000-4000-8000-000000000001", "ABCD2"} {
		if res, err := s.Wait(context.Background(), []string{id}, nil); err != nil || res.Status[id] != proto.StatusCompleted {
			t.Errorf("%s: %+v, %v", id, res, err)
		}
	}
}
