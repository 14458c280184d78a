package supervisor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
)

// queued spawns "hold g1 [fail]" and queues "quick next" on it.
func queuedAgent(t *testing.T, s *Supervisor, first string) string {
	t.Helper()
	id := spawn(t, s, first)
	res, err := s.Queue(t.Context(), id, "quick next")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Queued || res.Status != proto.StatusRunning || res.SubmissionID != "" {
		t.Fatalf("queue result %+v", res)
	}
	if got := attnSummary(t, s, id).QueuedMessage; got != "quick next" {
		t.Fatalf("queued_message %q", got)
	}
	return id
}

func submissionsOf(t *testing.T, s *Supervisor, id string) []proto.SubmissionInfo {
	t.Helper()
	a, _ := s.Agent(id)
	return a.Submissions
}

func TestQueuedMessageStartsWhenTheSubmissionEnds(t *testing.T) {
	for _, c := range []struct {
		first  string
		status proto.Status
	}{{"hold g1", proto.StatusCompleted}, {"hold g1 fail", proto.StatusErrored}} {
		t.Run(string(c.status), func(t *testing.T) {
			s := newTestSupervisor(t, gated)
			id := queuedAgent(t, s, c.first)
			firstSub := submissionsOf(t, s, id)[0].ID
			// A wait in flight when the first submission ends returns its
			// final status, although the queued one starts at once.
			type waited struct {
				res proto.WaitResult
				err error
			}
			got := make(chan waited, 1)
			go func() {
				ms := proto.MaxWaitTimeoutMS
				r, err := s.Wait(context.Background(), []string{id}, &ms)
				got <- waited{r, err}
			}()
			eventually(t, s, 5*time.Second, "the wait in flight", func() bool { return s.Waiting() == 1 })
			openGate(t, s, "g1")
			w := <-got
			if w.err != nil || w.res.TimedOut || w.res.Status[id] != c.status || *w.res.Details[id].LastSubmissionID != firstSub {
				t.Fatalf("wait in flight: %+v %v", w.res, w.err)
			}
			d := waitFinal(t, s, id)
			subs := submissionsOf(t, s, id)
			if len(subs) != 2 || subs[1].Message != "quick next" || d.Status != proto.StatusCompleted || *d.LastMessage != "quick next" {
				t.Fatalf("after the queue: %d submissions, detail %+v", len(subs), d)
			}
			sum := attnSummary(t, s, id)
			if sum.QueuedMessage != "" || sum.NeedsYou == nil || sum.NeedsYou.Reason != "completed" {
				t.Fatalf("summary after the queue: %+v", sum)
			}
		})
	}
}

// TestInterruptKeepsTheQueueCloseDropsIt: an interrupt keeps the queued
// messages for the agent's next submission (SPEC §14, as Memo keeps its
// mailbox), which takes them before its own; a send with interrupt is
// such a next submission; close drops them and says so.
func TestInterruptKeepsTheQueueCloseDropsIt(t *testing.T) {
	s := newTestSupervisor(t, gated)
	a := queuedAgent(t, s, "hold never")
	res, err := s.Interrupt(t.Context(), a)
	if err != nil || res.DroppedQueued {
		t.Fatalf("interrupt: %+v %v", res, err)
	}
	if q := attnSummary(t, s, a).QueuedMessages; len(q) != 1 || q[0] != "quick next" || len(submissionsOf(t, s, a)) != 1 {
		t.Fatalf("after the interrupt: queued %q, %d submissions", q, len(submissionsOf(t, s, a)))
	}
	if _, err := s.Send(t.Context(), a, "quick more", false); err != nil {
		t.Fatal(err)
	}
	waitFinal(t, s, a)
	b := queuedAgent(t, s, "hold never")
	res, err = s.Close(t.Context(), b)
	if err != nil || !res.DroppedQueued {
		t.Fatalf("close: %+v %v", res, err)
	}
	c := queuedAgent(t, s, "hold never")
	sres, err := s.Send(t.Context(), c, "quick replaced", true)
	if err != nil || sres.DroppedQueued {
		t.Fatalf("send with interrupt: %+v %v", sres, err)
	}
	waitFinal(t, s, c)
	for id, want := range map[string]int{a: 2, b: 1, c: 2} {
		if n := len(submissionsOf(t, s, id)); n != want || attnSummary(t, s, id).QueuedMessage != "" {
			t.Errorf("agent %s: %d submissions (want %d), queued %q", id[:8], n, want, attnSummary(t, s, id).QueuedMessage)
		}
	}
	for id, want := range map[string]string{a: "quick next\n\nquick more", c: "quick next\n\nquick replaced"} {
		if m := submissionsOf(t, s, id)[1].Message; m != want {
			t.Errorf("agent %s: the next submission's message is %q, want %q", id[:8], m, want)
		}
		if m, err := s.Message(t.Context(), id, 2); err != nil || m != want {
			t.Errorf("agent %s: the whole message is %q (%v)", id[:8], m, err)
		}
	}
}

