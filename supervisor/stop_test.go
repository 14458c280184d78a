package supervisor

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/supervisor/transcript"
)

// Every stop of a claude agent whose tool call runs on stops it the way
// its interrupt does (SPEC §4): no model call starts after the stop and
// nothing more is billed. The fake claude of testdata/fakecli ("bash …")
// answers SIGTERM to its group as claude 2.1.197 did (the killed tool's
// result goes to the model, a reply and a $0.19 result follow) and its
// interrupt control request as claude does (the turn ends with the $0.09
// spent so far, and no call). What the user gets: no model call in the
// fake's log, the cost the CLI reported before the stop, the row's status,
// and the stop marked in the transcript before what came after it.
func TestStopOfClaudeStartsNoModelCall(t *testing.T) {
	for _, c := range []struct {
		name    string
		timeout time.Duration
		stop    func(t *testing.T, s *Supervisor, id string)
		status  proto.Status
		lastErr string
	}{
		{name: "close", stop: func(t *testing.T, s *Supervisor, id string) {
			if _, err := s.Close(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}, status: proto.StatusClosed, lastErr: "interrupted"},
		{name: "interrupt", stop: func(t *testing.T, s *Supervisor, id string) {
			if _, err := s.Interrupt(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}, status: proto.StatusErrored, lastErr: "interrupted"},
		{name: "quit", stop: func(t *testing.T, s *Supervisor, _ string) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}, status: proto.StatusErrored, lastErr: "interrupted"},
		{name: "timeout", timeout: 2 * time.Second, stop: func(t *testing.T, s *Supervisor, id string) {
			waitFinal(t, s, id)
		}, status: proto.StatusErrored, lastErr: "timed out after 2s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, log := presetSupervisor(t, "claude", func(cfg *Config) {
				cfg.Grace = 10 * time.Second // the interrupt ends it long before; SIGKILL would hide a call
				cfg.Timeout = c.timeout
			})
			id := spawn(t, s, "bash sleep 300")
			waitForLine(t, s, id, "toolu_fake_bash", 30*time.Second)
			c.stop(t, s, id)

			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "model\t") {
					t.Errorf("a model call started after the %s: %s", c.name, l)
				}
			}
			info, _ := s.Agent(id)
			if info.Usage.CostUSD != 0.09 {
				t.Errorf("cost $%v: want the $0.09 claude reported at its interrupt, nothing billed after the %s", info.Usage.CostUSD, c.name)
			}
			if info.Status != c.status || info.LastError == nil || *info.LastError != c.lastErr {
				t.Errorf("row %s %v: want %s, last_error %q", info.Status, info.LastError, c.status, c.lastErr)
			}
			assertStopMarked(t, s, id)
		})
	}
}

// assertStopMarked checks that the transcript of id's latest submission
// says where the stop came, and that the CLI's result comes after it and
// is no success.
func assertStopMarked(t *testing.T, s *Supervisor, id string) {
	t.Helper()
	w, ok, err := s.Transcript(t.Context(), id, 0, 0, 1000)
	if err != nil || !ok {
		t.Fatalf("transcript: %v %v", ok, err)
	}
	stop, result := -1, -1
	for i, e := range w.Entries {
		switch {
		case e.Kind == transcript.KindNote && strings.Contains(e.Text, "what follows arrived after the stop"):
			stop = i
		case e.Kind == transcript.KindResult:
			result = i
			if !e.IsError {
				t.Errorf("a successful result after the stop: %+v", e)
			}
		}
	}
	if stop < 0 || result >= 0 && result < stop {
		t.Errorf("the stop note at %d, the result at %d: want the note first; transcript %+v", stop, result, w.Entries)
	}
}

// A claude that does not end on its interrupt gets the grace period, then
// SIGKILL with no SIGTERM first: the fake ("deaf …") would answer a
// SIGTERM with a model call, as claude 2.1.197 did.
func TestStopOfClaudeDeafToItsInterruptKillsAfterTheGrace(t *testing.T) {
	const grace = time.Second
	s, log := presetSupervisor(t, "claude", func(cfg *Config) { cfg.Grace = grace })
	id := spawn(t, s, "deaf sleep 300")
	waitForLine(t, s, id, "toolu_fake_bash", 30*time.Second)
	pgid := groupOf(t, s, id)
	start := time.Now()
	if _, err := s.Close(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < grace {
		t.Errorf("close returned after %s: want the grace period (%s) for the interrupt first", took, grace)
	}
	assertGroupGone(t, pgid)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "\nmodel\t") {
		t.Errorf("a model call started after the close (the CLI got a SIGTERM): %s", b)
	}
	if !strings.Contains(string(b), `"subtype":"interrupt"`) {
		t.Errorf("the CLI was not sent its interrupt; its stdin: %s", b)
	}
	if info, _ := s.Agent(id); info.Status != proto.StatusClosed || info.Usage.CostUSD != 0 {
		t.Errorf("row %s, cost $%v: want closed, nothing billed", info.Status, info.Usage.CostUSD)
	}
}

// A second quit (SkipGrace) does not wait for a claude that has not ended
// on its interrupt: SIGKILL at once, and still no SIGTERM.
func TestSkipGraceKillsAClaudeDeafToItsInterrupt(t *testing.T) {
	s, log := presetSupervisor(t, "claude", func(cfg *Config) { cfg.Grace = time.Minute })
	id := spawn(t, s, "deaf sleep 300")
	waitForLine(t, s, id, "toolu_fake_bash", 30*time.Second)
	pgid := groupOf(t, s, id)
	closed := make(chan error, 1)
	go func() {
		_, err := s.Close(context.Background(), id)
		closed <- err
	}()
	waitForLine(t, s, id, "what follows arrived after the stop", 30*time.Second)
	s.SkipGrace()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("close still waits 30 s after SkipGrace, with a grace period of a minute")
	}
	assertGroupGone(t, pgid)
	if b, _ := os.ReadFile(log); strings.Contains(string(b), "\nmodel\t") {
		t.Errorf("a model call started after the close: %s", b)
	}
}
