package supervisor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/internal/testkit"
	"github.com/subdash/subdash/supervisor/proto"
)

// A silent agent (blocked reading a FIFO, then sleep) turns stalled after
// --stall-after: stalled_since in list, needs you once with reason
// stalled (the notify command's SUBDASH_STATUS); its output clears both.
// A busy agent beside it that prints nothing but uses CPU time is not
// stalled (SPEC §11 "Stalled").
func TestStalledAgentMarkedAndClearedByOutput(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "wake")
	wake := testkit.FIFO(t, fifo)
	statuses := filepath.Join(dir, "statuses")
	s := newTestSupervisor(t, `read m; case "$m" in busy) while :; do :; done;; esac; echo started; read line < "$m"; echo "woke $line"; exec sleep 600`,
		func(c *Config) {
			c.StallAfter = time.Second
			c.NotifyCommand = `echo "$SUBDASH_STATUS $SUBDASH_AGENT_ID" >> ` + shellQuote(statuses)
		})
	silent := spawn(t, s, fifo)
	busy := spawn(t, s, "busy")
	waitForLine(t, s, silent, "started", 10*time.Second)

	eventually(t, s, 15*time.Second, "the silent agent marked stalled and needing you", func() bool {
		sum := attnSummary(t, s, silent)
		return sum.StalledSince != nil && sum.NeedsYou != nil
	})
	sum := attnSummary(t, s, silent)
	if sum.NeedsYou == nil || sum.NeedsYou.Reason != proto.ReasonStalled || !strings.Contains(sum.NeedsYou.Text, "stalled") {
		t.Fatalf("needs_you of the stalled agent = %+v, want reason stalled", sum.NeedsYou)
	}
	if sum.Status != proto.StatusRunning {
		t.Fatalf("a stalled agent's status is %s; stalled is a mark, not a status", sum.Status)
	}
	// The busy one had as long, and used CPU time all along.
	if b := attnSummary(t, s, busy); b.StalledSince != nil || b.NeedsYou != nil {
		t.Fatalf("the busy agent (CPU time, no output) is stalled: %+v", b)
	}
	b, _ := json.Marshal(listOf(s)[0])
	if !strings.Contains(string(b), `"stalled_since":"`) {
		t.Fatalf("list lacks stalled_since: %s", b)
	}
	eventually(t, s, 15*time.Second, "the notify command ran with SUBDASH_STATUS=stalled", func() bool {
		got, _ := os.ReadFile(statuses)
		return strings.Contains(string(got), "stalled "+silent)
	})
	if c := proto.CountAgents(s.Agents()); c.Stalled != 1 {
		t.Fatalf("Counts.Stalled = %d, want 1", c.Stalled)
	}

	// Output clears it.
	wake("up")
	waitForLine(t, s, silent, "woke up", 10*time.Second)
	eventually(t, s, 10*time.Second, "output cleared the stall and its needs-you", func() bool {
		sum := attnSummary(t, s, silent)
		return sum.StalledSince == nil && sum.NeedsYou == nil
	})
	// Silent again (sleep 600): stalled again, and needs you again.
	eventually(t, s, 15*time.Second, "stalled again", func() bool {
		sum := attnSummary(t, s, silent)
		return sum.StalledSince != nil && sum.NeedsYou != nil
	})
	got, _ := os.ReadFile(statuses)
	if n := strings.Count(string(got), "stalled "+silent); n < 1 || strings.Contains(string(got), busy) {
		t.Fatalf("notify command runs: %q", got)
	}
}

// --stall-after 0 marks nothing, and a negative one is refused.
func TestStallAfterResolve(t *testing.T) {
	dir := t.TempDir()
	env := Environment{Getenv: func(k string) string {
		if k == "HOME" {
			return dir
		}
		return ""
	}}
	c, err := Resolve(Options{Command: "true", Dir: dir}, env)
	if err != nil || c.StallAfter != DefaultStallAfter {
		t.Fatalf("default --stall-after = %v (%v), want %v", c.StallAfter, err, DefaultStallAfter)
	}
	off := time.Duration(0)
	if c, err = Resolve(Options{Command: "true", Dir: dir, StallAfter: &off}, env); err != nil || c.StallAfter != 0 {
		t.Fatalf("--stall-after 0 = %v (%v)", c.StallAfter, err)
	}
	neg := -time.Second
	if _, err = Resolve(Options{Command: "true", Dir: dir, StallAfter: &neg}, env); err == nil || !strings.Contains(err.Error(), "--stall-after") {
		t.Fatalf("negative --stall-after: %v", err)
	}
}
