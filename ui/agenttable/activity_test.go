package agenttable

import (
	"strings"
	"testing"
	"time"

	"github.com/subdash/subdash/supervisor/proto"
	"github.com/subdash/subdash/theme"
	"github.com/subdash/subdash/ui/internal/cells"
)

// TestSparkScale: one scale for every row, in powers of four; no output
// is the lowest glyph, any output at least the second.
func TestSparkScale(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want rune
	}{{0, '▁'}, {1, '▂'}, {63, '▂'}, {64, '▃'}, {1023, '▄'}, {1024, '▅'}, {16 << 10, '▇'}, {64 << 10, '█'}, {1 << 30, '█'}} {
		if got := SparkLevels[sparkLevel(c.n)]; got != c.want {
			t.Errorf("%d bytes: %c, want %c", c.n, got, c.want)
		}
	}
}

// TestSparkOfAgents: a running agent that wrote nothing lately is a flat
// line; one that ended has none once its output is older than the line;
// the line moves with the clock, not with snapshots.
func TestSparkOfAgents(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	run := info("aaaa0000-id", proto.StatusRunning, proto.SubmissionInfo{Seq: 1, StartedAt: at})
	if got := Spark(&run, at); got != "▁▁▁▁▁▁▁▁" {
		t.Errorf("running, silent: %q", got)
	}
	run.OutputRate = &proto.OutputRate{BucketSeconds: 15, Newest: proto.Time{Time: at}, Bytes: [proto.RateBuckets]int64{0, 0, 0, 0, 0, 0, 100, 70000}}
	if got := Spark(&run, at); got != "▁▁▁▁▁▁▃█" {
		t.Errorf("running, writing: %q", got)
	}
	if got := Spark(&run, at.Add(30*time.Second)); got != "▁▁▁▁▃█▁▁" {
		t.Errorf("30 s later without a snapshot: %q", got)
	}
	done := info("bbbb0000-id", proto.StatusCompleted, proto.SubmissionInfo{Seq: 1, StartedAt: at, EndedAt: at})
	done.OutputRate = run.OutputRate
	if got := Spark(&done, at); got != "▁▁▁▁▁▁▃█" {
		t.Errorf("ended just now: %q", got)
	}
	if got := Spark(&done, at.Add(3*time.Minute)); got != "" {
		t.Errorf("ended 3 minutes ago: %q", got)
	}
	done.OutputRate = nil
	if got := Spark(&done, at); got != "" {
		t.Errorf("ended, no rate: %q", got)
	}
}

// TestActivityColumnDropsFirst: ACTIVITY shows when the host sends rates
// and drops before every other column as the table narrows; without the
// feature it never shows.
func TestActivityColumnDropsFirst(t *testing.T) {
	agents := []proto.AgentInfo{info("aaaa0000-id", proto.StatusRunning, proto.SubmissionInfo{Seq: 1, StartedAt: now})}
	m := New(DefaultStyles(theme.Plain()))
	m.SetAgents(agents, nil)
	m.SetClock(now, 0)
	m.SetSize(120, 4)
	if strings.Contains(m.View(), "ACTIVITY") {
		t.Fatalf("ACTIVITY without the host's rates:\n%s", m.View())
	}
	m.SetActivity(true)
	head := strings.SplitN(m.View(), "\n", 2)[0]
	if !strings.Contains(head, "TIME   ACTIVITY NOW") || !strings.Contains(m.View(), "▁▁▁▁▁▁▁▁") {
		t.Fatalf("no ACTIVITY at 120:\n%s", m.View())
	}
	for w := 119; w > 30; w-- {
		m.SetSize(w, 4)
		head := strings.SplitN(m.View(), "\n", 2)[0]
		if !strings.Contains(head, "ACTIVITY") {
			if !strings.Contains(head, "TIME") || !strings.Contains(head, "#") {
				t.Fatalf("at %d another column dropped with ACTIVITY: %q", w, head)
			}
			return
		}
	}
	t.Fatal("ACTIVITY never dropped")
}

// TestActivityShowsWhereItFits: beside task names, at every width
// ACTIVITY shows when NOW keeps its MinNow cells beside it, also where
// ID, which goes before it there, had to go.
func TestActivityShowsWhereItFits(t *testing.T) {
	m := treeTable(forest(), nil)
	m.SetActivity(true)
	m.SetClock(now, 0)
	spared := false
	for w := 120; w > 40; w-- {
		m.SetSize(w, 10)
		head := strings.SplitN(m.View(), "\n", 2)[0]
		at := strings.Index(head, "NOW")
		if at < 0 {
			t.Fatalf("at %d no NOW column: %q", w, head)
		}
		msg := cells.Width(head) - cells.Width(head[:at])
		shown := strings.Contains(head, "ACTIVITY")
		if !shown && msg-(proto.RateBuckets+1) >= MinNow {
			t.Fatalf("at %d ACTIVITY dropped though NOW would keep %d cells beside it: %q", w, msg-(proto.RateBuckets+1), head)
		}
		spared = spared || shown && !strings.Contains(head, " ID ")
	}
	if !spared {
		t.Fatal("no width showed ACTIVITY without ID")
	}
}