func TestCancelledQueueDoesNotRun(t *testing.T) {
	s := newTestSupervisor(t, gated)
	id := queuedAgent(t, s, "hold g1")
	res, err := s.CancelQueue(t.Context(), id)
	if err != nil || !res.DroppedQueued {
		t.Fatalf("cancel: %+v %v", res, err)
	}
	if _, err := s.CancelQueue(t.Context(), id); proto.CodeOf(err) != proto.CodeNoQueue || !strings.Contains(err.Error(), "has no queued message") {
		t.Fatalf("second cancel: %v", err)
	}
	openGate(t, s, "g1")
	waitFinal(t, s, id)
	if n := len(submissionsOf(t, s, id)); n != 1 {
		t.Fatalf("%d submissions after a cancelled queue", n)
	}
}

func TestQueueArguments(t *testing.T) {
	s := newTestSupervisor(t, gated)
	idle := spawn(t, s, "quick")
	waitFinal(t, s, idle)
	// Nothing runs: the message starts at once.
	res, err := s.Queue(t.Context(), idle, "quick again")
	if err != nil || res.Queued || res.SubmissionID == "" {
		t.Fatalf("queue on an idle agent: %+v %v", res, err)
	}
	busy := queuedAgent(t, s, "hold never")
	// Several wait in order; a cancel takes the last.
	if _, err := s.Queue(t.Context(), busy, "third"); err != nil {
		t.Fatalf("second queue: %v", err)
	}
	if q := attnSummary(t, s, busy).QueuedMessages; len(q) != 2 || q[0] != "quick next" || q[1] != "third" {
		t.Fatalf("queued %q", q)
	}
	if _, err := s.CancelQueue(t.Context(), busy); err != nil {
		t.Fatal(err)
	}
	if sum := attnSummary(t, s, busy); len(sum.QueuedMessages) != 1 || sum.QueuedMessage != "quick next" {
		t.Fatalf("after the cancel: %q", sum.QueuedMessages)
	}
	if _, err := s.Queue(t.Context(), busy, "  "); proto.CodeOf(err) != proto.CodeInvalid {
		t.Fatalf("empty: %v", err)
	}
	if _, err := s.Queue(t.Context(), "nope-nope", "x"); proto.CodeOf(err) != proto.CodeNotFound {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := s.Close(t.Context(), busy); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Queue(t.Context(), busy, "x"); proto.CodeOf(err) != proto.CodeClosed {
		t.Fatalf("closed: %v", err)
	}
}

// TestMessageAtTheTurnsEndStartsOneSubmission: a queued message (Queue)
// or a follow-up (followup_task) that arrives as the running submission
// ends, at any moment around it, starts exactly one next submission with
// that message, and nothing stays in the mailbox. The posts land 0-12 ms
// after the spawn of an agent whose turn takes about 50 ms; a large
// message takes long to keep in its file, which widens the moment
// between the check that the agent runs and its post.
func TestMessageAtTheTurnsEndStartsOneSubmission(t *testing.T) {
	s := newTestSupervisor(t, "cat >/dev/null; sleep 0.05; echo ok")
	large := strings.Repeat("x", 8<<20)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 41))
	for i := range 60 {
		text := fmt.Sprintf("next %d", i)
		if i%3 == 0 {
			text += " " + large
		}
		followup := i%2 == 1
		first := "first"
		if i%4 < 2 {
			first += " " + large
		}
		id := spawn(t, s, first)
		offset := time.Duration(rng.IntN(13)) * time.Millisecond
		time.Sleep(offset) // where the post lands against the turn's end: the subject of the test
		var err error
		if followup {
			_, err = s.MessageAgent(t.Context(), id, text, true)
		} else {
			_, err = s.Queue(t.Context(), id, text)
		}
		if err != nil {
			t.Fatalf("iteration %d (followup %v, %s after the spawn): %v", i, followup, offset, err)
		}
		// The post returned: the message is either in the running
		// submission's mailbox, whose end starts the next at once, or in
		// a next submission already. An idle agent is done.
		eventually(t, s, time.Minute, "the agent runs nothing", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			a := s.agents[id]
			return a.running == nil && !a.replacing && !a.ending
		})
		subs := submissionsOf(t, s, id)
		sum := attnSummary(t, s, id)
		if len(subs) != 2 || len(sum.QueuedMessages) != 0 || sum.Status != proto.StatusCompleted {
			t.Fatalf("iteration %d (followup %v, %d bytes, posted %s after the spawn): %d submissions, status %s, queued %d message(s) %.40q",
				i, followup, len(text), offset, len(subs), sum.Status, len(sum.QueuedMessages), sum.QueuedMessages)
		}
		if m, err := s.Message(t.Context(), id, 2); err != nil || m != text {
			t.Fatalf("iteration %d: the next submission's message is %d bytes %.40q (%v), want %d bytes", i, len(m), m, err, len(text))
		}
		if _, err := s.Forget(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(s.runDir, id)); err != nil { // its 8 MiB files
			t.Fatal(err)
		}
	}
}

// TestCancelledFollowupAtTheLimitStartsNothing: a follow-up that waits for
// a slot (pending_init) and is then cancelled, or dropped by a close
// before a resume, leaves nothing to start: the agent is no longer
// pending, and the freed slot starts no submission of it (the host
// crashed on a nil message there).
func TestCancelledFollowupAtTheLimitStartsNothing(t *testing.T) {
	for _, how := range []string{"cancel-queue", "close and resume"} {
		t.Run(how, func(t *testing.T) {
			s := newTestSupervisor(t, gated, func(c *Config) { c.MaxAgents = 1 })
			idle := spawn(t, s, "quick")
			waitFinal(t, s, idle)
			busy := spawn(t, s, "hold g1")
			if _, err := s.MessageAgent(t.Context(), idle, "quick more", true); err != nil {
				t.Fatal(err)
			}
			if sum := attnSummary(t, s, idle); !sum.PendingStart || len(sum.QueuedMessages) != 1 {
				t.Fatalf("a follow-up at the limit: pending %v, queued %q", sum.PendingStart, sum.QueuedMessages)
			}
			var err error
			if how == "cancel-queue" {
				_, err = s.CancelQueue(t.Context(), idle)
			} else if _, err = s.Close(t.Context(), idle); err == nil {
				_, err = s.Resume(t.Context(), idle)
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum := attnSummary(t, s, idle); sum.PendingStart || len(sum.QueuedMessages) != 0 {
				t.Fatalf("after %s: pending %v, queued %q", how, sum.PendingStart, sum.QueuedMessages)
			}
			openGate(t, s, "g1")
			waitFinal(t, s, busy)
			s.runs.Wait() // busy's end handed its slot on (startPending), and what that started ended
			if n := len(submissionsOf(t, s, idle)); n != 1 {
				t.Fatalf("%d submissions after %s", n, how)
			}
		})
	}
}
